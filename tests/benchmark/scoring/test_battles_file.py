"""Reading a battles file (JSON Lines) for `rate_battles` (issue 15, point 3)."""

import json

import pytest

from benchmark.scoring.battles_file import BattlesFileError, read_battles
from benchmark.scoring.ratings import Battle

pytestmark = pytest.mark.unit


def lines(*rows):
    return "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows).encode()


def problems(data):
    with pytest.raises(BattlesFileError) as raised:
        read_battles(data)
    return [str(problem) for problem in raised.value.problems]


def test_battles_are_read_in_file_order_with_blank_lines_and_extra_keys():
    data = lines(
        {"model_a": "m1", "model_b": "m2", "winner": "model_a", "question": "q7"},
        "",
        "   ",
        {"winner": "tie", "model_b": "m1", "model_a": "m3", "positions": ["m3", "m1"]},
        {"model_a": "m2", "model_b": "m3", "winner": "model_b", "verdicts": [None, "first"]},
    )

    assert read_battles(data + b"\n") == [
        Battle("m1", "m2", "model_a"),
        Battle("m3", "m1", "tie"),
        Battle("m2", "m3", "model_b"),
    ]


def test_crlf_line_ends_a_byte_order_mark_and_unicode_names_are_read():
    row = {"model_a": "modèle\u2028a", "model_b": "b", "winner": "tie"}
    data = "\ufeff".encode() + json.dumps(row, ensure_ascii=False).encode() + b"\r\n"

    assert read_battles(data) == [Battle("modèle\u2028a", "b", "tie")]


def test_each_bad_line_is_named_with_its_field_and_what_was_expected():
    data = lines(
        {"model_a": "a", "model_b": "b", "winner": "draw"},
        '{"model_a": "a", "model_b": "b"',
        "",
        [1, 2],
        {"model_a": "a", "model_b": "a", "winner": "tie"},
        {"model_b": 3, "winner": "tie"},
        {"model_a": "", "model_b": "b", "winner": "Model_A"},
        '{"model_a": "a", "model_b": "b", "winner": "tie", "winner": "model_a"}',
        '{"model_a": NaN, "model_b": "b", "winner": "tie"}',
        {"model_a": "a\u0000", "model_b": "b", "winner": "tie"},
        {"model_a": "a", "model_b": "b", "winner": None},
    )

    assert problems(data) == [
        'line 1, field \'winner\': expected "model_a", "model_b" or "tie", got "draw"',
        "line 2: not valid JSON: Expecting ',' delimiter at column 32",
        'line 4: expected a JSON object {"model_a": "...", "model_b": "...", "winner": '
        '"model_a" | "model_b" | "tie"}, got a list',
        'line 5: model_a and model_b are both "a": a model cannot battle itself',
        'line 6, field \'model_a\': missing: every battle is {"model_a": "...", "model_b": '
        '"...", "winner": "model_a" | "model_b" | "tie"}',
        "line 6, field 'model_b': expected a model name (a non-empty string), got 3",
        "line 7, field 'model_a': expected a model name (a non-empty string), got \"\"",
        'line 7, field \'winner\': expected "model_a", "model_b" or "tie", got "Model_A"',
        "line 8, field 'winner': appears more than once in the object",
        "line 9, field 'model_a': expected a string, got NaN, which is not JSON (RFC 8259 "
        "has no NaN or Infinity)",
        "line 10, field 'model_a': the value holds a NUL character (U+0000) after 1 "
        "character; text may hold no NUL, no control characters other than tab and line "
        "breaks, and no unpaired surrogates",
        'line 11, field \'winner\': expected "model_a", "model_b" or "tie", got null',
    ]


def test_a_file_whose_last_line_is_cut_off_says_so_and_other_lines_keep_their_column():
    data = lines(
        {"model_a": "a", "model_b": "b", "winner": "tie"},
        '{"model_a": "a", "model_b": "b" "winner": "tie"}',
        {"model_a": "a", "model_b": "b", "winner": "tie"},
        '{"model_a": "a", "model_b": "b", "win',
    )

    assert problems(data) == [
        "line 2: not valid JSON: Expecting ',' delimiter at column 33",
        "line 4: the file ends early, at byte 186, inside this line: it looks cut off (an "
        "interrupted upload or copy); upload the whole file",
    ]


def test_the_message_lists_ten_problems_and_counts_the_rest():
    data = lines(*[{"model_a": "a", "model_b": "b", "winner": "x"}] * 25)

    with pytest.raises(BattlesFileError) as raised:
        read_battles(data)
    message = str(raised.value)
    assert message.startswith("The battles file was rejected (25 problem(s)):")
    assert "line 10, field 'winner'" in message
    assert "line 11," not in message
    assert message.endswith("... and 15 more problem(s) not listed.")


@pytest.mark.parametrize("data", [b"", b"\n\n  \n", "\ufeff".encode()])
def test_a_file_without_battles_is_refused(data):
    assert problems(data) == [
        'the file holds no battles: expected one JSON object per line, {"model_a": "...", '
        '"model_b": "...", "winner": "model_a" | "model_b" | "tie"}'
    ]


def test_a_file_that_is_not_utf8_is_refused():
    assert problems(b'{"model_a": "a\xff"}') == [
        "the file is not UTF-8 text (byte 0xff at offset 14); save it as UTF-8"
    ]


def test_a_deeply_nested_line_is_refused_before_parsing():
    data = lines({"model_a": "a", "model_b": "b", "winner": "tie"}, "[" * 100_000)

    assert problems(data) == [
        "line 2: the JSON is nested more than 32 levels deep; a battle is one flat object, "
        "so the line was not read"
    ]
