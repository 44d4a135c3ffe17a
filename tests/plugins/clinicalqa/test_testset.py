"""The demo clinical QA test set: read strictly, every problem named with its row and field."""

import json

import pytest

from benchmark.scoring.errors import GroundTruthError
from plugins.clinicalqa.scoring import load_testset

from .factories import OPTIONS, as_bytes, make_test_set, mc, oe

pytestmark = pytest.mark.unit


def problems(records) -> list[str]:
    source = records if isinstance(records, bytes) else as_bytes(records)
    with pytest.raises(GroundTruthError) as caught:
        load_testset(source)
    return [str(problem) for problem in caught.value.problems]


def test_a_good_file_reads_both_kinds_of_item():
    test_set = make_test_set(mc("mc-1", "C"), oe("oe-1", "Rest."), mc("mc-2", "A", topic="x"))
    assert len(test_set) == 3
    assert test_set.ids == ("mc-1", "oe-1", "mc-2")
    first, second, third = test_set.items
    assert (first.index, first.category, first.answer) == (0, "multiple_choice", "C")
    assert first.options == ("the liver", "the kidneys", "the lungs", "the heart")
    assert first.reference is None
    assert (second.category, second.reference, second.options, second.answer) == (
        "open_ended",
        "Rest.",
        None,
        None,
    )
    assert test_set.positions == {"mc-1": 0, "oe-1": 1, "mc-2": 2}
    assert test_set.category_counts() == {"multiple_choice": 2, "open_ended": 1}
    assert test_set.of_category("open_ended") == (second,)
    assert third.answer == "A"  # the unknown key "topic" is metadata, ignored


def test_options_are_read_in_letter_order_whatever_the_file_order():
    record = mc("mc-1", options={"D": "d", "B": "b", "A": "a", "C": "c"})
    assert make_test_set(record).items[0].options == ("a", "b", "c", "d")


def test_the_checksum_is_the_files_and_the_canonical_form_ignores_layout():
    records = [mc("mc-1"), oe("oe-1")]
    compact, spaced = as_bytes(records), json.dumps(records, indent=2).encode()
    first, second = load_testset(compact), load_testset(spaced)
    assert first.checksum != second.checksum
    assert first.canonical_json() == second.canonical_json()
    assert load_testset(records).checksum == load_testset(records).checksum


LIST = "expected a JSON list of rows, starting with '['"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", f"not JSON: the file is empty; {LIST}"),
        (b"{}", "expected a JSON list of {id, category, question, ...} objects, got an object"),
        (
            b'[{"id": "mc-1", "category": "multiple_choice"}, {"id": "mc-2", "categ',
            "row 1: the file ends early, at byte 69, inside this row (after 1 complete row): "
            "it looks cut off (an interrupted upload or copy); upload the whole file",
        ),
        (b"[]", "the file holds no items"),
        (
            b"NaN",
            "the file holds NaN, which is not JSON (RFC 8259 has no NaN or Infinity), not a "
            "list of items",
        ),
    ],
)
def test_file_level_problems(data, expected):
    assert problems(data) == [expected]


def test_every_row_problem_is_named_with_row_and_field():
    records = [
        "not an object",
        {"category": "multiple_choice", "question": "Q?", "options": OPTIONS, "answer": "B"},
        mc("has space"),
        mc("mc-3", category="quiz"),
        mc("mc-4", question="   "),
        mc("mc-5", answer="b"),
        mc("mc-6", options={"A": "a", "B": "b", "C": "c"}),
        mc("mc-7", options={"A": "a", "B": "", "C": "c", "D": 4}),
        oe("oe-1", reference=None),
    ]
    assert problems(records) == [
        "row 0: expected an object {id, category, question, ...}, got a string ('not an object')",
        "row 1, field 'id': missing",
        "row 2, field 'id': expected an id of 1 to 64 letters, digits, '.', '_' or '-', "
        "starting with a letter or a digit, got 'has space'",
        "row 3, field 'category': expected 'multiple_choice' or 'open_ended', got 'quiz'",
        "row 4, field 'question': expected the question, got a blank string",
        "row 5, field 'answer': expected the correct letter, one of A, B, C, D (capital), got 'b'",
        "row 6, field 'options': expected exactly the letters A, B, C and D as keys, got "
        "'A', 'B', 'C'",
        "row 7, field 'options': option B: expected the option's text, got a blank string",
        "row 7, field 'options': option D: expected the option's text as a string, got a "
        "number (4)",
        "row 8, field 'reference': expected the reference answer as a string, got null",
    ]


def test_fields_of_the_other_kind_are_refused():
    records = [mc("mc-1", reference="Rest."), oe("oe-1", options=OPTIONS, answer="A")]
    assert problems(records) == [
        "row 0, field 'reference': belongs to open_ended items: a multiple_choice item has "
        "options and an answer letter, no reference; remove it",
        "row 1, field 'options': belongs to multiple_choice items: an open_ended item has a "
        "reference answer, no options and no answer letter; remove it",
        "row 1, field 'answer': belongs to multiple_choice items: an open_ended item has a "
        "reference answer, no options and no answer letter; remove it",
    ]


def test_missing_fields_say_what_they_hold():
    bare_mc = {"id": "mc-1", "category": "multiple_choice", "question": "Q?"}
    bare_oe = {"id": "oe-1", "category": "open_ended", "question": "Q?"}
    assert problems([bare_mc, bare_oe]) == [
        "row 0, field 'options': missing (an object with the texts of A, B, C and D)",
        "row 0, field 'answer': missing (the correct letter: A, B, C or D)",
        "row 1, field 'reference': missing (the reference answer the judge sees)",
    ]


def test_a_repeated_id_names_the_first_row():
    assert problems([mc("q-1"), oe("q-2"), oe("q-1")]) == [
        "row 2, field 'id': repeats the id 'q-1' of row 0; every item needs its own id"
    ]


def test_strict_json_markers_and_refused_characters():
    data = (
        b'[{"id": "mc-1", "id": "mc-1", "category": "multiple_choice", "question": "Q\\u0000?",'
        b' "options": {"A": "a", "B": "b", "C": "c", "D": NaN}, "answer": "A"}]'
    )
    assert problems(data) == [
        "row 0, field 'id': appears more than once in this row; JSON objects must not repeat a key",
        "row 0, field 'question': holds a NUL character (U+0000) after 1 character; text may "
        "hold no NUL, no control characters other than tab and line breaks, and no unpaired "
        "surrogates",
        "row 0, field 'options': option D: expected the option's text as a string, it holds "
        "NaN, which is not JSON (RFC 8259 has no NaN or Infinity)",
    ]


def test_problems_past_ten_are_counted_not_listed():
    with pytest.raises(GroundTruthError) as caught:
        load_testset(as_bytes([mc(f"mc-{n}", answer="E") for n in range(25)]))
    assert len(caught.value.problems) == 10
    assert caught.value.total == 25
    assert "... and 15 more problem(s) not listed." in str(caught.value)
