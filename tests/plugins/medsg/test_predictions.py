"""A MedSG-Bench predictions file: checked row by row, every problem named with row and field."""

import json

import pytest

from benchmark.scoring.errors import PredictionsError
from plugins.medsg.scoring.predictions import load_predictions

from .factories import item, make_test_set, rows_for

pytestmark = pytest.mark.unit


@pytest.fixture
def test_set():
    return make_test_set(
        item("referring", [0, 0, 10, 10]),
        item("patch", [0, 0, 10, 10]),
        item("multi_view", [0, 0, 10, 10], size=[200, 100]),
    )


def messages(source, test_set, **options) -> list[str]:
    with pytest.raises(PredictionsError) as caught:
        load_predictions(source, test_set, **options)
    return [str(problem) for problem in caught.value.problems]


def test_a_well_formed_file_loads_texts_and_boxes(test_set):
    rows = rows_for(test_set, ["(1,2),(3,4)", [1, 2, 3.5, 4], "no box here"])
    assert load_predictions(json.dumps(rows).encode(), test_set) == (
        "(1,2),(3,4)",
        (1.0, 2.0, 3.5, 4.0),
        "no box here",
    )


def test_a_row_removed_in_the_middle_is_named_by_the_first_row_out_of_place(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    del rows[1]

    assert messages(json.dumps(rows).encode(), test_set) == [
        "row 1: expected 3 rows, one per test item in test-set order, got 2: the file has no "
        "row for the test set's item at this position, index 1 (task 'patch'): from this row on "
        "every row is one place early"
    ]


def test_a_duplicated_row_is_named_as_an_extra_copy(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows.insert(2, dict(rows[1]))

    assert messages(json.dumps(rows).encode(), test_set) == [
        "row 2: expected 3 rows, one per test item in test-set order, got 4: this row holds "
        "index 1 (task 'patch'), where the test set has index 2 (task 'multi_view'); it is an "
        "extra row, a copy of the row before it: remove it and every later row lines up with "
        "the test set"
    ]


def test_a_row_that_differs_in_its_index_alone_names_only_the_index():
    test_set = make_test_set(
        item("patch", [0, 0, 10, 10]),
        item("patch", [0, 0, 10, 10]),
        item("referring", [0, 0, 10, 10]),
    )
    rows = rows_for(test_set, ["a", "b", "c"])
    rows.insert(1, dict(rows[0]))

    assert messages(json.dumps(rows).encode(), test_set) == [
        "row 1: expected 3 rows, one per test item in test-set order, got 4: this row holds "
        "the test set's task but index 0, where the test set has index 1; it is an extra row, "
        "a copy of the row before it: remove it and every later row lines up with the test set"
    ]


def test_rows_missing_at_the_end_are_named_from_the_first_the_file_lacks(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])[:2]

    assert messages(rows, test_set) == [
        "row 2: expected 3 rows, one per test item in test-set order, got 2: the 2 rows match "
        "the test set's first 2 items, so the missing row is at the end: the file has no row "
        "for this item, index 2 (task 'multi_view')"
    ]


def test_not_a_list(test_set):
    assert messages(b'{"0": "x"}', test_set) == [
        "expected a JSON list of {index, task, prediction} objects, one per test item in "
        "test-set order, got an object"
    ]


def test_each_row_problem_names_row_and_field(test_set):
    rows = [
        "just a string",  # row 0: not an object
        {"index": 1, "task": "patch"},  # row 1: prediction missing
        {"index": 2, "task": "multi_view", "prediction": "x", "score": 0.9},  # row 2: extra key
    ]
    assert messages(rows, test_set) == [
        "row 0: expected an object {index, task, prediction}, got a string ('just a string')",
        "row 1, field 'prediction': missing",
        "row 2, field 'score': unknown field; a row holds exactly index, task and prediction, "
        "and Podium refuses other fields instead of ignoring them; remove it",
    ]


def test_a_renamed_field_is_one_problem_naming_both_keys(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[2]["Task"] = rows[2].pop("task")
    rows[2]["output"] = rows[2].pop("prediction")

    assert messages(rows, test_set) == [
        "row 2, field 'output': unknown field; a row holds exactly index, task and "
        "prediction, and Podium refuses other fields instead of ignoring them; remove it",
        "row 2, field 'task': missing (this row has 'Task', which is not a field: did you mean "
        "'task'?)",
        "row 2, field 'prediction': missing",
    ]


def test_ground_truth_keys_are_refused_by_name(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[1]["answer"] = [0, 0, 10, 10]
    assert messages(rows, test_set) == [
        "row 1, field 'answer': Podium never accepts ground truth from a submitter; remove it"
    ]


def test_index_and_task_must_match_the_position(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[1]["index"] = 7
    rows[2]["task"] = "patch"
    assert messages(rows, test_set) == [
        "row 1, field 'index': expected 1 at this position (rows are in test-set order, "
        "numbered from 0), got 7",
        "row 2, field 'task': expected 'multi_view' at this position, got 'patch'",
    ]


def test_a_reordered_file_gets_a_hint(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[0], rows[1] = rows[1], rows[0]
    found = messages(rows, test_set)
    assert found[0].startswith("the rows hold every index once but in a different order")
    assert "row 0, field 'index': expected 0 at this position" in found[1]


def test_index_must_be_an_integer(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[0]["index"] = True
    rows[1]["index"] = "1"
    assert messages(rows, test_set) == [
        "row 0, field 'index': expected an integer (the row's 0-based position), got a boolean",
        "row 1, field 'index': expected an integer (the row's 0-based position), got a string "
        "('1')",
    ]


def test_a_prediction_is_a_text_or_four_numbers(test_set):
    rows = rows_for(test_set, [None, [1, 2, 3], {"box": [1, 2, 3, 4]}])
    assert messages(rows, test_set) == [
        "row 0, field 'prediction': expected a text answer or a box [x1, y1, x2, y2] of 4 "
        "numbers, got null",
        "row 1, field 'prediction': a box needs exactly 4 numbers [x1, y1, x2, y2], got a list "
        "of 3",
        "row 2, field 'prediction': expected a text answer or a box [x1, y1, x2, y2] of 4 "
        "numbers, got an object",
    ]


def test_a_list_box_with_a_boolean_or_a_string_is_a_file_problem(test_set):
    rows = rows_for(test_set, [[1, 2, 3, False], ["1", 2, 3, 4], "fine"])
    assert messages(rows, test_set) == [
        "row 0, field 'prediction': a box holds 4 numbers, but item 3 is a boolean",
        "row 1, field 'prediction': a box holds 4 numbers, but item 0 is a string ('1')",
    ]


def test_nan_and_control_characters(test_set):
    raw = (
        b'[{"index": 0, "task": "referring", "prediction": [1, 2, NaN, 4]},'
        b' {"index": 1, "task": "patch", "prediction": "a\\u0000b"},'
        b' {"index": 2, "task": "multi_view", "prediction": "ok"}]'
    )
    found = messages(raw, test_set)
    assert found[0].startswith("row 0, field 'prediction': holds NaN, which is not JSON")
    assert found[1].startswith("row 1, field 'prediction': holds a NUL character (U+0000)")
    assert len(found) == 2


def test_a_too_long_prediction(test_set):
    rows = rows_for(test_set, ["x" * 11, "b", "c"])
    assert messages(rows, test_set, max_prediction_chars=10) == [
        "row 0, field 'prediction': is 11 characters long; this benchmark accepts at most 10 "
        "characters per prediction"
    ]


CUT = "it looks cut off (an interrupted upload or copy); upload the whole file"


def one_line_file(test_set) -> bytes:
    return json.dumps(rows_for(test_set, ["a", [1, 2, 3, 4], "no box here"])).encode()


def test_a_file_cut_inside_a_box_ends_early_inside_its_row(test_set):
    data = one_line_file(test_set)
    cut = data[: data.index(b"[1, 2") + 5]  # ... "prediction": [1, 2

    assert messages(cut, test_set) == [
        f"row 1: the file ends early, at byte 104, inside this row (after 1 complete row): {CUT}"
    ]


def test_a_file_cut_between_rows_ends_early_after_its_complete_rows(test_set):
    data = one_line_file(test_set)
    cut = data[: data.index(b'{"index": 2')]  # ..., "prediction": [1, 2, 3, 4]},

    assert messages(cut, test_set) == [
        f"the file ends early, at byte 114, after 2 complete rows (the list is never closed): {CUT}"
    ]


def test_invalid_json_names_line_column_byte_and_row(test_set):
    assert messages(b'[{"index": 0,\n "task": }]', test_set) == [
        "row 0: not valid JSON: Expecting value at line 2, column 10, byte 24"
    ]


def test_json_lines_are_named_as_such(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    data = b"".join(json.dumps(row).encode() + b"\n" for row in rows)

    assert messages(data, test_set) == [
        "not JSON: the file holds one JSON object per line (it looks like JSON Lines); expected "
        "a JSON list of rows, starting with '[', with a comma between two rows and ']' after "
        "the last"
    ]
