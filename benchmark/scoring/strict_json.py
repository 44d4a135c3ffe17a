"""Strict JSON (RFC 8259) for uploaded files: what Python's `json` module is lenient about.

`json.loads` accepts things that are not JSON, or that JSON leaves to the reader: `NaN`,
`Infinity` and `-Infinity`; numbers that overflow a float (`1e400` becomes `inf`); an object
that repeats a key (the last value silently wins); lone UTF-16 surrogates (`"\\ud800"`); and it
recurses once per nesting level, so 100,000 `[` exhaust the stack. Each of these reached the
scorer or the database before. This module keeps the standard library's parser (well kept, fast,
with line and column in its errors) and closes the gaps with its documented hooks:

- a linear scan of the bytes for nesting depth before parsing (`nesting_problem`);
- `parse_constant` / `parse_float` / `parse_int` hooks that turn a non-finite or absurd number
  into a `Rejected` marker, so the caller can name the row and field that holds it;
- an `object_pairs_hook` that records repeated keys on the object (`JsonObject.duplicates`);
- `text_problem`, which finds NUL, other control characters and lone surrogates in a string.

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

# A predictions file is a list of flat objects: 2 levels. 32 leaves room for every mistake a
# person makes by hand (a list of lists of rows, a nested answer object) to get its own precise
# message from the row checks, and is far below the depth at which the parser's recursion
# fails (about 1,000 levels in CPython).
MAX_JSON_DEPTH = 32

# Python refuses to convert an int of more than 4,300 digits (int_max_str_digits) and raises a
# ValueError from inside the parser; a longer number is kept as a `Rejected` marker instead.
MAX_INT_DIGITS = 4_300

# Characters no text in an uploaded file may hold: every control character (Unicode category
# Cc: C0, DEL and C1) except tab, line feed and carriage return, and lone surrogates. NUL cannot
# be stored in a PostgreSQL text column, a lone surrogate cannot be encoded as UTF-8 at all, and
# the rest break terminals, e-mails and CSV files while no model answer needs them.
_REFUSED_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# The same characters as bytes, for text that is all ASCII (most files): the bytes that are not
# refused, which `bytes.translate` deletes in one pass of C, leaving only refused ones (~0.8 ms
# for a 1.4 MB file, where the search above takes ~6.5 ms).
_ALLOWED_ASCII = bytes(
    code for code in range(256) if not _REFUSED_CHARACTERS.match(chr(code)) or code > 0x7F
)

_SCAN_CHUNK = 1 << 22  # bytes per numpy step of the nesting scan: bounded temporaries
_QUOTE, _OPEN, _CLOSE = 1, 2, 3
_BYTE_KIND = np.zeros(256, dtype=np.uint8)
_BYTE_KIND[ord('"')] = _QUOTE
_BYTE_KIND[[ord("["), ord("{")]] = _OPEN
_BYTE_KIND[[ord("]"), ord("}")]] = _CLOSE
_UNSTRUCTURAL_BYTES = bytes(byte for byte in range(256) if not _BYTE_KIND[byte])


@dataclass(frozen=True, slots=True)
class Rejected:
    """A value the parser turned away, kept in place so the row that holds it can be named.

    `text` is the value as written (`NaN`, `1e400`, a 5,000-digit integer); `is_number` says
    whether it is a number JSON allows at all (a very long integer is; NaN and Infinity are not,
    and 1e400 cannot be read as one).
    """

    text: str
    is_number: bool

    def describe(self) -> str:
        """The value in words, for "expected a string, got ..." or on its own."""
        if self.is_number:
            return f"a number of {len(self.text.lstrip('-')):,} digits"
        if self.text.lstrip("-") in ("NaN", "Infinity"):
            return f"{self.text}, which is not JSON (RFC 8259 has no NaN or Infinity)"
        return f"{printable(self.text)}, a number too large to read (it overflows to infinity)"


class JsonObject(dict):
    """A decoded JSON object that remembers the keys it repeated (`duplicates`, in order)."""

    duplicates: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> JsonObject:
    result = JsonObject(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated: list[str] = []
        for key, _ in pairs:
            if key in seen and key not in repeated:
                repeated.append(key)
            seen.add(key)
        result.duplicates = tuple(repeated)
    return result


def _constant(text: str) -> Rejected:
    return Rejected(text, is_number=False)


def _float(text: str) -> float | Rejected:
    value = float(text)
    return value if math.isfinite(value) else Rejected(text, is_number=False)


def _int(text: str) -> int | Rejected:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        return Rejected(text, is_number=True)
    return int(text)


def loads(text: str) -> Any:
    """`json.loads` with the hooks above: numbers that are not finite and very long integers
    become `Rejected`, objects are `JsonObject`s. Raises `json.JSONDecodeError` as usual."""
    return json.loads(
        text,
        object_pairs_hook=_object,
        parse_constant=_constant,
        parse_float=_float,
        parse_int=_int,
    )


def nesting_problem(raw: bytes, limit: int = MAX_JSON_DEPTH) -> str | None:
    """What is wrong with the nesting of the JSON in `raw`, or None when it is at most `limit`
    levels deep. Linear in the size of the file and never recursive, so it runs before the
    parser: escape pairs are removed (a run of backslashes pairs up from the left, as the JSON
    lexer reads it), after which every quote left opens or closes a string, a bracket is inside
    a string when an odd number of quotes precede it, and the depth is a running sum (numpy, in
    chunks of bounded memory). Unbalanced brackets are left to the parser, which names their
    line and column."""
    # Only quotes and brackets matter: the others are deleted first (a few bytes per row of
    # a real file are left), in one pass of C (`bytes.translate`) rather than numpy's three.
    data = np.frombuffer(
        raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _UNSTRUCTURAL_BYTES),
        dtype=np.uint8,
    )
    quotes = depth = 0
    for start in range(0, len(data), _SCAN_CHUNK):
        kinds = _BYTE_KIND[data[start : start + _SCAN_CHUNK]]
        quote_count = np.cumsum(kinds == _QUOTE, dtype=np.int32) + quotes
        outside = (quote_count & 1) == 0
        steps = ((kinds == _OPEN) & outside).astype(np.int32) - ((kinds == _CLOSE) & outside)
        running = np.cumsum(steps, dtype=np.int32) + depth
        if int(running.max()) > limit:
            return (
                f"the JSON is nested more than {limit} levels deep; a predictions file needs "
                "2 (a list of objects), so it was not read"
            )
        quotes, depth = int(quote_count[-1]), int(running[-1])
    return None


def text_problem(text: str) -> str | None:
    """What is wrong with `text` as text a person or a model wrote, or None: the first NUL,
    other control character (tab, line feed and carriage return are fine) or lone surrogate,
    with its code point and position."""
    if text.isascii() and not text.encode("ascii").translate(None, _ALLOWED_ASCII):
        return None
    found = _REFUSED_CHARACTERS.search(text)
    if found is None:
        return None
    character = found.group()
    code = f"U+{ord(character):04X}"
    if character == "\x00":
        what = f"a NUL character ({code})"
    elif "\ud800" <= character <= "\udfff":
        what = f"an unpaired surrogate ({code}, half of a UTF-16 pair, not a character)"
    else:
        name = unicodedata.name(character, "")
        what = f"a control character ({code}{', ' + name if name else ''})"
    before = found.start()
    return (
        f"holds {what} after {before:,} character{'' if before == 1 else 's'}; text may hold "
        "no NUL, no control characters other than tab and line breaks, and no unpaired "
        "surrogates"
    )


def without_refused_characters(text: str) -> str:
    """`text` without the characters `text_problem` refuses: for a file Podium writes itself
    from a model's answers (a re-run), where refusing would fail the platform's own file."""
    return _REFUSED_CHARACTERS.sub("", text)


def printable(value: str, limit: int = 60) -> str:
    """`value` quoted for a message: control characters and surrogates escaped, and cut to
    `limit` characters with the full length noted, so a message never carries a 10 MB id."""
    quoted = repr(value[:limit])  # repr escapes what is not printable (and lone surrogates)
    if len(value) > limit:
        quoted += f"... ({len(value):,} characters)"
    return quoted
