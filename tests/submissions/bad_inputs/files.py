"""Bad predictions files: malformed JSON, lenient JSON, wrong shapes and types, misaligned rows,
ground truth, refused text, over-size, over-depth, over-length and wrong encodings.

The valid file (tests/submissions/conftest.py, `small_ground_truth`) has five rows: 0 tal,
1 stg, 2 next_action (prediction "tying"), 3 cvs_assessment, 4 video_summary_gpt.
"""

from __future__ import annotations

import json

from . import BadInput, FileProblem, Rows, dumps, file_case, raw, replacing, with_rows

TEXT_RULE = (
    "text may hold no NUL, no control characters other than tab and line breaks, and no "
    "unpaired surrogates"
)
GROUND_TRUTH = "Podium never accepts ground truth from a submitter; remove it"
UNKNOWN = (
    "unknown field; a row holds exactly id, qa_type and prediction, and Podium refuses other "
    "fields instead of ignoring them; remove it"
)
NOT_JSON = "which is not JSON (RFC 8259 has no NaN or Infinity)"
NOT_AN_OBJECT = "expected an object {id, qa_type, prediction}"
NOT_A_LIST = "expected a JSON list of {id, qa_type, prediction} objects"
DEPTH = (
    "the JSON is nested more than 32 levels deep; a predictions file needs 2 (a list of "
    "objects), so it was not read"
)
UTF16 = (
    "the file is not UTF-8 text: it holds NUL bytes, as UTF-16 or UTF-32 text does; save it "
    "as UTF-8"
)
TYING = '"prediction": "tying"'
LIST = "expected a JSON list of rows, starting with '['"
CUT = "it looks cut off (an interrupted upload or copy); upload the whole file"
# Three rows of a one-line file as a model writes them; files cut from it get exact byte counts
# whatever ids the test set was given.
THREE_ROWS = (
    b'[{"id": "a&&0&&300&&1.0", "qa_type": "tal", "prediction": "1.0-5.0 seconds."}, '
    b'{"id": "b&&0&&300&&1.0", "qa_type": "stg", "prediction": "1.0 seconds: [10, 20]"}, '
    b'{"id": "c&&0&&300&&1.0", "qa_type": "next_action", "prediction": "tying"}]'
)


def whole_file(message: str) -> FileProblem:
    return FileProblem(None, "", message)


def at(row: int, field: str, message: str) -> FileProblem:
    return FileProblem(row, field, message)


def invalid_json(id: str, content: bytes, message: str, *, row: int | None = None) -> BadInput:
    """A file the parser refuses; `row` is the row the error falls in (None: outside any)."""
    return file_case(id, raw(content), FileProblem(row, "", f"not valid JSON: {message}"))


def not_json(id: str, content: bytes, what: str, *, after: str = "") -> BadInput:
    """A file that is plainly not JSON: `what` it looks like, then what was expected."""
    return file_case(id, raw(content), whole_file(f"not JSON: {what}; {LIST}{after}"))


def renamed(key: str, field: str) -> str:
    return f"missing (this row has '{key}', which is not a field: did you mean '{field}'?)"


def cut_off(id: str, content: bytes, where: str, *, row: int | None = None) -> BadInput:
    """A file that ends early; `row` is the row it stops in (None: between two rows)."""
    return file_case(id, raw(content), FileProblem(row, "", f"the file ends early, {where}: {CUT}"))


def setting(row: int, name: str, value: object):
    def change(rows: Rows) -> None:
        rows[row][name] = value

    return with_rows(change)


def replacing_row(row: int, value: object):
    def change(rows: Rows) -> None:
        rows[row] = value

    return with_rows(change)


def removing(row: int, name: str):
    return with_rows(lambda rows: rows[row].pop(name))


def refused_text(id: str, escape: str, what: str, *, row: int = 2) -> BadInput:
    return file_case(
        id,
        replacing(TYING, f'"prediction": "ty{escape}ing"'),
        at(row, "prediction", f"holds {what} after 2 characters; {TEXT_RULE}"),
    )


def ground_truth_key(name: str) -> BadInput:
    return file_case(
        f"ground-truth-key-{name}",
        replacing(TYING, f'{TYING}, "{name}": "tying"'),
        at(2, name, GROUND_TRUTH),
    )


def utf8_bom_twice(rows: Rows) -> bytes:
    return b"\xef\xbb\xbf\xef\xbb\xbf" + dumps(rows)


CASES: list[BadInput] = [
    # --- malformed JSON ------------------------------------------------------------------------
    not_json("whitespace-only", b"  \n ", "the file is empty (it holds only whitespace)"),
    # A file that is plainly something else says what it looks like and what was expected.
    not_json(
        "a-csv-file",
        b"id,qa_type,prediction\na&&0&&300&&1.0,tal,1.0-5.0 seconds.\n",
        "the file starts with 'id,qa_type,prediction' (it looks like CSV)",
    ),
    not_json(
        "a-tab-separated-file",
        b"id\tqa_type\tprediction\na&&0&&300&&1.0\ttal\t1.0-5.0 seconds.\n",
        "the file starts with 'id\\tqa_type\\tprediction' (it looks like tab-separated values)",
    ),
    not_json(
        "an-html-page",
        b"<!doctype html>\n<html><head><title>Sign in</title></head></html>\n",
        "the file starts with '<!doctype html>' (it looks like an HTML page)",
    ),
    # A file that stops early (an interrupted upload or copy) says so, with its size and the
    # row it stops in; a one-line file's position is its byte (a column says nothing more).
    cut_off("cut-inside-the-first-row", b'[{"id": "x"', "at byte 11, inside the first row", row=0),
    cut_off(
        "only-an-opening-bracket",
        b"[",
        "at byte 1, before the first row (the list is never closed)",
    ),
    cut_off(
        "cut-inside-a-string",
        THREE_ROWS[: THREE_ROWS.index(b"tying") + 2],
        "at byte 230, inside this row (after 2 complete rows)",
        row=2,
    ),
    cut_off(
        "cut-between-rows",
        THREE_ROWS[: THREE_ROWS.index(b'{"id": "c')],
        "at byte 162, after 2 complete rows (the list is never closed)",
    ),
    cut_off(
        "cut-before-the-closing-bracket",
        THREE_ROWS[:-1] + b"\n",
        "at byte 236, after 3 complete rows (the list is never closed)",
    ),
    # The parser's message ends in "at"; the position follows once (issue 13: not "at at"). A
    # string that never closes in a file that does end as a list is a stray quote, not a cut.
    invalid_json(
        "unterminated-string",
        b'[{"id": "x\\"}]',
        "Unterminated string starting at byte 9",
        row=0,
    ),
    invalid_json(
        "trailing-comma-in-list",
        b'[{"id": "x", "qa_type": "tal", "prediction": "y"}, ]',
        "Illegal trailing comma before end of array at byte 50, after 1 complete row",
    ),
    invalid_json(
        "trailing-comma-in-object",
        b'[{"id": "x", "qa_type": "tal", "prediction": "y", }]',
        "Illegal trailing comma before end of object at byte 49",
        row=0,
    ),
    invalid_json(
        "missing-comma-between-rows",
        THREE_ROWS.replace(b"}, {", b"} {", 1),
        "Expecting ',' delimiter at byte 79, after 1 complete row",
    ),
    invalid_json(
        "single-quotes",
        b"[{'id': 'x', 'qa_type': 'tal', 'prediction': 'y'}]",
        "Expecting property name enclosed in double quotes at byte 3",
        row=0,
    ),
    invalid_json(
        "unquoted-keys",
        b'[{id: "x"}]',
        "Expecting property name enclosed in double quotes at byte 3",
        row=0,
    ),
    invalid_json(
        "single-quotes-in-a-later-row",
        THREE_ROWS.replace(b'"prediction": "tying"', b"'prediction': 'tying'"),
        "Expecting property name enclosed in double quotes at byte 214",
        row=2,
    ),
    # A file of several lines keeps the line and column an editor shows, with the byte.
    invalid_json("a-comment", b"// predictions\n[]", "Expecting value at line 1, column 1, byte 1"),
    not_json(
        "json-lines",
        b'{"id": "a&&0&&300&&1.0", "qa_type": "tal", "prediction": "x"}\n'
        b'{"id": "b&&0&&300&&1.0", "qa_type": "stg", "prediction": "y"}\n',
        "the file holds one JSON object per line (it looks like JSON Lines)",
        after=", with a comma between two rows and ']' after the last",
    ),
    invalid_json(
        "two-lists",
        b"[] []",
        "Extra data at byte 4 (a file holds one JSON list; JSON Lines, one object per line, is "
        "not read)",
    ),
    invalid_json(
        "raw-line-break-in-a-string",
        b'[{"prediction": "ty\ning"}]',
        "Invalid control character at line 1, column 20, byte 20",
        row=0,
    ),
    invalid_json(
        "invalid-escape",
        b'[{"prediction": "ty\\qing"}]',
        "Invalid \\escape at byte 20",
        row=0,
    ),
    invalid_json(
        "short-unicode-escape",
        b'[{"prediction": "ty\\u12"}]',
        "Invalid \\uXXXX escape at byte 21",
        row=0,
    ),
    invalid_json("python-true", b'[{"prediction": True}]', "Expecting value at byte 17", row=0),
    invalid_json(
        "hexadecimal-number",
        b'[{"prediction": 0x1F}]',
        "Expecting ',' delimiter at byte 18",
        row=0,
    ),
    # --- lenient JSON: numbers that are not JSON, repeated keys ---------------------------------
    file_case("nan", replacing('"tying"', "NaN"), at(2, "prediction", f"holds NaN, {NOT_JSON}")),
    file_case(
        "infinity",
        replacing('"tying"', "Infinity"),
        at(2, "prediction", f"holds Infinity, {NOT_JSON}"),
    ),
    file_case(
        "minus-infinity",
        replacing('"tying"', "-Infinity"),
        at(2, "prediction", f"holds -Infinity, {NOT_JSON}"),
    ),
    file_case(
        "overflowing-number",
        replacing('"tying"', "1e400"),
        at(2, "prediction", "holds '1e400', a number too large to read (it overflows to infinity)"),
    ),
    file_case(
        "overflowing-negative-number",
        replacing('"tying"', "-1e400"),
        at(
            2,
            "prediction",
            "holds '-1e400', a number too large to read (it overflows to infinity)",
        ),
    ),
    file_case(
        "nan-in-another-field",
        replacing(TYING, f'{TYING}, "confidence": [0.5, NaN]'),
        at(2, "confidence", f"holds NaN, {NOT_JSON}"),
    ),
    file_case(
        "file-that-is-nan",
        raw(b"NaN"),
        whole_file(f"the file holds NaN, {NOT_JSON}, not a list of rows"),
    ),
    file_case(
        "row-that-is-infinity",
        lambda rows: dumps(rows[:2])[:-1] + b", Infinity, " + dumps(rows[3:])[1:],
        at(2, "", f"{NOT_AN_OBJECT}, got Infinity, {NOT_JSON}"),
    ),
    file_case(
        "integer-of-5000-digits",
        replacing('"tying"', "7" * 5000),
        at(2, "prediction", "expected a string, got a number of 5,000 digits"),
    ),
    file_case(
        "repeated-prediction-key",
        replacing(TYING, f'{TYING}, "prediction": "cutting"'),
        at(
            2,
            "prediction",
            "appears more than once in this row; JSON objects must not repeat a key",
        ),
    ),
    file_case(
        "repeated-id-key",
        replacing('"qa_type": "next_action"', '"id": "other", "qa_type": "next_action"'),
        at(2, "id", "appears more than once in this row; JSON objects must not repeat a key"),
    ),
    # --- the file's shape ----------------------------------------------------------------------
    file_case(
        "merged-results-object",
        raw(b'{"0": {"answer": "tying", "gnd": "tying"}}'),
        whole_file(
            f"{NOT_A_LIST} (a merged results file or an object keyed by sample is not accepted)"
        ),
    ),
    file_case("top-level-string", raw(b'"tying"'), whole_file(NOT_A_LIST)),
    file_case("top-level-number", raw(b"42"), whole_file(NOT_A_LIST)),
    file_case("top-level-null", raw(b"null"), whole_file(NOT_A_LIST)),
    file_case(
        "empty-list",
        raw(b"[]"),
        whole_file("expected 5 rows, one per test sample in test-set order, got 0"),
    ),
    # A file with rows missing or extra names the first row that no longer lines up with the
    # test set, and what the test set holds there.
    file_case(
        "the-last-row-missing",
        with_rows(lambda rows: rows.pop()),
        at(
            4,
            "",
            "expected 5 rows, one per test sample in test-set order, got 4: the 4 rows match "
            "the test set's first 4 samples, so the missing row is at the end: the file has no "
            "row for this sample, id '{id4}' (qa_type 'video_summary_gpt')",
        ),
    ),
    file_case(
        "a-row-missing-in-the-middle",
        with_rows(lambda rows: rows.pop(2)),
        at(
            2,
            "",
            "expected 5 rows, one per test sample in test-set order, got 4: the file has no "
            "row for the test set's sample at this position, id '{id2}' (qa_type "
            "'next_action'): from this row on every row is one place early",
        ),
    ),
    file_case(
        "a-row-duplicated",
        with_rows(lambda rows: rows.insert(2, dict(rows[1]))),
        at(
            2,
            "",
            "expected 5 rows, one per test sample in test-set order, got 6: this row holds id "
            "'{id1}' (qa_type 'stg'), where the test set has id '{id2}' (qa_type "
            "'next_action'); it is an extra row, a copy of the row before it: remove it and "
            "every later row lines up with the test set",
        ),
    ),
    # Where the row and the test set share a field, the message names only the one that
    # differs (a clip's samples share an id and differ in qa_type).
    file_case(
        "an-extra-row-that-differs-only-in-its-id",
        with_rows(lambda rows: rows.insert(2, {**rows[1], "qa_type": "next_action"})),
        at(
            2,
            "",
            "expected 5 rows, one per test sample in test-set order, got 6: this row holds the "
            "test set's qa_type but id '{id1}', where the test set has id '{id2}'; it is an "
            "extra row: remove it and every later row lines up with the test set",
        ),
    ),
    file_case(
        "a-row-too-many-at-the-end",
        with_rows(lambda rows: rows.append(dict(rows[-1]))),
        at(
            5,
            "",
            "expected 5 rows, one per test sample in test-set order, got 6: the first 5 rows "
            "match every sample of the test set, so the extra row is at the end, a copy of the "
            "row before it: remove this row",
        ),
    ),
    file_case(
        "list-of-lists",
        lambda rows: json.dumps([rows]).encode(),
        at(
            0,
            "",
            "expected 5 rows, one per test sample in test-set order, got 1: this row is a list "
            "of 5, not an object {id, qa_type, prediction}, where the test set has id '{id0}' "
            "(qa_type 'tal'); 4 rows are missing or the rows are out of order (the later rows "
            "do not all line up either)",
        ),
    ),
    file_case("row-is-a-string", replacing_row(2, "tying"), at(2, "", NOT_AN_OBJECT)),
    file_case("row-is-null", replacing_row(2, None), at(2, "", NOT_AN_OBJECT)),
    file_case(
        "row-is-a-list",
        with_rows(lambda rows: rows.__setitem__(2, list(rows[2].values()))),  # [id, qa_type, p]
        at(2, "", NOT_AN_OBJECT),
    ),
    # --- fields: missing, wrong types ----------------------------------------------------------
    file_case("id-missing", removing(2, "id"), at(2, "id", "missing")),
    file_case("qa-type-missing", removing(2, "qa_type"), at(2, "qa_type", "missing")),
    file_case("prediction-missing", removing(2, "prediction"), at(2, "prediction", "missing")),
    file_case(
        "prediction-null",
        setting(2, "prediction", None),
        at(2, "prediction", "expected a string, got null"),
    ),
    file_case(
        "prediction-number",
        setting(2, "prediction", 3),
        at(2, "prediction", "expected a string, got a number (3)"),
    ),
    file_case(
        "prediction-boolean",
        setting(2, "prediction", True),
        at(2, "prediction", "expected a string, got a boolean"),
    ),
    file_case(
        "prediction-list",
        setting(2, "prediction", ["tying"]),
        at(2, "prediction", "expected a string, got a list"),
    ),
    file_case(
        "prediction-object",
        setting(2, "prediction", {"text": "tying"}),
        at(2, "prediction", "expected a string, got an object"),
    ),
    file_case("id-number", setting(0, "id", 7), at(0, "id", "expected a string, got a number (7)")),
    file_case(
        "qa-type-null",
        setting(1, "qa_type", None),
        at(1, "qa_type", "expected a string, got null"),
    ),
    # --- misaligned rows -----------------------------------------------------------------------
    file_case(
        "wrong-id-at-a-position",
        setting(3, "id", "someone-else&&0&&1&&1.0"),
        at(3, "id", "expected '{id3}' at this position, got 'someone-else&&0&&1&&1.0'"),
    ),
    file_case(
        "wrong-qa-type-at-a-position",
        setting(1, "qa_type", "tal"),
        at(1, "qa_type", "expected 'stg' at this position, got 'tal'"),
    ),
    file_case(
        "two-rows-swapped",
        with_rows(lambda rows: rows.__setitem__(slice(0, 2), [rows[1], rows[0]])),
        whole_file(
            "the rows hold the right samples but in a different order; predictions are matched "
            "by position, so write them in the test set's order (do not group or sort them by "
            "task)"
        ),
        at(0, "id", "expected '{id0}' at this position, got '{id1}'"),
        at(0, "qa_type", "expected 'tal' at this position, got 'stg'"),
        at(1, "id", "expected '{id1}' at this position, got '{id0}'"),
        at(1, "qa_type", "expected 'stg' at this position, got 'tal'"),
    ),
    file_case(
        "a-30000-character-id",
        setting(0, "id", "v" * 30_000),
        at(
            0,
            "id",
            "expected '{id0}' at this position, got '" + "v" * 60 + "'... (30,000 characters)",
        ),
    ),
    # --- ground truth and unknown fields -------------------------------------------------------
    *(
        ground_truth_key(name)
        for name in ("gnd", "struc_info", "conversations", "question", "answer", "metadata")
    ),
    file_case(
        "unknown-field",
        replacing(TYING, f'{TYING}, "score": 0.9'),
        at(2, "score", UNKNOWN),
    ),
    # A key that looks like a missing field is told with it, in one problem.
    file_case(
        "misspelt-prediction-key",
        replacing(TYING, '"predictions": "tying"'),
        at(2, "prediction", renamed("predictions", "prediction")),
    ),
    file_case(
        "prediction-key-cut-short",
        replacing(TYING, '"pred": "tying"'),
        at(2, "prediction", renamed("pred", "prediction")),
    ),
    file_case(
        "qa-type-key-renamed",
        replacing('"qa_type": "next_action"', '"type": "next_action"'),
        at(2, "qa_type", renamed("type", "qa_type")),
    ),
    # A key unlike any missing field is unknown, and the field is missing: two problems.
    file_case(
        "prediction-key-another-word",
        replacing(TYING, '"output": "tying"'),
        at(2, "output", UNKNOWN),
        at(2, "prediction", "missing"),
    ),
    # --- refused characters --------------------------------------------------------------------
    refused_text("nul-in-a-prediction", "\\u0000", "a NUL character (U+0000)"),
    refused_text(
        "lone-high-surrogate",
        "\\ud83d",
        "an unpaired surrogate (U+D83D, half of a UTF-16 pair, not a character)",
    ),
    refused_text(
        "lone-low-surrogate",
        "\\ude00",
        "an unpaired surrogate (U+DE00, half of a UTF-16 pair, not a character)",
    ),
    refused_text("escape-character", "\\u001b", "a control character (U+001B)"),
    refused_text("form-feed", "\\f", "a control character (U+000C)"),
    refused_text("delete-character", "\\u007f", "a control character (U+007F)"),
    refused_text("c1-next-line", "\\u0085", "a control character (U+0085)"),
    file_case(
        "nul-in-an-id",
        replacing('"qa_type": "next_action"', '"qa_type": "next\\u0000action"'),
        at(2, "qa_type", f"holds a NUL character (U+0000) after 4 characters; {TEXT_RULE}"),
    ),
    file_case(
        "nul-in-a-key",
        replacing(TYING, f'{TYING}, "x\\u0000": "y"'),
        at(2, "x\\x00", f"the key holds a NUL character (U+0000) after 1 character; {TEXT_RULE}"),
    ),
    # --- size, depth, length -------------------------------------------------------------------
    file_case(
        "over-the-upload-cap",
        lambda rows: dumps(rows) + b" " * 1_100_000,
        whole_file("The file is 1.1 MB; this benchmark accepts at most 1 MB."),
        benchmark={"max_upload_mb": 1},
    ),
    file_case(
        "nested-100000-levels",
        raw(b"[" * 100_000 + b"]" * 100_000),
        whole_file(DEPTH),
    ),
    file_case(
        "nested-33-levels-in-a-row",
        replacing('"tying"', "[" * 33 + "]" * 33),
        whole_file(DEPTH),
    ),
    file_case(
        "prediction-over-the-length-limit",
        setting(4, "prediction", "x" * 20_001),
        at(
            4,
            "prediction",
            "is 20,001 characters long; this benchmark accepts at most 20,000 characters per "
            "prediction",
        ),
    ),
    file_case(
        "a-one-million-character-prediction",
        setting(4, "prediction", "The surgeon dissects. " * 45_455),
        at(
            4,
            "prediction",
            "is 1,000,010 characters long; this benchmark accepts at most 20,000 characters "
            "per prediction",
        ),
    ),
    # --- encodings -----------------------------------------------------------------------------
    file_case(
        "utf16-with-byte-order-mark",
        lambda rows: dumps(rows).decode().encode("utf-16"),
        whole_file(
            "the file is not UTF-8 text: it starts with a UTF-16 byte-order mark; save it as UTF-8"
        ),
    ),
    file_case(
        "utf16-big-endian-with-byte-order-mark",
        lambda rows: b"\xfe\xff" + dumps(rows).decode().encode("utf-16-be"),
        whole_file(
            "the file is not UTF-8 text: it starts with a UTF-16 byte-order mark; save it as UTF-8"
        ),
    ),
    file_case(
        "utf16-without-byte-order-mark",
        lambda rows: dumps(rows).decode().encode("utf-16-le"),
        whole_file(UTF16),
    ),
    file_case(
        "utf32-with-byte-order-mark",
        lambda rows: dumps(rows).decode().encode("utf-32"),
        whole_file(
            "the file is not UTF-8 text: it starts with a UTF-32 byte-order mark; save it as UTF-8"
        ),
    ),
    file_case(
        "two-utf8-byte-order-marks",
        utf8_bom_twice,
        whole_file("the file starts with two byte-order marks (U+FEFF); save it as UTF-8"),
    ),
    file_case(
        "latin1-byte",
        lambda rows: dumps(rows).replace(b"tying", b"ty\xefng"),
        whole_file(
            "the file is not UTF-8 text: byte 0xef at line 1 cannot be read as UTF-8; save the "
            "file as UTF-8"
        ),
    ),
    file_case(
        "overlong-utf8",
        lambda rows: dumps(rows).replace(b"tying", b"ty\xc0\xafng"),
        whole_file(
            "the file is not UTF-8 text: byte 0xc0 at line 1 cannot be read as UTF-8; save the "
            "file as UTF-8"
        ),
    ),
    file_case(
        "gzip-file",
        raw(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"),
        whole_file(
            "the file is not UTF-8 text: byte 0x8b at line 1 cannot be read as UTF-8; save the "
            "file as UTF-8"
        ),
    ),
]
