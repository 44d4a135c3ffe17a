"""The whole-file check (`_clean_predictions`, issue 16) accepts a predictions file exactly
when the row-by-row checks find nothing, so every file gets the outcome, and every refused
file the messages, it got before the shortcut existed."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins.medvidbench.scoring import PredictionsError, load_predictions
from plugins.medvidbench.scoring import submission as submission_module

from .factories import gt_record, make_test_set, rows_for

pytestmark = pytest.mark.unit

TEST_SET = make_test_set(
    gt_record("tal", "0-1", [{"spans": [{"start": 0, "end": 1}]}], video_id="v1"),
    gt_record("next_action", "tying", video_id="v1"),
    gt_record("cvs_assessment", "Two structures: 1", dataset="Cholec80_CVS", video_id="v2"),
)
CLEAN = rows_for(TEST_SET, ["0-1", "tying", "Two structures: 1"])

# JSON fragments a row's value may be replaced by: every kind the row checks tell apart.
VALUES = [
    '"text"', '"tying"', '"0-1"', '"caf\\u00e9"', '"\\u0007bell"', '"\\ud800"', '"a\\u0000b"',
    '"\\u007f"', '"\\u0085"', '"tab\\there"', '"x\\ny"', "NaN", "-Infinity", "1e400", "12",
    "1.5", "null", "true", "[]", '["a"]', '{"k": NaN}', "{}", '"' + "y" * 40 + '"',
]  # fmt: skip
KEYS = ["id", "qa_type", "prediction", "gnd", "answer", "predictions", "x\\u0001", "\\ud800"]


def outcome(raw: bytes, **options) -> tuple[str, object]:
    try:
        return "loaded", load_predictions(raw, TEST_SET, **options)
    except PredictionsError as failure:
        return "refused", (str(failure), failure.total)


def row_by_row(raw: bytes, **options) -> tuple[str, object]:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(submission_module, "_clean_predictions", lambda *args: None)
        return outcome(raw, **options)


@st.composite
def files(draw) -> bytes:
    """The clean file's JSON text with a few of its rows edited: a value replaced, a key
    added, renamed, dropped or repeated, a row replaced by a non-object, or rows swapped."""
    rows = [[(key, json.dumps(value)) for key, value in row.items()] for row in CLEAN]
    for _ in range(draw(st.integers(0, 3))):
        row = draw(st.sampled_from(rows))
        edit = draw(st.sampled_from(["value", "add", "rename", "drop", "repeat", "swap"]))
        position = draw(st.integers(0, max(len(row) - 1, 0)))
        if edit == "value" and row:
            row[position] = (row[position][0], draw(st.sampled_from(VALUES)))
        elif edit == "add":
            row.append((draw(st.sampled_from(KEYS)), draw(st.sampled_from(VALUES))))
        elif edit == "rename" and row:
            row[position] = (draw(st.sampled_from(KEYS)), row[position][1])
        elif edit == "drop" and row:
            del row[position]
        elif edit == "repeat" and row:
            row.append(row[position])
        elif edit == "swap":
            first, second = draw(st.integers(0, 2)), draw(st.integers(0, 2))
            rows[first], rows[second] = rows[second], rows[first]
    texts = ["{" + ", ".join(f'"{key}": {value}' for key, value in row) + "}" for row in rows]
    if draw(st.booleans()) and draw(st.booleans()):
        texts[draw(st.integers(0, 2))] = draw(st.sampled_from(VALUES))  # not an object
    return ("[" + ", ".join(texts) + "]").encode()


@settings(max_examples=400, deadline=None)
@given(raw=files(), limit=st.sampled_from([None, 5, 17, 40]))
def test_a_file_gets_what_the_row_checks_give_it(raw, limit):
    options = {"max_prediction_chars": limit}
    assert outcome(raw, **options) == row_by_row(raw, **options)


def test_the_whole_file_check_takes_a_clean_file_and_leaves_a_flawed_one():
    assert submission_module._clean_predictions(CLEAN, TEST_SET, None) == [
        "0-1",
        "tying",
        "Two structures: 1",
    ]
    flawed = [dict(CLEAN[0], prediction="a\x0bb"), *CLEAN[1:]]
    assert submission_module._clean_predictions(flawed, TEST_SET, None) is None
    assert submission_module._clean_predictions(CLEAN, TEST_SET, 16) is None  # 17 characters
    assert submission_module._clean_predictions(CLEAN[::-1], TEST_SET, None) is None
    # A flawed file still gets the row checks' message, naming its row and field.
    kind, (message, total) = outcome(json.dumps(flawed).encode())
    assert kind == "refused"
    assert total == 1
    assert "row 0" in message
    assert "prediction" in message
    assert "U+000B" in message
