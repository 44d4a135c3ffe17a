"""Strict JSON for predictions files (RFC 8259): what `json.loads` would let through is refused
with the row and field that hold it, and nesting is limited before the parser recurses."""

import json

import pytest

from benchmark.scoring.strict_json import MAX_JSON_DEPTH, nesting_problem, text_problem
from plugins.medvidbench.scoring import PredictionsError, load_predictions

from .factories import gt_record, make_test_set, rows_for

pytestmark = pytest.mark.unit

DEPTH_MESSAGE = (
    "the JSON is nested more than 32 levels deep; a predictions file needs 2 (a list of "
    "objects), so it was not read"
)
TEXT_RULE = (
    "text may hold no NUL, no control characters other than tab and line breaks, and no "
    "unpaired surrogates"
)


@pytest.fixture
def test_set():
    return make_test_set(
        gt_record("next_action", "tying", video_id="v1"),
        gt_record("next_action", "cutting", video_id="v2"),
    )


def good_text(test_set) -> str:
    return json.dumps(rows_for(test_set, ["tying", "cutting"]))


def problems(raw: bytes | str, test_set, **options) -> list[str]:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    with pytest.raises(PredictionsError) as caught:
        load_predictions(raw, test_set, **options)
    return [str(problem) for problem in caught.value.problems]


def replaced(test_set, old: str, new: str) -> str:
    text = good_text(test_set)
    assert old in text
    return text.replace(old, new, 1)


# --- nesting --------------------------------------------------------------------------------


def test_a_hundred_thousand_levels_are_refused_before_parsing(test_set):
    assert problems("[" * 100_000 + "]" * 100_000, test_set) == [DEPTH_MESSAGE]


def test_the_depth_limit_is_exact():
    assert MAX_JSON_DEPTH == 32
    assert nesting_problem(b"[" * 32 + b"]" * 32) is None
    assert nesting_problem(b"[" * 33 + b"]" * 33) == DEPTH_MESSAGE


def test_brackets_inside_strings_do_not_count(test_set):
    prediction = '[[[[ \\" {{{{' * 20  # an escaped quote does not end the string
    text = replaced(test_set, '"tying"', json.dumps(prediction))
    assert nesting_problem(text.encode()) is None
    assert load_predictions(text.encode(), test_set)[0] == prediction


def test_an_escaped_backslash_before_a_quote_ends_the_string():
    # "a\\" is a string holding one backslash; the brackets after it are structure.
    assert nesting_problem(b'["a\\\\", ' + b"[" * 40 + b"]" * 40 + b"]") == DEPTH_MESSAGE


def test_deep_objects_count_like_lists():
    assert nesting_problem(b'{"a":' * 40 + b"1" + b"}" * 40) == DEPTH_MESSAGE


# --- numbers that are not JSON --------------------------------------------------------------


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_constants_name_row_and_field(test_set, constant):
    text = replaced(test_set, '"cutting"', constant)
    assert problems(text, test_set) == [
        f"row 1, field 'prediction': holds {constant}, which is not JSON (RFC 8259 has no NaN "
        "or Infinity)"
    ]


def test_a_number_that_overflows_names_row_and_field(test_set):
    text = replaced(test_set, '"tying"', "1e400")
    assert problems(text, test_set) == [
        "row 0, field 'prediction': holds '1e400', a number too large to read (it overflows "
        "to infinity)"
    ]


def test_nan_nested_in_another_field_is_named(test_set):
    text = replaced(test_set, '"prediction": "tying"', '"prediction": "tying", "x": [[NaN]]')
    assert problems(text, test_set) == [
        "row 0, field 'x': holds NaN, which is not JSON (RFC 8259 has no NaN or Infinity)"
    ]


def test_a_file_that_is_nan(test_set):
    assert problems("NaN", test_set) == [
        "the file holds NaN, which is not JSON (RFC 8259 has no NaN or Infinity), not a list "
        "of rows"
    ]


def test_a_row_that_is_infinity(test_set):
    assert problems("[Infinity, {}]", test_set)[0] == (
        "row 0: expected an object {id, qa_type, prediction}, got Infinity, which is not JSON "
        "(RFC 8259 has no NaN or Infinity)"
    )


def test_an_integer_too_long_for_python_is_a_wrong_type_not_a_crash(test_set):
    text = replaced(test_set, '"tying"', "7" * 5000)
    assert problems(text, test_set) == [
        "row 0, field 'prediction': expected a string, got a number of 5,000 digits"
    ]


# --- keys -----------------------------------------------------------------------------------


def test_a_repeated_key_names_row_and_key(test_set):
    text = replaced(test_set, '"prediction": "cutting"', '"prediction": "x", "prediction": "y"')
    assert problems(text, test_set) == [
        "row 1, field 'prediction': appears more than once in this row; JSON objects must not "
        "repeat a key"
    ]


@pytest.mark.parametrize("key", ["answer", "metadata", "gnd", "conversations"])
def test_ground_truth_keys_share_one_message(test_set, key):
    text = replaced(test_set, '"prediction": "tying"', f'"prediction": "tying", "{key}": "x"')
    assert problems(text, test_set) == [
        f"row 0, field '{key}': Podium never accepts ground truth from a submitter; remove it"
    ]


def test_an_unknown_field_is_refused_and_the_message_says_so(test_set):
    text = replaced(test_set, '"prediction": "tying"', '"prediction": "tying", "score": 1')
    assert problems(text, test_set) == [
        "row 0, field 'score': unknown field; a row holds exactly id, qa_type and prediction, "
        "and Podium refuses other fields instead of ignoring them; remove it"
    ]


def test_a_key_with_a_nul_is_named_escaped(test_set):
    text = replaced(test_set, '"prediction": "tying"', '"prediction": "tying", "p\\u0000": "x"')
    assert problems(text, test_set) == [
        f"row 0, field 'p\\x00': the key holds a NUL character (U+0000) after 1 character; "
        f"{TEXT_RULE}"
    ]


# --- text -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("escape", "what"),
    [
        ("\\u0000", "a NUL character (U+0000)"),
        ("\\ud800", "an unpaired surrogate (U+D800, half of a UTF-16 pair, not a character)"),
        ("\\udfff", "an unpaired surrogate (U+DFFF, half of a UTF-16 pair, not a character)"),
        ("\\u001b", "a control character (U+001B)"),
        ("\\u007f", "a control character (U+007F)"),
        ("\\u0085", "a control character (U+0085)"),
    ],
)
def test_refused_characters_in_a_prediction(test_set, escape, what):
    text = replaced(test_set, '"cutting"', f'"cut{escape}ting"')
    assert problems(text, test_set) == [
        f"row 1, field 'prediction': holds {what} after 3 characters; {TEXT_RULE}"
    ]


def test_a_nul_in_an_id_is_named_before_the_alignment(test_set):
    text = replaced(test_set, '"v1', '"v\\u00001')
    assert problems(text, test_set) == [
        f"row 0, field 'id': holds a NUL character (U+0000) after 1 character; {TEXT_RULE}"
    ]


def test_tabs_line_breaks_and_paired_surrogates_are_text(test_set):
    prediction = "1.0-2.0 seconds:\tcut\r\n3.0-4.0 seconds: tie \U0001f600"
    text = replaced(test_set, '"tying"', json.dumps(prediction))  # the emoji as a \\ud83d pair
    assert load_predictions(text.encode(), test_set)[0] == prediction
    assert text_problem(prediction) is None


@pytest.mark.parametrize("code", range(128))
def test_every_ascii_character_is_judged_as_in_any_other_text(code):
    """All-ASCII text takes a shorter path (`bytes.translate`); its answer is the one the same
    character gets beside a non-ASCII one, which takes the general path."""
    character = chr(code)
    ascii_text = f"cut{character}ting"
    general = f"cut{character}ting \u00e9"
    refused = (code < 32 and character not in "\t\n\r") or code == 127
    found = text_problem(ascii_text)
    assert (found is not None) == refused
    assert found == (text_problem(general) if refused else None)
    if refused:
        assert found.startswith(
            f"holds a {'NUL' if code == 0 else 'control'} character (U+{code:04X}"
        )
        assert "after 3 characters" in found


# --- the length limit -----------------------------------------------------------------------


def test_a_prediction_at_the_limit_is_accepted_one_more_character_is_not(test_set):
    at_limit = replaced(test_set, '"tying"', json.dumps("x" * 100))
    assert load_predictions(at_limit.encode(), test_set, max_prediction_chars=100)[0] == "x" * 100
    over = replaced(test_set, '"tying"', json.dumps("é" * 101))
    assert problems(over, test_set, max_prediction_chars=100) == [
        "row 0, field 'prediction': is 101 characters long; this benchmark accepts at most 100 "
        "characters per prediction"
    ]


def test_without_a_limit_a_long_prediction_loads(test_set):
    text = replaced(test_set, '"tying"', json.dumps("x" * 1_000_000))
    assert len(load_predictions(text.encode(), test_set)[0]) == 1_000_000


def test_a_long_wrong_id_is_cut_in_the_message(test_set):
    text = replaced(test_set, '"v1', '"' + "v" * 30_000)
    (message,) = problems(text, test_set)
    assert message.endswith("got '" + "v" * 60 + "'... (30,013 characters)")
    assert len(message) < 200


# --- encodings ------------------------------------------------------------------------------


def test_utf16_with_a_byte_order_mark(test_set):
    raw = good_text(test_set).encode("utf-16")
    assert problems(raw, test_set) == [
        "the file is not UTF-8 text: it starts with a UTF-16 byte-order mark; save it as UTF-8"
    ]


def test_utf16_without_a_byte_order_mark(test_set):
    raw = good_text(test_set).encode("utf-16-le")
    assert problems(raw, test_set) == [
        "the file is not UTF-8 text: it holds NUL bytes, as UTF-16 or UTF-32 text does; save "
        "it as UTF-8"
    ]


def test_two_byte_order_marks(test_set):
    raw = b"\xef\xbb\xbf\xef\xbb\xbf" + good_text(test_set).encode()
    assert problems(raw, test_set) == [
        "the file starts with two byte-order marks (U+FEFF); save it as UTF-8"
    ]


def test_one_utf8_byte_order_mark_is_fine(test_set):
    raw = b"\xef\xbb\xbf" + good_text(test_set).encode()
    assert load_predictions(raw, test_set) == ["tying", "cutting"]


def test_latin1_bytes_name_the_line(test_set):
    raw = replaced(test_set, '"cutting"', '"cut\nting"').replace("\n", "\\n").encode()
    raw = raw.replace(b"cut", b"cut\xe9", 1)
    assert problems(raw, test_set) == [
        "the file is not UTF-8 text: byte 0xe9 at line 1 cannot be read as UTF-8; save the file "
        "as UTF-8"
    ]
