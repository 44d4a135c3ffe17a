"""Where a run meets the LLM judge (step 2): the hook that tells the judge a run was scored,
the hook through which the entry page reads who judged a run, publishing the judge's metrics on
a run, and the copy of a finished run that a judge rerun works on.

`judging` sits above this app, so it registers its callbacks here (JudgingConfig.ready) instead
of being imported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction

from benchmark.plugins import plugin_for
from benchmark.scoring.rubric import JudgeOutcome
from core import audit
from core.exceptions import InvalidTransition

from .enums import EvaluationStatus
from .evaluation_status import set_evaluation_status
from .hooks import add_scored_listener as add_scored_listener  # the name callers know
from .hooks import board_judges_reader, judge_details_reader, scored_listeners
from .intervals import add_metric_replicates, copy_replicates
from .models import Evaluation


def notify_scored(evaluation_id: int) -> None:
    """Call each scored listener (`hooks.add_scored_listener`) after the commit."""
    for listener in scored_listeners:
        transaction.on_commit(partial(listener, evaluation_id))


@dataclass(frozen=True)
class JudgeDetails:
    """Who judged a run's captions, as the public entry page says it (issue 12, point 5): the
    judge model, the rubric's version (its content hash) and how many items were judged. No
    endpoint address, prompt or verdict: those stay in the judging app."""

    model: str
    rubric_version: str
    items_total: int
    items_judged: int
    items_failed: int
    finished_at: datetime | None


@dataclass(frozen=True)
class BoardJudge:
    """Who scored the judge columns of some of a board's rows (issue 32, point 4): a judge
    model and rubric version (Podium's judge: `model`, `rubric_version`), or the rows' own
    published numbers (`imported`: no judge of Podium's), and how many rows."""

    model: str
    rubric_version: str
    rows: int
    imported: bool = False
    # The judge endpoint's name, as the maintainers call it ("Stand-in judge (demo: ...)").
    judge: str = ""

    @property
    def label(self) -> str:
        if self.imported:
            return "as published with the imported results"
        named = f"{self.judge}: " if self.judge else ""
        return f"{named}{self.model}, rubric {self.rubric_version[:8]}"


def board_judges(benchmark_id: int, board: str) -> list[BoardJudge]:
    """Who scored the judge columns of a board's rows, most rows first ([] without a judge
    app, or when no row has judge values)."""
    if board_judges_reader.callback is None:
        return []
    return board_judges_reader.callback(benchmark_id, board)


def set_judge_details_reader(reader: Callable[[Evaluation], JudgeDetails | None] | None) -> None:
    """Register the function that tells who judged a run (None: forget it, for tests)."""
    judge_details_reader.set(reader)


def judge_details(evaluation: Evaluation) -> JudgeDetails | None:
    """The judge's details of the job that completed `evaluation`'s judge metrics, or None
    (no judge app installed, an imported run, not judged yet)."""
    if judge_details_reader.callback is None:
        return None
    return judge_details_reader.callback(evaluation)


def publish_judge_metrics(
    evaluation: Evaluation,
    outcome: JudgeOutcome,
    *,
    actor: Any = None,
    note: str = "",
    accept_partial: bool = False,
    contributions: Mapping[str, Any] | None = None,
    test_set: Any = None,
) -> Evaluation:
    """Store the judge's three metrics (full precision) on a run in `judging` and complete it;
    the board follows on commit. Refuses a run in any other state, and an outcome that leaves
    items out unless a maintainer accepted that (`accept_partial`; the result's `counts` then say how many items
    each metric is over, `scored` of `total`): `InvalidTransition`. `contributions` (with the
    run's parsed `test_set`) are what the judge metrics aggregate: their bootstrap replicates
    are stored with them (issue 12, `intervals.add_metric_replicates`)."""
    excluded = {
        name: counts["failed"] for name, counts in outcome.counts.items() if counts.get("failed")
    }
    if excluded and not accept_partial:
        raise InvalidTransition(
            "Judge metrics are never published over a subset of their items unless a "
            "maintainer accepts it: "
            + ", ".join(f"{name} lacks {count:,}" for name, count in excluded.items())
            + "."
        )
    with transaction.atomic():
        evaluation = Evaluation.objects.select_for_update().get(pk=evaluation.pk)
        if evaluation.state != EvaluationStatus.JUDGING:
            raise InvalidTransition(
                f"Judge metrics can only be published on a run being judged, not one that is "
                f"{evaluation.state.label.lower()}."
            )
        judge = _judge_of(evaluation)
        evaluation.metrics = {
            **evaluation.metrics,
            **{name: outcome.metrics.get(name) for name in judge.metrics},
        }
        if evaluation.result:
            evaluation.result = judge.with_outcome(evaluation.result, outcome)
        evaluation.save(update_fields=["metrics", "result"])
        if contributions and test_set is not None:
            add_metric_replicates(evaluation, test_set, contributions)
        return set_evaluation_status(
            evaluation, EvaluationStatus.COMPLETE, actor=actor, note=note or "judge finished"
        )


def copy_for_rejudge(evaluation: Evaluation, *, actor: Any) -> Evaluation:
    """A new run with `evaluation`'s automatic metrics and the judge metrics pending, for a
    judge rerun of a finished run (a run is never rewound). It starts in `scored`."""
    if evaluation.state != EvaluationStatus.COMPLETE or evaluation.test_set_id is None:
        raise InvalidTransition("Only a complete, scored run can be judged again.")
    judge = _judge_of(evaluation)
    metrics = {**evaluation.metrics, **dict.fromkeys(judge.metrics)}
    result = judge.without_outcome(evaluation.result) if evaluation.result else evaluation.result
    with transaction.atomic():
        copy = Evaluation.objects.create(
            submission=evaluation.submission,
            test_set=evaluation.test_set,
            requested_by=actor,
            scorer_version=evaluation.scorer_version,
            status=EvaluationStatus.SCORED,
            metrics=metrics,
            result=result,
            queued_at=evaluation.queued_at,
            scoring_started_at=evaluation.scoring_started_at,
            scored_at=evaluation.scored_at,
        )
        copy_replicates(evaluation, copy, without=judge.metrics)
        audit.record(
            "submissions.evaluation.copied_for_rejudge",
            actor=actor,
            target=copy,
            source_evaluation=evaluation.pk,
        )
    return copy


def _judge_of(evaluation: Evaluation) -> Any:
    """The judge step of the run's benchmark (its plugin's); InvalidTransition without one."""
    judge = plugin_for(evaluation.submission.benchmark).judge
    if judge is None:
        raise InvalidTransition(f"{evaluation.submission.benchmark.name} has no judge step.")
    return judge
