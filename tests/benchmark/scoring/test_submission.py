"""Malformed predictions files: each is rejected with a message naming row, field and expectation."""

import json

import pytest

from plugins.medvidbench.scoring import PredictionsError, load_predictions

from .factories import gt_record, make_test_set, rows_for

pytestmark = pytest.mark.unit


@pytest.fixture
def test_set():
    return make_test_set(
        gt_record("tal", "0-1", [{"spans": [{"start": 0, "end": 1}]}], video_id="v1"),
        gt_record("next_action", "tying", video_id="v1"),
        gt_record("cvs_assessment", "Two structures: 1", dataset="Cholec80_CVS", video_id="v2"),
    )


def rejected(source, test_set) -> str:
    with pytest.raises(PredictionsError) as caught:
        load_predictions(source, test_set)
    return str(caught.value)


def test_a_well_formed_file_loads_in_test_set_order(test_set):
    rows = rows_for(test_set, ["0-1", "tying", "Two structures: 1"])
    assert load_predictions(json.dumps(rows).encode(), test_set) == [
        "0-1",
        "tying",
        "Two structures: 1",
    ]


def test_invalid_json_names_line_column_byte_and_row(test_set):
    assert rejected(b'[{"id": "x",\n "qa_type": }]', test_set) == (
        "The predictions file was rejected (1 problem(s)):\n"
        "  - row 0: not valid JSON: Expecting value at line 2, column 13, byte 26"
    )


CUT = "it looks cut off (an interrupted upload or copy); upload the whole file"


def problems(source, test_set) -> list[tuple[int | None, str, str]]:
    """Each problem as (row, field, message): the row 0-based, as the API gives it."""
    with pytest.raises(PredictionsError) as caught:
        load_predictions(source, test_set)
    return [(problem.row, problem.field, problem.message) for problem in caught.value.problems]


def one_line_file(test_set) -> bytes:
    return json.dumps(rows_for(test_set, ["0-1", "tying", "Two structures: 1"])).encode()


def test_a_file_cut_inside_a_string_ends_early_inside_its_row(test_set):
    data = one_line_file(test_set)
    cut = data[: data.index(b'"tying"') + 3]  # ... "prediction": "ty

    assert problems(cut, test_set) == [
        (1, "", f"the file ends early, at byte 136, inside this row (after 1 complete row): {CUT}")
    ]


def test_a_file_cut_between_rows_ends_early_after_its_complete_rows(test_set):
    data = one_line_file(test_set)
    cut = data[: data.index(b'{"id": "v2')]  # ..., "prediction": "tying"},

    assert problems(cut, test_set) == [
        (
            None,
            "",
            "the file ends early, at byte 143, after 2 complete rows (the list is never "
            f"closed): {CUT}",
        )
    ]


def test_a_syntax_error_in_a_one_line_file_names_its_byte_and_row(test_set):
    data = one_line_file(test_set).replace(b'"prediction": "tying"', b'"prediction": tying"')

    assert problems(data, test_set) == [(1, "", "not valid JSON: Expecting value at byte 134")]


def test_empty_file(test_set):
    assert problems(b"", test_set) == [
        (None, "", "not JSON: the file is empty; expected a JSON list of rows, starting with '['")
    ]


def test_a_csv_file_is_named_as_one(test_set):
    data = b"id,qa_type,prediction\nv1&&0&&300&&1.0,tal,0-1\n"

    assert problems(data, test_set) == [
        (
            None,
            "",
            "not JSON: the file starts with 'id,qa_type,prediction' (it looks like CSV); "
            "expected a JSON list of rows, starting with '['",
        )
    ]


def test_not_utf8(test_set):
    assert "the file is not UTF-8 text" in rejected(b"\xff\xfe[]", test_set)


def test_top_level_object_is_refused_as_a_merged_file(test_set):
    message = rejected(b'{"0": {"answer": "x"}}', test_set)
    assert "expected a JSON list of {id, qa_type, prediction} objects" in message
    assert "merged results file" in message


def test_a_row_removed_in_the_middle_is_named_by_the_first_row_out_of_place(test_set):
    rows = rows_for(test_set, ["0-1", "tying", "Two structures: 1"])
    del rows[1]

    assert problems(json.dumps(rows).encode(), test_set) == [
        (
            1,
            "",
            "expected 3 rows, one per test sample in test-set order, got 2: the file has no "
            "row for the test set's sample at this position, id 'v1&&0&&300&&1.0' (qa_type "
            "'next_action'): from this row on every row is one place early",
        )
    ]


def test_a_missing_row_of_a_clip_with_several_samples_is_named_by_its_qa_type(test_set):
    # v1's tal row removed: v1's next_action row (the same id) stands where tal belongs, so
    # the message names the sample the file lacks, not the two rows' identical ids.
    rows = rows_for(test_set, ["0-1", "tying", "Two structures: 1"])
    del rows[0]

    assert problems(json.dumps(rows).encode(), test_set) == [
        (
            0,
            "",
            "expected 3 rows, one per test sample in test-set order, got 2: the file has no "
            "row for the test set's sample at this position, id 'v1&&0&&300&&1.0' (qa_type "
            "'tal'): from this row on every row is one place early",
        )
    ]


def test_a_duplicated_row_is_named_as_an_extra_copy(test_set):
    rows = rows_for(test_set, ["0-1", "tying", "Two structures: 1"])
    rows.insert(1, dict(rows[0]))

    assert problems(json.dumps(rows).encode(), test_set) == [
        (
            1,
            "",
            "expected 3 rows, one per test sample in test-set order, got 4: this row holds the "
            "test set's id but qa_type 'tal', where the test set has qa_type 'next_action'; it "
            "is an extra row, a copy of the row before it: remove it and every later row lines "
            "up with the test set",
        )
    ]


def test_rows_missing_at_the_end_are_named_from_the_first_the_file_lacks(test_set):
    rows = rows_for(test_set, ["0-1", "tying", "Two structures: 1"])[:1]

    assert problems(rows, test_set) == [
        (
            1,
            "",
            "expected 3 rows, one per test sample in test-set order, got 1: the row matches the "
            "test set's first sample, so the 2 missing rows are at the end: the file has no row "
            "for this sample, id 'v1&&0&&300&&1.0' (qa_type 'next_action') or the 1 after it",
        )
    ]


def test_row_that_is_not_an_object(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[1] = "tying"
    assert "row 1: expected an object {id, qa_type, prediction}" in rejected(rows, test_set)


def test_missing_prediction_field(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    del rows[0]["prediction"]
    assert "row 0, field 'prediction': missing" in rejected(rows, test_set)


def test_a_renamed_prediction_field_is_one_problem_naming_both_keys(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[1]["pred"] = rows[1].pop("prediction")

    assert problems(rows, test_set) == [
        (
            1,
            "prediction",
            "missing (this row has 'pred', which is not a field: did you mean 'prediction'?)",
        )
    ]


def test_null_prediction(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[2]["prediction"] = None
    assert "row 2, field 'prediction': expected a string, got null" in rejected(rows, test_set)


def test_numeric_prediction(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[1]["prediction"] = 3
    assert "row 1, field 'prediction': expected a string, got a number (3)" in rejected(
        rows, test_set
    )


def test_id_that_is_a_list(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[0]["id"] = ["v1"]
    assert "row 0, field 'id': expected a string, got a list" in rejected(rows, test_set)


def test_wrong_id_at_a_position(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[2]["id"] = "zzz&&0&&1&&1.0"
    expected = test_set.samples[2].id
    message = rejected(rows, test_set)
    assert (
        f"row 2, field 'id': expected '{expected}' at this position, got 'zzz&&0&&1&&1.0'"
        in message
    )


def test_wrong_qa_type_at_a_position(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[1]["qa_type"] = "tal"
    message = rejected(rows, test_set)
    assert "row 1, field 'qa_type': expected 'next_action' at this position, got 'tal'" in message


def test_rows_sorted_by_task_are_recognised_as_reordered(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    reordered = [rows[2], rows[1], rows[0]]  # e.g. grouped by task by an inference script
    message = rejected(reordered, test_set)
    assert "the rows hold the right samples but in a different order" in message
    assert "row 0, field 'id'" in message


def test_ground_truth_fields_are_refused(test_set):
    rows = rows_for(test_set, ["a", "b", "c"])
    rows[0]["gnd"] = "0-1"
    rows[0]["struc_info"] = []
    message = rejected(rows, test_set)
    assert "row 0, field 'gnd': Podium never accepts ground truth from a submitter" in message
    assert "row 0, field 'struc_info'" in message


def test_many_problems_are_counted_not_all_listed():
    records = [gt_record("next_action", "tying", video_id=f"v{n}") for n in range(15)]
    test_set = make_test_set(*records)
    rows = rows_for(test_set, ["x"] * 15)
    for row in rows:
        row["prediction"] = 1
    message = rejected(rows, test_set)
    assert "(15 problem(s))" in message
    assert "... and 5 more problem(s) not listed." in message


def test_missing_file_is_reported_without_a_traceback(tmp_path, test_set):
    assert "cannot read the file: No such file or directory" in rejected(
        tmp_path / "nope.json", test_set
    )
