"""Scheduling battles on the platform (arena.services.schedule): the first entry waits and the
second meets it; a newcomer meets k opponents chosen by the pure rule, never all pairs once
there are more; each pairing's questions and the two rounds with the positions swapped; a pair
meets on a question once; who may battle, and every refusal with its reason and nothing
stored. The hooks fire through the real on-commit callbacks."""

import itertools
import json
from pathlib import Path

import pytest
from django.conf import settings

from arena.enums import JobStatus, Shown
from arena.models import BattleItem, BattleJob
from arena.services import start_battles
from benchmark.scoring.battles import Opponent, choose_opponents, choose_questions, first_shown
from core.exceptions import DomainError, JudgeUnavailable
from core.models import AuditEvent
from judging.models import JudgeEndpoint
from plugins.clinicalqa.pairwise import pairwise
from submissions import owner_actions

from .conftest import CATEGORY, demo_rows

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

OPEN_ENDED = [f"oe-{number:03d}" for number in range(1, 17)]


@pytest.fixture
def entered(enter, django_capture_on_commit_callbacks):
    """Enter entries one by one with every on-commit hook run (the scored hook among them)."""

    def build(*specs, **options):
        made = []
        for name, kind in specs:
            with django_capture_on_commit_callbacks(execute=True):
                made.append(enter(name, kind, **options))
        return made

    return build


def test_the_first_entry_waits_and_the_second_meets_it(entered):
    (first,) = entered(("first", "strong"))

    waiting = BattleJob.objects.get(submission=first)
    assert (waiting.status, waiting.opponents, waiting.items_total) == (JobStatus.DONE, [], 0)
    assert waiting.message == (
        "No other entry on the boards to battle yet: this entry meets the next one that arrives."
    )

    (second,) = entered(("second", "weak"))

    job = BattleJob.objects.get(submission=second)
    assert job.status == JobStatus.QUEUED
    assert job.opponents == [{"submission": first.pk, "model_name": "first"}]
    # Every open-ended question (pairwise_questions is unset), two judge calls each.
    assert (job.battles_total, job.items_total) == (16, 32)
    assert sorted(set(job.items.values_list("question", flat=True))) == OPEN_ENDED
    assert BattleJob.objects.filter(submission=first).count() == 1  # it waited, it is not re-run
    created = AuditEvent.objects.filter(action="arena.job.created", object_id=str(job.pk)).get()
    assert created.data["opponents"] == ["first"]
    assert created.data["battles"] == 16


def test_the_two_rounds_show_the_answers_in_both_orders_with_the_reference(entered, demo_files):
    _, second = entered(("first", "strong"), ("second", "weak"))
    job = BattleJob.objects.get(submission=second)
    answers = {
        "second": {row["id"]: row["answer"] for row in demo_rows(demo_files, "weak")},
        "first": {row["id"]: row["answer"] for row in demo_rows(demo_files, "strong")},
    }
    test_set = json.loads(demo_files.test_set.read_text(encoding="utf-8"))
    items = {record["id"]: record for record in test_set}

    for question in OPEN_ENDED:
        one, two = job.items.filter(question=question).order_by("round")
        starts = first_shown("second", "first", question)
        expected_first = Shown.MODEL_A if starts == "second" else Shown.MODEL_B
        assert (one.round, one.shown_first) == (1, expected_first)
        assert (two.round, two.shown_first) == (
            2,
            Shown.MODEL_B if expected_first == Shown.MODEL_A else Shown.MODEL_A,
        )
        a_first = one if one.shown_first == Shown.MODEL_A else two
        b_first = two if a_first is one else one
        record = items[question]
        assert a_first.prompt == pairwise.battle_prompt(
            record["question"],
            answers["second"][question],
            answers["first"][question],
            reference=record["reference"],
        )
        assert b_first.prompt == pairwise.battle_prompt(
            record["question"],
            answers["first"][question],
            answers["second"][question],
            reference=record["reference"],
        )
        assert len(one.prompt_sha256) == 64
    # The draw does not put one model first in every round one.
    shown = set(job.items.filter(round=1).values_list("shown_first", flat=True))
    assert shown == {Shown.MODEL_A, Shown.MODEL_B}


def test_a_newcomer_meets_k_opponents_by_the_pure_rule_never_all_pairs(
    entered, clinicalqa, demo_files
):
    clinicalqa.pairwise_opponents = 2
    clinicalqa.pairwise_questions = 3
    clinicalqa.save(update_fields=["pairwise_opponents", "pairwise_questions"])
    kinds = itertools.cycle(["strong", "good", "fair", "weak"])
    entries = []
    for number in range(1, 8):
        kind = next(kinds)
        first = next(row for row in demo_rows(demo_files, kind) if row["id"] == "mc-001")
        # The same kind's files differ by trailing spaces (a copy of another account's
        # published file is refused); the letter rule reads the same answer.
        entries += entered(
            (f"model-{number}", kind), answers={"mc-001": first["answer"] + " " * number}
        )

    newcomer = entries[-1]
    job = BattleJob.objects.get(submission=newcomer)
    others = [Opponent(entry.model_name, None) for entry in entries[:-1]]
    expected = choose_opponents("model-7", others, 2, seed=clinicalqa.rating_seed)
    assert [opponent["model_name"] for opponent in job.opponents] == expected
    assert len(expected) == 2
    for opponent in job.opponents:
        asked = sorted(
            set(
                job.items.filter(opponent_id=opponent["submission"]).values_list(
                    "question", flat=True
                )
            )
        )
        assert asked == sorted(choose_questions("model-7", opponent["model_name"], OPEN_ENDED, 3))
    assert job.items_total == 2 * 3 * 2
    # Seven entries, each meeting at most two of those before it: 11 pairs of the 21 possible.
    pairs = {
        frozenset((job.submission_id, other["submission"]))
        for job in BattleJob.objects.all()
        for other in job.opponents
    }
    assert len(pairs) == 1 + 2 * 5
    assert len(pairs) < 7 * 6 // 2


def test_an_evaluate_only_entry_does_not_battle_until_it_is_published(entered, clinicalqa):
    entered(("first", "strong"))
    (hidden,) = entered(("hidden", "weak"), publish=False)

    assert not BattleJob.objects.filter(submission=hidden).exists()
    with pytest.raises(DomainError, match="only entries on the boards battle"):
        start_battles(hidden, CATEGORY)


def test_an_entry_published_later_meets_its_opponents_through_the_board_hook(
    entered, django_capture_on_commit_callbacks
):
    (first,) = entered(("first", "strong"))
    (later,) = entered(("later", "weak"), publish=False)

    with django_capture_on_commit_callbacks(execute=True):
        owner_actions.set_published(later, publish=True, actor=later.owner)

    job = BattleJob.objects.get(submission=later)
    assert job.opponents == [{"submission": first.pk, "model_name": "first"}]
    assert job.status == JobStatus.QUEUED


def test_a_pair_meets_on_a_question_once_whoever_schedules_it(entered, clinicalqa):
    first, second = entered(("first", "strong"), ("second", "weak"))
    job = BattleJob.objects.get(submission=second)

    # The first entry's own schedule, asked for by hand, finds every battle in flight already.
    again = start_battles(first, CATEGORY)

    assert again.pk != job.pk
    assert again.opponents == [{"submission": second.pk, "model_name": "second"}]
    assert again.items_total == 0
    assert again.status == JobStatus.DONE
    assert again.message == "Every battle of this schedule is stored already: nothing to judge."
    assert BattleItem.objects.filter(job__submission=first).count() == 0


def test_an_active_job_is_returned_not_doubled(entered):
    _, second = entered(("first", "strong"), ("second", "weak"))
    job = BattleJob.objects.get(submission=second)

    assert start_battles(second, CATEGORY) == job
    assert BattleJob.objects.filter(submission=second).count() == 1


def test_without_a_judge_endpoint_nothing_is_scheduled_and_the_reason_is_given(entered, clinicalqa):
    JudgeEndpoint.objects.filter(benchmark=clinicalqa).update(is_active=False)
    _, second = entered(("first", "strong"), ("second", "weak"))

    assert not BattleJob.objects.exists()
    with pytest.raises(JudgeUnavailable, match="No LLM judge endpoint is configured for Demo"):
        start_battles(second, CATEGORY)


def test_a_category_that_is_not_rated_from_battles_is_refused(entered):
    (first,) = entered(("first", "strong"))

    with pytest.raises(DomainError, match="'close_ended': it is not a rating category"):
        start_battles(first, "close_ended")
    assert BattleJob.objects.count() == 1


def test_an_opponent_whose_file_cannot_be_read_is_left_out_and_another_chosen(
    entered, clinicalqa, caplog
):
    clinicalqa.pairwise_opponents = 1
    clinicalqa.save(update_fields=["pairwise_opponents"])
    one, two = entered(("one", "strong"), ("two", "good"))
    pick = choose_opponents("three", [Opponent("one"), Opponent("two")], 1)
    broken, other = (one, two) if pick == ["one"] else (two, one)
    (Path(settings.PODIUM_PRIVATE_DIR) / broken.predictions_file).write_bytes(b"not json")

    (three,) = entered(("three", "weak"))

    job = BattleJob.objects.get(submission=three)
    assert job.opponents == [{"submission": other.pk, "model_name": other.model_name}]
    assert f"entry {broken.pk} is left out of three's battles" in caplog.text
