"""A required field a row lacks is told with the key the row holds in its place
(`row_fields`): one message, "missing (this row has 'pred', ...: did you mean 'prediction'?)"."""

import pytest

from benchmark.scoring.row_fields import missing_message, renamed_fields

pytestmark = pytest.mark.unit

REQUIRED = ("id", "qa_type", "prediction")
KNOWN = frozenset({*REQUIRED, "answer", "gnd"})


def renamed(*names):
    return renamed_fields(names, required=REQUIRED, known=KNOWN)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (("id", "qa_type", "pred"), {"prediction": "pred"}),
        (("id", "qa_type", "predictions"), {"prediction": "predictions"}),
        (("id", "qa_type", "Prediction"), {"prediction": "Prediction"}),
        (("ID", "qa_type", "prediction"), {"id": "ID"}),
        (("id", "type", "pred"), {"qa_type": "type", "prediction": "pred"}),
        (("id", "qa_type", "output"), {}),
        (("id", "qa_type", "prediction", "pred"), {}),
        (("id", "qa_type", "answer"), {}),
        (("id", "qa_type", "pred\x00"), {}),
    ],
    ids=[
        "cut-short",
        "plural",
        "capitalised",
        "upper-case-id",
        "two-renamed",
        "another-word",
        "nothing-missing",
        "a-known-field-is-never-a-rename",
        "a-key-a-message-cannot-quote",
    ],
)
def test_a_missing_field_is_paired_with_the_unknown_key_that_looks_like_it(names, expected):
    assert renamed(*names) == expected


def test_one_key_stands_for_one_field_at_most():
    assert renamed_fields(["qa_typ"], required=("qa_type", "qa_types"), known=set()) == {
        "qa_type": "qa_typ"
    }


def test_the_message_names_both():
    assert missing_message("prediction", {"prediction": "pred"}) == (
        "missing (this row has 'pred', which is not a field: did you mean 'prediction'?)"
    )
    assert missing_message("prediction", {}) == "missing"
