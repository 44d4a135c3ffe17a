"""The synthetic demo: the same bytes on every call, well formed, and four models whose
quality is clearly ordered on both categories, with ties for a word-overlap judge."""

import itertools
import json
import re

import pytest

from benchmark.definitions import MODEL_FACT_KEYS
from plugins.clinicalqa import demo
from plugins.clinicalqa.pairwise import REFERENCE_END, REFERENCE_START, pairwise
from plugins.clinicalqa.plugin import plugin
from plugins.clinicalqa.rerun import question_text

pytestmark = pytest.mark.unit

KINDS = ("strong", "good", "fair", "weak")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return plugin.write_demo(tmp_path_factory.mktemp("clinicalqa"))


@pytest.fixture(scope="module")
def test_set(files):
    return plugin.read_test_set(files.test_set.read_bytes())


@pytest.fixture(scope="module")
def answers(files, test_set):
    """model name -> checked answers, in test-set order."""
    return {
        entry.model_name: plugin.check_predictions(
            entry.predictions.read_bytes(),
            test_set,
            options=entry.options,
            max_prediction_chars=plugin.definition.max_prediction_chars,
        )
        for entry in files.hosted
    }


def test_the_same_seed_writes_the_same_bytes(files, tmp_path):
    again = plugin.write_demo(tmp_path)
    first = [files.test_set, *(entry.predictions for entry in files.hosted)]
    second = [again.test_set, *(entry.predictions for entry in again.hosted)]
    assert [path.name for path in first] == [path.name for path in second]
    for one, other in zip(first, second, strict=True):
        assert one.read_bytes() == other.read_bytes(), one.name
    other_seed = demo.write_demo(tmp_path / "other", seed=1)
    assert other_seed["testset"].read_bytes() != files.test_set.read_bytes()


def test_files_already_there_are_kept_unless_forced(tmp_path):
    paths = demo.write_demo(tmp_path)
    original = paths["weak"].read_bytes()
    paths["weak"].write_text("[]", encoding="utf-8")
    paths["testset"].unlink()
    demo.write_demo(tmp_path)
    assert paths["weak"].read_text(encoding="utf-8") == "[]"  # kept
    assert paths["testset"].exists()  # the missing one written again
    demo.write_demo(tmp_path, force=True)
    assert paths["weak"].read_bytes() == original


def test_the_test_set_has_40_multiple_choice_and_16_open_ended_questions(test_set):
    assert plugin.test_set_counts(test_set).task_counts == {
        "multiple_choice": 40,
        "open_ended": 16,
    }
    letters = [item.answer for item in test_set.of_category("multiple_choice")]
    assert min(letters.count(letter) for letter in "ABCD") >= 5  # the letters are spread
    # Every question a model is asked is its own (the stand-in model answers by the text).
    texts = [question_text(item) for item in test_set.items]
    assert len(set(texts)) == len(texts)
    assert all("(an invented condition)" in item.question for item in test_set.items)


def test_the_demo_models_are_four_hosted_ones_with_their_facts(files):
    # Evaluated through the hosted evaluation queue, not uploaded (issue 15, point 5).
    assert files.entries == ()
    assert [entry.model_name for entry in files.hosted] == [
        "demo-strong",
        "demo-good",
        "demo-fair",
        "demo-weak",
    ]
    assert {entry.institution for entry in files.hosted} == {"Podium demo data"}
    assert [entry.predictions.name for entry in files.hosted] == [
        f"predictions_{kind}.json" for kind in KINDS
    ]
    assert all(entry.options == {} and entry.publish for entry in files.hosted)
    assert files.playback == ()
    for model in demo.MODELS:
        assert tuple(model.facts) == MODEL_FACT_KEYS, model.name


def test_the_fair_models_file_is_in_another_order_and_still_reads(files, test_set, answers):
    fair = json.loads(files.hosted[2].predictions.read_text(encoding="utf-8"))
    assert [row["id"] for row in fair][:16] == [
        item.id for item in test_set.of_category("open_ended")
    ]
    assert len(answers["demo-fair"]) == len(test_set)


def test_multiple_choice_accuracy_is_ordered_with_unreadable_answers(test_set, answers):
    results = {
        name: plugin.score(test_set, checked, options={})[0] for name, checked in answers.items()
    }
    assert {name: result.metrics["accuracy"] for name, result in results.items()} == {
        "demo-strong": 0.9,
        "demo-good": 0.75,
        "demo-fair": 0.55,
        "demo-weak": 0.3,
    }
    assert {name: result.result.unreadable for name, result in results.items()} == {
        "demo-strong": 0,
        "demo-good": 0,
        "demo-fair": 2,
        "demo-weak": 5,
    }


# -- a simple judge: the answer sharing more words with the reference wins --------------------


def words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z]+", text.lower()) if len(word) >= 4}


def section(prompt: str, start: str, end: str) -> str:
    return prompt.split(start, 1)[1].split(end, 1)[0]


def overlap_judge(prompt: str) -> str:
    """A deterministic judge reading only the battle prompt: "[[A]]", "[[B]]" or "[[C]]"."""
    reference = words(section(prompt, REFERENCE_START, REFERENCE_END))
    first = words(
        section(prompt, "[The Start of Assistant A's Answer]", "[The End of Assistant A's")
    )
    second = words(
        section(prompt, "[The Start of Assistant B's Answer]", "[The End of Assistant B's")
    )
    a, b = len(first & reference), len(second & reference)
    return "The verdict: [[A]]" if a > b else "The verdict: [[B]]" if b > a else "[[C]]"


def battle(question: str, one: str, other: str, reference: str) -> str:
    """MEDIC's rule: both positions; a preference that changes with them is a tie."""
    forward = pairwise.read_verdict(
        overlap_judge(pairwise.battle_prompt(question, one, other, reference=reference))
    )
    backward = pairwise.read_verdict(
        overlap_judge(pairwise.battle_prompt(question, other, one, reference=reference))
    )
    swapped_back = {"first": "second", "second": "first", "tie": "tie"}[backward]
    return forward if forward == swapped_back else "tie"


def test_a_word_overlap_judge_ranks_the_models_in_order_with_some_ties(test_set, answers):
    questions = pairwise.questions(test_set, "open_ended")
    references = pairwise.references(test_set, "open_ended")
    answered = {
        name: pairwise.answers(test_set, checked, "open_ended") for name, checked in answers.items()
    }
    points = dict.fromkeys(answered, 0.0)
    ties = 0
    for (key, question), (one, other) in itertools.product(
        questions, itertools.combinations(answered, 2)
    ):
        outcome = battle(question, answered[one][key], answered[other][key], references[key])
        if outcome == "tie":
            ties += 1
            points[one] += 0.5
            points[other] += 0.5
        else:
            points[one if outcome == "first" else other] += 1
    names = ["demo-strong", "demo-good", "demo-fair", "demo-weak"]
    assert sorted(points, key=points.get, reverse=True) == names
    assert [points[name] for name in names] == [46.5, 27.5, 16.5, 5.5]
    assert ties == 8
    # Clearly apart: each model takes well over half the points against the next one down.
    assert points["demo-strong"] - points["demo-good"] > 10
    assert points["demo-fair"] - points["demo-weak"] > 5


def test_some_neighbours_give_the_very_same_answer(test_set, answers):
    keys = [item.index for item in test_set.of_category("open_ended")]
    for better, worse, count in demo.SAME_ANSWERS:
        one, other = answers[f"demo-{better}"], answers[f"demo-{worse}"]
        assert sum(one[index] == other[index] for index in keys) >= count
