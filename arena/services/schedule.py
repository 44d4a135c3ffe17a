"""Scheduling battles (docs/ratings.md, "On the platform"): who a newcomer meets, on which
questions, in which order each battle's two rounds show the answers, and the judge calls that
makes. A newcomer meets `pairwise_opponents` entries on the boards chosen by their current
ratings (`benchmark.scoring.battles.choose_opponents`: one per stratum of the rating ladder,
never all pairs once there are more), on `pairwise_questions` questions per pairing
(`choose_questions`); both rounds of a battle are judged, round 1 showing first the answer
`first_shown` draws. A pair meets on a question once per category, whichever of them arrived
first. Everything is a pure function of the model names, the questions and the benchmark's
`rating_seed`.

The hooks: `start_battles_for_run` when an entry is scored, `on_board_recomputed` when the
boards change (an entry published later meets its opponents then; the ratings follow entries
leaving and rejoining the boards).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q

from benchmark.models import Benchmark
from benchmark.plugins import plugin_for
from benchmark.scoring.battles import Opponent, choose_opponents, choose_questions, first_shown
from benchmark.scoring.errors import PredictionsError
from benchmark.selectors import TestSetFileError, load_scoring_testset
from core import audit
from core.exceptions import DomainError, InvalidTransition, JudgeUnavailable
from judging.services import active_endpoint
from submissions.models import BoardEntry, CategoryRating, Evaluation, Submission
from submissions.selectors.files import predictions_bytes

from ..enums import ACTIVE_JOB_STATES, JobStatus, Shown
from ..models import Battle, BattleItem, BattleJob, CategoryFit
from ..selectors import can_battle, on_the_boards, rating_categories
from .jobs import enqueue_job, may_manage_jobs, set_job_status
from .rating import lock_fit, rate_category_now

logger = logging.getLogger(__name__)
BULK_BATCH = 1000


def judge_unavailable_reason(benchmark: Benchmark) -> str:
    """Why no battle of `benchmark` can be judged now ("" when one can)."""
    endpoint = active_endpoint(benchmark)
    if endpoint is None:
        return (
            f"No LLM judge endpoint is configured for {benchmark.name}, so no battle is run and "
            "its ratings stay pending."
        )
    if endpoint.missing_key:
        return (
            f"The judge endpoint {endpoint.name!r} has no API key configured, so no battle is "
            "run and the ratings stay pending."
        )
    return ""


@dataclass(frozen=True)
class Contender:
    """An entry as a battle sees it: its row, the run the board shows and its answers to the
    category's questions (question key -> answer)."""

    submission: Submission
    run: Evaluation
    answers: Mapping[str, str]


def _answers(
    plugin: Any, submission: Submission, test_set: Any, category: str
) -> Mapping[str, str]:
    """The entry's answers to the category's questions, read from its predictions file with
    the plugin's own checks (`PredictionsError`, `OSError` when it cannot be read)."""
    predictions = plugin.check_predictions(
        predictions_bytes(submission),
        test_set,
        options=submission.options or {},
        max_prediction_chars=None,
    )
    return plugin.pairwise.answers(test_set, predictions, category)


def _covered(benchmark: Benchmark, category: str, one: int, other: int) -> set[str]:
    """The questions the pair already has a battle on, or a judge call for in an active job."""
    pair = Q(model_a_id=one, model_b_id=other) | Q(model_a_id=other, model_b_id=one)
    stored = Battle.objects.filter(pair, benchmark=benchmark, category=category)
    in_flight = BattleItem.objects.filter(
        Q(job__submission_id=one, opponent_id=other) | Q(job__submission_id=other, opponent_id=one),
        job__benchmark=benchmark,
        job__category=category,
        job__status__in=sorted(ACTIVE_JOB_STATES),
    )
    return set(stored.values_list("question", flat=True)) | set(
        in_flight.values_list("question", flat=True)
    )


def _refused(submission: Submission, category: str, reason: str) -> DomainError:
    return DomainError(f"{submission.model_name} cannot battle in {category!r}: {reason}")


def start_battles(
    submission: Submission,
    category: str,
    *,
    actor: Any = None,
    enqueue: bool = True,
    rerun_of: BattleJob | None = None,
    opponents: Iterable[int] | None = None,
) -> BattleJob:
    """Schedule the battles of `submission` (the newcomer, model A) in one rating category and
    queue the job (on commit). A job already active for the entry and category is returned.

    The opponents are entries on the boards whose answers can be read against the same test
    set (uploaded, newest scored run on the newcomer's test set), chosen by
    `choose_opponents` from their current ratings (`opponents`, a rerun's submission ids,
    restricts the pool to those); each pairing is judged on `choose_questions` questions it
    has no battle on yet, two judge calls per battle. With nobody to meet the job is done at
    once ("it waits for the next entry"). Holds the category's lock while it schedules, so two
    jobs never schedule the same battle. Audited (`arena.job.created`).

    Refuses with `DomainError` naming why: not a rating category, a benchmark without
    pairwise battles, an entry not on the boards or without a predictions file, a file that
    fails today's checks; `JudgeUnavailable` without a usable judge endpoint."""
    benchmark = submission.benchmark
    if category not in {item.key for item in rating_categories(benchmark)}:
        raise _refused(submission, category, "it is not a rating category of the benchmark")
    plugin = plugin_for(benchmark)
    if plugin.pairwise is None:
        raise _refused(submission, category, f"{benchmark.name} has no pairwise battles")
    existing = BattleJob.objects.filter(
        submission=submission, category=category, status__in=sorted(ACTIVE_JOB_STATES)
    ).first()
    if existing is not None:
        return existing
    reason = judge_unavailable_reason(benchmark)
    if reason:
        raise JudgeUnavailable(reason)
    endpoint = active_endpoint(benchmark)
    assert endpoint is not None
    boards = on_the_boards(benchmark)
    if submission.pk not in boards:
        raise _refused(
            submission,
            category,
            "only entries on the boards battle (a published entry with a scored run); an "
            "evaluate-only entry meets its opponents once it is published",
        )
    if not can_battle(submission):
        raise _refused(submission, category, "it has no predictions file to read answers from")
    run = boards[submission.pk]
    try:
        test_set = load_scoring_testset(run.test_set)
        newcomer = Contender(submission, run, _answers(plugin, submission, test_set, category))
    except (TestSetFileError, OSError) as error:
        raise _refused(submission, category, f"its files cannot be read ({error})") from None
    except PredictionsError as error:
        raise _refused(
            submission, category, f"its predictions file fails today's checks ({error.problems[0]})"
        ) from None
    questions = dict(plugin.pairwise.questions(test_set, category))
    references = plugin.pairwise.references(test_set, category)

    with transaction.atomic():
        lock_fit(benchmark, category)
        existing = BattleJob.objects.filter(
            submission=submission, category=category, status__in=sorted(ACTIVE_JOB_STATES)
        ).first()
        if existing is not None:
            return existing
        pool = _pool(benchmark, newcomer, boards, opponents)
        chosen = _choose(plugin, benchmark, category, newcomer, pool, test_set)
        job = BattleJob.objects.create(
            benchmark=benchmark,
            category=category,
            submission=submission,
            test_set=run.test_set,
            endpoint=endpoint,
            requested_by=actor if getattr(actor, "is_authenticated", False) else None,
            rerun_of=rerun_of,
            model=endpoint.model,
            opponents=[
                {"submission": other.submission.pk, "model_name": other.submission.model_name}
                for other in chosen
            ],
        )
        items = []
        for other in chosen:
            items += _items(job, benchmark, plugin, newcomer, other, questions, references)
        BattleItem.objects.bulk_create(items, batch_size=BULK_BATCH)
        job.items_total, job.battles_total = len(items), len(items) // 2
        job.save(update_fields=["items_total", "battles_total"])
        audit.record(
            "arena.job.created",
            actor=actor,
            target=job,
            entry=submission.pk,
            category=category,
            opponents=[other.submission.model_name for other in chosen],
            battles=job.battles_total,
            model=endpoint.model,
        )
        if not items:
            _finish_empty(job, chosen)
        elif enqueue:
            transaction.on_commit(lambda: enqueue_job(job.pk))
    return job


def rerun_battles(job: BattleJob, *, actor: Any) -> BattleJob:
    """A maintainer runs a finished job's battles again: a new job for the same entry and
    category against the same opponents (those still on the boards), judging only the battles
    not stored yet (the dropped ones, or all of a failed or cancelled job); verdicts already
    cached cost nothing. `InvalidTransition` while the job (or another of the entry's in the
    category) is still active; `DomainError` without the permission."""
    if not may_manage_jobs(actor):
        raise DomainError("Only a maintainer may run battles again.")
    if job.state in ACTIVE_JOB_STATES:
        raise InvalidTransition(
            f"Battle job {job.pk} is still {job.state.label.lower()}; cancel it first."
        )
    # The same opponents; a job that had none (it waited) chooses again.
    opponents = [opponent["submission"] for opponent in job.opponents] or None
    new = start_battles(
        job.submission, job.category, actor=actor, rerun_of=job, opponents=opponents
    )
    audit.record("arena.job.rerun", actor=actor, target=new, rerun_of=job.pk)
    return new


def _pool(
    benchmark: Benchmark,
    newcomer: Contender,
    boards: Mapping[int, Evaluation],
    restrict: Iterable[int] | None,
) -> dict[str, Evaluation]:
    """The entries the newcomer may meet, by model name: on the boards, uploaded, their newest
    scored run on the newcomer's test set (and among `restrict`, a rerun's opponents)."""
    allowed = None if restrict is None else set(restrict)
    return {
        run.submission.model_name: run
        for submission_id, run in boards.items()
        if submission_id != newcomer.submission.pk
        and can_battle(run.submission)
        and (allowed is None or submission_id in allowed)
        and run.test_set_id == newcomer.run.test_set_id
    }


def _choose(
    plugin: Any,
    benchmark: Benchmark,
    category: str,
    newcomer: Contender,
    pool: dict[str, Evaluation],
    test_set: Any,
) -> list[Contender]:
    """`choose_opponents` over the pool by the category's current ratings (an entry not rated
    yet counts as unrated), in model-name order, with their answers. Only the chosen files are
    read; one the plugin refuses today is left out (and logged) and the choice made again."""
    ratings = dict(
        CategoryRating.objects.filter(benchmark=benchmark, category=category).values_list(
            "submission_id", "rating"
        )
    )
    pool = dict(pool)
    read: dict[str, Contender] = {}
    while True:
        names = choose_opponents(
            newcomer.submission.model_name,
            [Opponent(name, ratings.get(run.submission_id)) for name, run in pool.items()],
            benchmark.pairwise_opponents,
            seed=benchmark.rating_seed,
        )
        refused = False
        for name in names:
            if name in read:
                continue
            run = pool[name]
            try:
                answers = _answers(plugin, run.submission, test_set, category)
            except (OSError, PredictionsError) as error:
                logger.warning(
                    "entry %s is left out of %s's battles: its file cannot be read (%s)",
                    run.submission_id,
                    newcomer.submission.model_name,
                    error,
                )
                del pool[name]
                refused = True
                break
            read[name] = Contender(run.submission, run, answers)
        if not refused:
            return [read[name] for name in names]


def _items(
    job: BattleJob,
    benchmark: Benchmark,
    plugin: Any,
    newcomer: Contender,
    other: Contender,
    questions: Mapping[str, str],
    references: Mapping[str, str],
) -> list[BattleItem]:
    """The two judge calls of each battle of the newcomer (model A) against `other` (model B)
    on the pairing's questions not yet covered."""
    a, b = newcomer.submission.model_name, other.submission.model_name
    covered = _covered(benchmark, job.category, newcomer.submission.pk, other.submission.pk)
    keys = choose_questions(
        a, b, list(questions), benchmark.pairwise_questions, seed=benchmark.rating_seed
    )
    items = []
    for key in keys:
        if key in covered:
            continue
        answers = {Shown.MODEL_A: newcomer.answers[key], Shown.MODEL_B: other.answers[key]}
        first = (
            Shown.MODEL_A
            if first_shown(a, b, key, seed=benchmark.rating_seed) == a
            else (Shown.MODEL_B)
        )
        second = Shown.MODEL_B if first == Shown.MODEL_A else Shown.MODEL_A
        for number, shown in ((1, first), (2, second)):
            hidden = second if shown == first else first
            prompt = plugin.pairwise.battle_prompt(
                questions[key], answers[shown], answers[hidden], reference=references.get(key, "")
            )
            items.append(
                BattleItem(
                    job=job,
                    opponent=other.submission,
                    question=key,
                    round=number,
                    shown_first=shown,
                    prompt=prompt,
                    prompt_sha256=hashlib.sha256(prompt.encode()).hexdigest(),
                )
            )
    return items


def _finish_empty(job: BattleJob, chosen: list[Contender]) -> None:
    """A job with nothing to judge is done at once, saying why."""
    if not chosen:
        message = (
            "No other entry on the boards to battle yet: this entry meets the next one that "
            "arrives."
        )
    else:
        message = "Every battle of this schedule is stored already: nothing to judge."
    set_job_status(job, JobStatus.RUNNING, note="nothing to judge")
    set_job_status(job, JobStatus.DONE, message=message)
    if chosen:
        transaction.on_commit(lambda: rate_category_now(job.benchmark_id, job.category))


# --- the hooks ---------------------------------------------------------------------------------


def start_battles_for_run(evaluation_id: int) -> None:
    """The scored-run hook: an entry of a benchmark with rating categories was scored, so it
    meets its opponents in each of them (once per entry and category: a rescored entry has
    battled already). A refusal is logged with its reason, never raised: the run is scored and
    safe."""
    evaluation = (
        Evaluation.objects.select_related("submission__benchmark").filter(pk=evaluation_id).first()
    )
    if evaluation is None:
        return
    submission = evaluation.submission
    for category in rating_categories(submission.benchmark):
        if BattleJob.objects.filter(submission=submission, category=category.key).exists():
            continue
        _start_quietly(submission, category.key)


def _start_quietly(submission: Submission, category: str) -> BattleJob | None:
    try:
        return start_battles(submission, category)
    except DomainError as error:
        logger.info("no battles for entry %s in %s: %s", submission.pk, category, error)
    except Exception:
        logger.exception("scheduling the battles of entry %s in %s failed", submission.pk, category)
    return None


def on_board_recomputed(benchmark_id: int) -> None:
    """The board hook, after every commit that rewrote a benchmark's board: for each rating
    category of a benchmark with pairwise battles, an entry on the boards that never battled there (published after it was scored,
    or scored before a judge was configured) gets its battles, and the category is rated again
    when the entries on the boards are not those its last fit was over (an entry left or
    rejoined). Cheap when nothing moved: a few queries, no fit."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None or plugin_for(benchmark).pairwise is None:
        return  # no battles: whatever rates its categories is not this app
    categories = rating_categories(benchmark)
    if not categories:
        return
    members = sorted(
        set(BoardEntry.objects.filter(benchmark=benchmark).values_list("submission_id", flat=True))
    )
    fits = dict(CategoryFit.objects.filter(benchmark=benchmark).values_list("category", "members"))
    judge_ready = not judge_unavailable_reason(benchmark)
    for category in categories:
        if judge_ready:
            battled = set(
                BattleJob.objects.filter(benchmark=benchmark, category=category.key).values_list(
                    "submission_id", flat=True
                )
            )
            for submission in Submission.objects.filter(pk__in=set(members) - battled).order_by(
                "created_at", "id"
            ):
                if can_battle(submission):
                    _start_quietly(submission, category.key)
        if fits.get(category.key, []) != members:
            rate_category_now(benchmark.pk, category.key)
