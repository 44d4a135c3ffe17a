"""A demo clinical QA predictions file: matched by id, every id once, every problem named with
its row, its field and what was expected; nothing is read while any problem remains."""

import pytest

from benchmark.scoring.errors import PredictionsError
from plugins.clinicalqa.scoring import load_predictions

from .factories import as_bytes, make_test_set, mc, oe, rows_for

pytestmark = pytest.mark.unit


@pytest.fixture
def test_set():
    return make_test_set(mc("mc-1", "A"), mc("mc-2", "B"), oe("oe-1"))


def problems(source, test_set, **options) -> list[str]:
    with pytest.raises(PredictionsError) as caught:
        load_predictions(source, test_set, **options)
    return [str(problem) for problem in caught.value.problems]


def test_rows_are_matched_by_id_in_any_order(test_set):
    rows = rows_for({"oe-1": "Rest for a week.", "mc-2": "Answer: B", "mc-1": ""})
    assert load_predictions(as_bytes(rows), test_set) == ("", "Answer: B", "Rest for a week.")


def test_file_level_problems(test_set):
    assert problems(b'{"mc-1": "A"}', test_set) == [
        'expected a JSON list of {"id": ..., "answer": ...} objects, one per test item, got '
        "an object"
    ]
    assert problems(b"[1, 2", test_set) == [
        "the file ends early, at byte 5, after 2 complete rows (the list is never closed): it "
        "looks cut off (an interrupted upload or copy); upload the whole file"
    ]


def test_a_csv_file_is_named_as_one(test_set):
    assert problems(b"id,answer\nmc-1,A\nmc-2,B\noe-1,Rest.\n", test_set) == [
        "not JSON: the file starts with 'id,answer' (it looks like CSV); expected a JSON list "
        "of rows, starting with '['"
    ]


CUT = "it looks cut off (an interrupted upload or copy); upload the whole file"
ONE_LINE_FILE = as_bytes(rows_for({"mc-1": "A", "mc-2": "Answer: B", "oe-1": "Rest."}))


def test_a_file_cut_inside_a_string_ends_early_inside_its_row(test_set):
    cut = ONE_LINE_FILE[: ONE_LINE_FILE.index(b"Answer: B") + 3]

    assert problems(cut, test_set) == [
        f"row 1: the file ends early, at byte 61, inside this row (after 1 complete row): {CUT}"
    ]


def test_a_file_cut_between_rows_ends_early_after_its_complete_rows(test_set):
    cut = ONE_LINE_FILE[: ONE_LINE_FILE.index(b'{"id": "oe-1"')]

    assert problems(cut, test_set) == [
        f"the file ends early, at byte 71, after 2 complete rows (the list is never closed): {CUT}"
    ]


def test_missing_ids_are_named_in_one_file_level_problem(test_set):
    assert problems(as_bytes(rows_for({"mc-2": "B"})), test_set) == [
        "no row answers 2 of the 3 test items (the file has 1 row): 'mc-1', 'oe-1'; the file "
        "needs one row per test item, every id exactly once (an empty answer is allowed)"
    ]


def test_a_row_removed_in_the_middle_is_named_by_its_id(test_set):
    rows = rows_for({"mc-1": "A", "mc-2": "B", "oe-1": "Rest."})
    del rows[1]

    assert problems(as_bytes(rows), test_set) == [
        "no row answers 1 of the 3 test items (the file has 2 rows): 'mc-2'; the file needs "
        "one row per test item, every id exactly once (an empty answer is allowed)"
    ]


def test_a_duplicated_row_names_both_rows_counted_from_1_and_from_0(test_set):
    rows = rows_for({"mc-1": "A", "mc-2": "B", "oe-1": "Rest."})
    rows.insert(2, dict(rows[1]))

    with pytest.raises(PredictionsError) as caught:
        load_predictions(as_bytes(rows), test_set)
    assert [(p.row, p.field, p.message) for p in caught.value.problems] == [
        (
            2,
            "id",
            "the id 'mc-2' was answered in row 2 (0-based 1) already; every id appears exactly "
            "once, so remove one of the two rows",
        )
    ]


def test_more_than_five_missing_ids_are_counted():
    test_set = make_test_set(*(mc(f"mc-{n}") for n in range(8)))
    assert problems(b"[]", test_set) == [
        "no row answers 8 of the 8 test items (the file has 0 rows): 'mc-0', 'mc-1', 'mc-2', "
        "'mc-3', 'mc-4' and 3 more; the file needs one row per test item, every id exactly "
        "once (an empty answer is allowed)"
    ]


def test_every_row_problem_is_named_with_row_field_and_id(test_set):
    rows = [
        {"id": "mc-1", "answer": "A"},
        {"id": "mc-1", "answer": "B"},
        {"id": "mc-9", "answer": "C"},
        {"id": 2, "answer": "C"},
        {"id": "mc-2", "answer": 2},
        {"id": "oe-1", "answer": "Rest.", "confidence": 0.9, "reference": "Rest."},
        ["oe-1", "Rest."],
        {"answer": "Rest."},
    ]
    assert problems(as_bytes(rows), test_set) == [
        "row 1, field 'id': the id 'mc-1' was answered in row 1 (0-based 0) already; every id "
        "appears exactly once, so remove one of the two rows",
        "row 2, field 'id': no test item has the id 'mc-9'",
        "row 3, field 'id': expected the item's id as a string, got a number (2)",
        "row 4, field 'answer': expected the model's answer as text (a string; for a "
        'multiple-choice item, e.g. "B" or "Answer: B"), got a number (2) (the row of id '
        "'mc-2')",
        "row 5, field 'confidence': unknown field; a row holds exactly id and answer, and "
        "Podium refuses other fields instead of ignoring them; remove it (the row of id "
        "'oe-1')",
        "row 5, field 'reference': is a test-set field; a predictions row holds exactly id "
        "and answer (Podium never accepts test-set content from a submitter); remove it (the "
        "row of id 'oe-1')",
        'row 6: expected an object {"id", "answer"}, got a list of 2',
        "row 7, field 'id': missing",
    ]


def test_a_renamed_answer_field_is_one_problem_naming_both_keys(test_set):
    rows = rows_for({"mc-1": "A", "mc-2": "B", "oe-1": "Rest."})
    rows[1]["answers"] = rows[1].pop("answer")

    assert problems(as_bytes(rows), test_set) == [
        "row 1, field 'answer': missing (this row has 'answers', which is not a field: did you "
        "mean 'answer'?) (the row of id 'mc-2')"
    ]


def test_answers_are_bounded_and_hold_no_control_characters(test_set):
    rows = rows_for({"mc-1": "A" * 11, "mc-2": "B\x07", "oe-1": "fine"})
    assert problems(as_bytes(rows), test_set, max_prediction_chars=10) == [
        "row 0, field 'answer': is 11 characters long; this benchmark accepts at most 10 "
        "characters per answer (the row of id 'mc-1')",
        "row 1, field 'answer': holds a control character (U+0007) after 1 character; text "
        "may hold no NUL, no control characters other than tab and line breaks, and no "
        "unpaired surrogates (the row of id 'mc-2')",
    ]
    rows[1]["answer"] = "B\tC\n"  # tab and line breaks are text
    assert load_predictions(as_bytes(rows), test_set, max_prediction_chars=11) == (
        "A" * 11,
        "B\tC\n",
        "fine",
    )


def test_strict_json_repeated_keys_and_nan(test_set):
    data = (
        b'[{"id": "mc-1", "answer": "A", "answer": "B"}, {"id": "mc-2", "answer": NaN},'
        b' {"id": "oe-1", "answer": "Rest."}]'
    )
    assert problems(data, test_set) == [
        "row 0, field 'answer': appears more than once in this row; JSON objects must not "
        "repeat a key (the row of id 'mc-1')",
        "row 1, field 'answer': holds NaN, which is not JSON (RFC 8259 has no NaN or "
        "Infinity) (the row of id 'mc-2')",
    ]


def test_problems_past_ten_are_counted_not_listed():
    test_set = make_test_set(*(mc(f"mc-{n}") for n in range(15)))
    rows = [{"id": f"mc-{n}", "answer": n} for n in range(15)]
    with pytest.raises(PredictionsError) as caught:
        load_predictions(as_bytes(rows), test_set)
    assert len(caught.value.problems) == 10
    assert caught.value.total == 15
