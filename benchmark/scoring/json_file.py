"""Reading an uploaded JSON file strictly, for every plugin's test sets and predictions alike:
UTF-8 only (one byte-order mark tolerated), nesting bounded before parsing, then
`strict_json.loads`, so NaN, Infinity, overflowing numbers and repeated keys arrive as markers
the row checks name; every refusal is the caller's error type (`GroundTruthError`,
`PredictionsError`) with the same words. A file that is plainly something else (empty, CSV, an
HTML page, JSON Lines) is named for what it looks like and what was expected
(`not_json_problem`); any other file that is not JSON is named by the byte where the parser
stopped and the row that byte falls in (`syntax_problem`); one that stops in the middle of a
value, as an interrupted upload or copy leaves it, is said to be cut off.

Plain Python, no Django.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

from benchmark.scoring import strict_json
from benchmark.scoring.errors import Problem, ScoringInputError

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace (RFC 8259, 2)

# What every reader of `read_json` expects, as a message says it.
LIST_EXPECTED = "a JSON list of rows, starting with '['"

_BYTE_ORDER_MARKS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def read_json(
    source: bytes | str | Path | list[Any], error: type[ScoringInputError]
) -> tuple[Any, bytes | None]:
    """The decoded JSON of `source` (a path, the file's bytes, or an already decoded list) and
    the raw bytes when there were any; `error` (GroundTruthError, PredictionsError) otherwise."""
    if isinstance(source, list):
        return source, None
    if isinstance(source, Path | str):
        try:
            source = Path(source).read_bytes()
        except OSError as failure:
            raise error([Problem(f"cannot read the file: {failure.strerror}")]) from None
    raw = bytes(source)
    text = _utf8_text(raw, error)
    if text.startswith("\ufeff"):
        raise error(
            [Problem("the file starts with two byte-order marks (U+FEFF); save it as UTF-8")]
        )
    nesting = strict_json.nesting_problem(raw)
    if nesting:
        raise error([Problem(nesting)])
    try:
        return strict_json.loads(text), raw
    except json.JSONDecodeError as failure:
        raise error([syntax_problem(failure, text, raw)]) from None


def syntax_problem(failure: json.JSONDecodeError, text: str, raw: bytes) -> Problem:
    """What `failure` (the parser's error on `text`, the UTF-8 decoding of `raw`) means, in
    words. A file that stops inside a value or before its list is closed "ends early" and
    looks cut off: the message gives its size and how many rows were complete, and carries
    the row it stops in. Any other error gives the byte where the parser stopped (line and
    column too when the file has several lines: a predictions file is often one line of a
    megabyte, where a column says nothing) and carries the row that byte falls in, or says
    how many rows came before it when it falls between two."""
    not_json = not_json_problem(failure, text)
    if not_json is not None:
        return not_json
    place = _place_in_list(text, failure.pos)
    if ends_early(failure, text):
        cut = "it looks cut off (an interrupted upload or copy); upload the whole file"
        if place is None:
            return Problem(f"the file ends early, at byte {len(raw):,}: {cut}")
        complete, inside = place
        if inside:
            where = (
                f"inside this row (after {_rows(complete)})" if complete else "inside the first row"
            )
            return Problem(
                f"the file ends early, at byte {len(raw):,}, {where}: {cut}", row=complete
            )
        where = f"after {_rows(complete)}" if complete else "before the first row"
        return Problem(
            f"the file ends early, at byte {len(raw):,}, {where} (the list is never closed): {cut}"
        )
    # The parser counts characters from after the byte-order mark; a message counts bytes,
    # from 1 (the file's size is its last byte).
    mark = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    byte = mark + len(text[: failure.pos].encode("utf-8")) + 1
    where = f"byte {byte:,}"
    if "\n" in text.rstrip():
        where = f"line {failure.lineno:,}, column {failure.colno:,}, {where}"
    message = f"not valid JSON: {failure.msg.removesuffix(' at')} at {where}"
    if failure.msg == "Extra data":
        message += " (a file holds one JSON list; JSON Lines, one object per line, is not read)"
    if place is None:
        return Problem(message)
    complete, inside = place
    if inside:
        return Problem(message, row=complete)
    return Problem(f"{message}, after {_rows(complete)}")


def not_json_problem(failure: json.JSONDecodeError, text: str) -> Problem | None:
    """The problem of a file that is plainly not JSON at all, told by how it starts: empty,
    a table (a first line with commas or tabs that does not open a list or an object), a web
    page or XML (`<`), or JSON Lines (an object per line); None for anything else, whose
    parser position says more. Every reader of `read_json` expects a list, so each message
    says what one looks like."""
    expected = f"expected {LIST_EXPECTED}"
    start = text.lstrip(" \t\n\r")  # JSON's whitespace (RFC 8259, 2)
    if not start:
        what = "the file is empty" + (" (it holds only whitespace)" if text else "")
        return Problem(f"not JSON: {what}; {expected}")
    first_line = start.split("\n", 1)[0].rstrip("\r")
    starts = f"the file starts with {strict_json.printable(first_line, 60)}"
    if start.startswith("<"):
        kind = "XML" if start[:5].lower() == "<?xml" else "an HTML page"
        return Problem(f"not JSON: {starts} (it looks like {kind}); {expected}")
    if start[0] not in "[{" and ("," in first_line or "\t" in first_line):
        tabs = first_line.count("\t") > first_line.count(",")
        kind = "tab-separated values" if tabs else "CSV"
        return Problem(f"not JSON: {starts} (it looks like {kind}); {expected}")
    if start[0] == "{" and failure.msg == "Extra data" and _is_json_lines(text, failure.pos):
        return Problem(
            "not JSON: the file holds one JSON object per line (it looks like JSON Lines); "
            f"{expected}, with a comma between two rows and ']' after the last"
        )
    return None


def _is_json_lines(text: str, position: int) -> bool:
    """Whether the extra data at `position` (the parser's, past the whitespace after the
    first value) starts another object on a later line."""
    before = text[:position]
    gap = before[len(before.rstrip(" \t\n\r")) :]
    return "\n" in gap and text.startswith("{", position)


def ends_early(failure: json.JSONDecodeError, text: str) -> bool:
    """Whether the parser ran out of text: it stopped at the end (trailing whitespace aside),
    or inside a string that never closes, unless the file ends as a list or object does (then
    a quote is more likely escaped, `"...\\"]`, than the file cut off)."""
    end = text.rstrip(" \t\n\r")  # JSON's whitespace (RFC 8259, 2)
    if failure.pos >= len(end):
        return True
    return failure.msg.startswith("Unterminated string") and not end.endswith(("]", "}"))


def _place_in_list(text: str, position: int) -> tuple[int, bool] | None:
    """Where `position` falls in a file whose top-level value is a list: (how many rows are
    complete before it, whether it falls inside the next row rather than between two rows).
    None when the file is not a list, or when `position` is past the list's end. One linear
    pass over the rows (`raw_decode`, each row once), run only on a refused file."""
    decoder = json.JSONDecoder()
    index = _skip_whitespace(text, 0)
    if not text.startswith("[", index):
        return None
    index = _skip_whitespace(text, index + 1)
    complete = 0
    while index <= position and index < len(text):
        if text[index] == "]":
            return None
        try:
            _, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            return complete, True
        if end > position:
            return complete, True
        complete += 1
        index = _skip_whitespace(text, end)
        if not text.startswith(",", index):
            if text.startswith("]", index) and index < position:
                return None
            break
        index = _skip_whitespace(text, index + 1)
    return complete, False


def _skip_whitespace(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]: `*` always matches


def _rows(count: int) -> str:
    return f"{count:,} complete row{'' if count == 1 else 's'}"


def _utf8_text(raw: bytes, error: type[ScoringInputError]) -> str:
    for mark, encoding in _BYTE_ORDER_MARKS:
        if raw.startswith(mark):
            raise error(
                [
                    Problem(
                        f"the file is not UTF-8 text: it starts with a {encoding} byte-order "
                        "mark; save it as UTF-8"
                    )
                ]
            )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as failure:
        line = raw.count(b"\n", 0, failure.start) + 1
        raise error(
            [
                Problem(
                    f"the file is not UTF-8 text: byte 0x{raw[failure.start]:02x} at line {line} "
                    "cannot be read as UTF-8; save the file as UTF-8"
                )
            ]
        ) from None
    if "\x00" in text:
        raise error(
            [
                Problem(
                    "the file is not UTF-8 text: it holds NUL bytes, as UTF-16 or UTF-32 text "
                    "does; save it as UTF-8"
                )
            ]
        )
    return text


def describe(value: Any) -> str:
    """A JSON value's kind in words, for "expected ..., got ..." messages."""
    if isinstance(value, strict_json.Rejected):
        return value.describe()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        text = str(value)
        return f"a number ({text if len(text) <= 40 else f'{text[:40]}..., {len(text):,} digits'})"
    if isinstance(value, str):
        return f"a string ({strict_json.printable(value, 40)})"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def first_rejected(value: Any) -> strict_json.Rejected | None:
    """The first `Rejected` marker in `value`, however deep (bounded by MAX_JSON_DEPTH)."""
    if isinstance(value, strict_json.Rejected):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = first_rejected(item)
            if found is not None:
                return found
    return None


def field_name(name: str) -> str:
    """A key as a message names it: itself when short and printable, else escaped and cut."""
    if len(name) <= 60 and name.isprintable():
        return name
    escaped = name[:40].encode("unicode_escape", "backslashreplace").decode("ascii")
    return escaped if len(name) <= 40 else f"{escaped}... ({len(name):,} characters)"
