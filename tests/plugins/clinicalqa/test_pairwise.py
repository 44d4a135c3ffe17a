"""The pairwise category: its questions (with the reference the judge needs), a model's
answers, MT-Bench's battle prompt and how a verdict is read."""

import pytest

from benchmark.plugins import Pairwise
from plugins.clinicalqa.pairwise import INSTRUCTION, pairwise
from plugins.clinicalqa.plugin import plugin

from .factories import make_test_set, mc, oe

pytestmark = pytest.mark.unit


@pytest.fixture
def test_set():
    return make_test_set(
        oe("oe-1", "Rest for a week."), mc("mc-1"), oe("oe-2", "Veloxamine for five days.")
    )


def test_it_is_the_plugins_pairwise():
    assert plugin.pairwise is pairwise
    assert isinstance(pairwise, Pairwise)


def test_the_questions_are_the_open_ended_items_and_their_references_come_apart(test_set):
    # The questions are public (battles are exported by question key); the references are
    # ground truth, handed over separately for the judge's prompt only.
    assert pairwise.questions(test_set, "open_ended") == (
        ("oe-1", "How is the condition of question oe-1 treated?"),
        ("oe-2", "How is the condition of question oe-2 treated?"),
    )
    assert pairwise.references(test_set, "open_ended") == {
        "oe-1": "Rest for a week.",
        "oe-2": "Veloxamine for five days.",
    }


def test_only_the_open_ended_category_is_rated(test_set):
    for category in ("close_ended", "multiple_choice", "nope"):
        with pytest.raises(ValueError, match=f"only its 'open_ended' category.*{category!r}"):
            pairwise.questions(test_set, category)


def test_answers_come_from_the_checked_predictions(test_set):
    checked = plugin.check_predictions(
        b'[{"id": "mc-1", "answer": "B"}, {"id": "oe-2", "answer": "Veloxamine."},'
        b' {"id": "oe-1", "answer": "Rest."}]',
        test_set,
        options={},
        max_prediction_chars=None,
    )
    assert pairwise.answers(test_set, checked, "open_ended") == {
        "oe-1": "Rest.",
        "oe-2": "Veloxamine.",
    }
    with pytest.raises(ValueError, match="2 answers for 3 test items"):
        pairwise.answers(test_set, checked[:2], "open_ended")


def test_the_battle_prompt_is_mt_benchs_reference_guided_pairwise_format(test_set):
    [(key, question), _] = pairwise.questions(test_set, "open_ended")
    reference = pairwise.references(test_set, "open_ended")[key]
    prompt = pairwise.battle_prompt(
        question, "Rest and fluids.", "Surgery at once.", reference=reference
    )
    assert prompt == (
        f"{INSTRUCTION}\n\n"
        "[User Question]\nHow is the condition of question oe-1 treated?\n\n"
        "[The Start of Reference Answer]\nRest for a week.\n[The End of Reference Answer]\n\n"
        "[The Start of Assistant A's Answer]\nRest and fluids.\n"
        "[The End of Assistant A's Answer]\n\n"
        "[The Start of Assistant B's Answer]\nSurgery at once.\n"
        "[The End of Assistant B's Answer]"
    )
    assert (
        '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" '
        "for a tie." in INSTRUCTION
    )


def test_swapping_the_answers_swaps_the_sections(test_set):
    [(_, question), _] = pairwise.questions(test_set, "open_ended")
    one = pairwise.battle_prompt(question, "first answer", "second answer")
    other = pairwise.battle_prompt(question, "second answer", "first answer")
    assert one != other
    assert (
        one.replace("first answer", "X")
        .replace("second answer", "first answer")
        .replace("X", "second answer")
        == other
    )


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("[[A]]", "first"),
        ("Assistant B follows the reference more closely. [[B]]", "second"),
        ("Both are equally good. [[C]]", "tie"),
        # The last marker wins: a judge may quote the format before it decides.
        ('I must answer "[[A]]", "[[B]]" or "[[C]]". My verdict: [[B]]', "second"),
        ("[[B]] at first sight, but on reflection [[A]]", "first"),
        ("Verdict:[[C]]\n", "tie"),
    ],
)
def test_read_verdict(reply, verdict):
    assert pairwise.read_verdict(reply) == verdict


@pytest.mark.parametrize(
    "reply", ["", "A is better", "[A]", "[[a]]", "[[ A ]]", "[[D]]", "[[AB]]", "Verdict: B"]
)
def test_a_reply_without_a_verdict_marker_is_none(reply):
    assert pairwise.read_verdict(reply) is None
