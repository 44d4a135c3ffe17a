"""What a file that is not JSON is told (`json_file.syntax_problem`): a file cut off says so,
with its size and its complete rows; any other error names its byte and the row it falls in."""

import json

import pytest

from benchmark.scoring.errors import PredictionsError, Problem
from benchmark.scoring.json_file import read_json

pytestmark = pytest.mark.unit

CUT = "it looks cut off (an interrupted upload or copy); upload the whole file"


def refusal(data: bytes) -> Problem:
    with pytest.raises(PredictionsError) as caught:
        read_json(data, PredictionsError)
    [problem] = caught.value.problems
    return problem


def test_a_long_one_line_file_cut_mid_row_names_the_row_and_counts_the_complete_ones():
    rows = [
        {"id": f"video{n}&&0&&300&&1.0", "qa_type": "tal", "prediction": "x"} for n in range(6245)
    ]
    data = json.dumps(rows).encode()
    cut = data[: data.index(b'"video1202&&') + 9]

    assert refusal(cut) == Problem(
        f"the file ends early, at byte {len(cut):,}, inside this row (after 1,202 complete "
        f"rows): {CUT}",
        row=1202,
    )
    assert len(cut) == 84_249


def test_trailing_whitespace_after_the_cut_is_still_the_end():
    assert refusal(b'[{"id": "a"}, {"id": "b\n\n  ') == Problem(
        f"the file ends early, at byte 27, inside this row (after 1 complete row): {CUT}", row=1
    )


def test_a_file_that_is_not_a_list_ends_early_without_rows():
    assert refusal(b'{"rows": [1, 2') == Problem(f"the file ends early, at byte 14: {CUT}")


def test_a_string_never_closed_in_a_file_that_ends_as_a_list_is_a_stray_quote_not_a_cut():
    assert refusal(b'[{"id": "a"}, {"id": "b\\"}]') == Problem(
        "not valid JSON: Unterminated string starting at byte 22", row=1
    )


def test_bytes_are_counted_in_utf8_after_a_byte_order_mark():
    # The mark is 3 bytes and each "é" 2, where the parser counts one character for each.
    data = b'\xef\xbb\xbf[{"id": "\xc3\xa9\xc3\xa9"}, {"id": x}]'

    assert refusal(data) == Problem("not valid JSON: Expecting value at byte 28", row=1)


def test_a_file_of_several_lines_keeps_line_and_column():
    data = b'[\n {"id": "a"},\n {"id": "b" "qa_type": "tal"}\n]\n'

    assert refusal(data) == Problem(
        "not valid JSON: Expecting ',' delimiter at line 3, column 13, byte 29", row=1
    )


def test_an_error_between_two_rows_counts_the_rows_before_it():
    assert refusal(b'[{"id": "a"}, {"id": "b"} {"id": "c"}]') == Problem(
        "not valid JSON: Expecting ',' delimiter at byte 27, after 2 complete rows"
    )


def test_data_after_the_list_belongs_to_no_row():
    assert refusal(b'[{"id": "a"}] {"id": "b"}') == Problem(
        "not valid JSON: Extra data at byte 15 (a file holds one JSON list; JSON Lines, one "
        "object per line, is not read)"
    )


LIST = "expected a JSON list of rows, starting with '['"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", f"not JSON: the file is empty; {LIST}"),
        (b"  \n ", f"not JSON: the file is empty (it holds only whitespace); {LIST}"),
        (b"\xef\xbb\xbf", f"not JSON: the file is empty; {LIST}"),
        (
            b"id,qa_type,prediction\nVID103&&0&&300&&1.0,tal,1.0-5.0 seconds.\n",
            f"not JSON: the file starts with 'id,qa_type,prediction' (it looks like CSV); {LIST}",
        ),
        (
            b'"id","qa_type","prediction"\r\n"a","tal","x"\r\n',
            'not JSON: the file starts with \'"id","qa_type","prediction"\' (it looks like '
            f"CSV); {LIST}",
        ),
        (
            b"id\tqa_type\tprediction\na\ttal\tx\n",
            "not JSON: the file starts with 'id\\tqa_type\\tprediction' (it looks like "
            f"tab-separated values); {LIST}",
        ),
        (
            b"\n<!DOCTYPE html>\n<html><body>Sign in</body></html>",
            f"not JSON: the file starts with '<!DOCTYPE html>' (it looks like an HTML page); {LIST}",
        ),
        (
            b'<?xml version="1.0"?>\n<rows/>',
            f"not JSON: the file starts with '<?xml version=\"1.0\"?>' (it looks like XML); {LIST}",
        ),
        (
            b'{"id": "a", "qa_type": "tal", "prediction": "x"}\n'
            b'{"id": "b", "qa_type": "stg", "prediction": "y"}\n',
            "not JSON: the file holds one JSON object per line (it looks like JSON Lines); "
            f"{LIST}, with a comma between two rows and ']' after the last",
        ),
        (
            b"prediction," + b"x" * 100,
            "not JSON: the file starts with 'prediction," + "x" * 49 + "'... (111 characters) "
            f"(it looks like CSV); {LIST}",
        ),
    ],
    ids=[
        "empty",
        "whitespace",
        "byte-order-mark-alone",
        "csv",
        "csv-quoted",
        "tab-separated",
        "html-page",
        "xml",
        "json-lines",
        "long-first-line",
    ],
)
def test_a_file_that_is_plainly_not_json_says_what_it_looks_like_and_what_was_expected(
    data, message
):
    assert refusal(data) == Problem(message)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"// predictions\n[]", "not valid JSON: Expecting value at line 1, column 1, byte 1"),
        (b"prediction\nx\n", "not valid JSON: Expecting value at line 1, column 1, byte 1"),
        (
            b'{"id": "a"} {"id": "b"}',
            "not valid JSON: Extra data at byte 13 (a file holds one JSON list; JSON Lines, one "
            "object per line, is not read)",
        ),
        (
            b"[1]\n[2]",
            "not valid JSON: Extra data at line 2, column 1, byte 5 (a file holds one JSON "
            "list; JSON Lines, one object per line, is not read)",
        ),
    ],
    ids=["comment", "one-column", "two-objects-on-one-line", "two-lists"],
)
def test_any_other_file_keeps_the_parser_position(data, message):
    assert refusal(data) == Problem(message)
