"""Reading an uploaded JSON file strictly, for every plugin's test sets and predictions alike:
UTF-8 only (one byte-order mark tolerated), nesting bounded before parsing, then
`strict_json.loads`, so NaN, Infinity, overflowing numbers and repeated keys arrive as markers
the row checks name; every refusal is the caller's error type (`GroundTruthError`,
`PredictionsError`) with the same words.

Plain Python, no Django.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmark.scoring import strict_json
from benchmark.scoring.errors import Problem, ScoringInputError

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
        hint = " (the file is empty)" if not text.strip() else ""
        if failure.msg == "Extra data":
            hint = " (a file holds one JSON list; JSON Lines, one object per line, is not read)"
        what = failure.msg.removesuffix(" at")
        raise error(
            [
                Problem(
                    f"not valid JSON: {what} at line {failure.lineno}, column {failure.colno}{hint}"
                )
            ]
        ) from None


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
