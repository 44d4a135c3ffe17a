"""Reads for a submission's own pages: its status, metrics, format report and would-be rank."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmark.enums import RankingScope
from benchmark.models import Metric
from benchmark.scoring.ranking import rank_entries

from ..board_state import board_is_behind
from ..enums import (
    STATES_JUDGE_PENDING,
    STATUS_TIMESTAMP_FIELD,
    BoardKind,
    EvaluationStatus,
)
from ..models import BoardEntry, Evaluation, RunReplicates, Submission
from .entries import (
    DeclaredOption,
    declared_options,
    group_order,
    interval_range,
    latest_evaluation,
    metric_specs,
    metric_value,
    newest_scored_run,
    own_published_copy,
    ranking_entry,
    ranking_policy,
)

# How many of the submitter's unparsed answers the status page shows per task, and how much
# of each (they are the submitter's own text, never a reference answer).
UNPARSED_EXAMPLES_SHOWN = 3
UNPARSED_EXAMPLE_CHARS = 300

# --- a submission's own pages --------------------------------------------------------------------


@dataclass(frozen=True)
class WouldBeRank:
    """Where an evaluate-only entry would stand if it were published (shown to its owner)."""

    rank: int
    out_of: int
    mean_rank: float
    board: BoardKind
    scope: str


def would_be_rank(submission: Submission, *, viewer: Any) -> WouldBeRank | None:
    """The rank an evaluate-only entry would have among the current published entries.

    Only its owner sees it (None for anyone else, for a published entry, or before the run has
    scores). Computed on the fly with the benchmark's ranking function and policy, against the
    same rows its board rank would be computed against: the union of both boards under the
    global scope, the Community board (where an unverified entry lands) under the per-board one.
    """
    if submission.publish or viewer is None or viewer.pk != submission.owner_id:
        return None
    run = newest_scored_run(submission)
    benchmark = submission.benchmark
    metrics = list(benchmark.metrics.all())
    if run is None or not metrics:
        return None
    published = BoardEntry.objects.filter(benchmark=benchmark)
    if benchmark.ranking_scope == RankingScope.PER_BOARD:
        published = published.filter(board=BoardKind.COMMUNITY)
    entries = [
        ranking_entry(submission_id, name, values, metrics)
        for submission_id, name, values in published.values_list(
            "submission_id", "submission__model_name", "values"
        )
    ]
    entries.append(ranking_entry(submission.pk, submission.model_name, run.metrics, metrics))
    ranked = rank_entries(entries, metric_specs(metrics), ranking_policy(benchmark))
    mine = next(row for row in ranked if row.key == submission.pk)
    return WouldBeRank(
        rank=mine.rank,
        out_of=len(ranked),
        mean_rank=mine.mean_rank,
        board=BoardKind.COMMUNITY,
        scope=str(benchmark.ranking_scope),
    )


@dataclass(frozen=True)
class Step:
    label: str
    state: str  # "done", "current", "todo"


@dataclass(frozen=True)
class MetricLine:
    key: str
    label: str
    text: str
    css: str  # "pending", "missing" or ""
    scored: int | None
    total: int | None
    # What `scored` and `total` count: "samples", or "items" for a judge metric (one judged
    # caption pair per event and threshold, more than the task's samples).
    unit: str = "samples"  # the benchmark's word (`Benchmark.wording`): "items" for MedSG-Bench
    # The 95% bootstrap interval as the value is shown ("0.512 to 0.604" with an en dash), or "" (none: pending,
    # an imported result, replicates not computed; docs/statistics.md).
    interval: str = ""


@dataclass(frozen=True)
class UnparsedAnswer:
    row: int
    sample_id: str
    prediction: str


@dataclass(frozen=True)
class TaskFormat:
    """How many of one task's answers the scorer's parser could read."""

    task: str
    parsed: int
    total: int
    examples: list[UnparsedAnswer]
    # What an answer that does not parse still gets, where the metric says (issue 13).
    note: str = ""

    @property
    def percent(self) -> float | None:
        """The share parsed, or None when the task had no answers to parse."""
        return 100.0 * self.parsed / self.total if self.total else None


@dataclass(frozen=True)
class DatasetBreakdown:
    """Per-dataset values: one row per dataset, one column per metric that has any."""

    metrics: list[Metric]
    rows: list[tuple[str, list[str]]]


@dataclass(frozen=True)
class SubmissionStatus:
    """Everything the status page shows about a submission, for its owner (or a maintainer)."""

    submission: Submission
    evaluation: Evaluation | None
    steps: list[Step]
    polling: bool
    metrics: list[MetricLine]
    per_dataset: DatasetBreakdown | None
    formats: list[TaskFormat]
    board_entry: BoardEntry | None
    would_be_rank: WouldBeRank | None
    # The entry's place among its own board's rows and their number (the rank shown is the
    # global one under the benchmark's global scope: issue 13).
    board_place: tuple[int, int] | None = None
    # The owner's earlier entries on this benchmark with a byte-identical file (issue 13).
    duplicates: list[Submission] = field(default_factory=list)
    # What the submission declared beside its file (its plugin's options: MedSG-Bench's box
    # convention and zero-shot declaration).
    options: list[DeclaredOption] = field(default_factory=list)
    # The owner's published entry with this entry's file, which keeps this one evaluate-only.
    listed_copy: Submission | None = None
    # A committed change is not on the board yet (its refresh is on its way): the rank stored
    # may be the one before the run's numbers, so none is shown and the page polls until the
    # board has it.
    placing: bool = False

    @property
    def has_scores(self) -> bool:
        return self.evaluation is not None and self.evaluation.state.has_scores

    @property
    def has_format_notes(self) -> bool:
        return any(task.note for task in self.formats)


# The steps a run goes through, as the progress indication shows them.
PROGRESS_STEPS = [
    EvaluationStatus.RECEIVED,
    EvaluationStatus.QUEUED,
    EvaluationStatus.SCORING,
    EvaluationStatus.SCORED,
    EvaluationStatus.JUDGING,
    EvaluationStatus.COMPLETE,
]
# While a run is in one of these states something is about to change: the page polls.
POLLING_STATES = frozenset(
    {
        EvaluationStatus.RECEIVED,
        EvaluationStatus.QUEUED,
        EvaluationStatus.SCORING,
        EvaluationStatus.JUDGING,
    }
)


def submission_status(submission: Submission, *, viewer: Any) -> SubmissionStatus:
    """The status page of a submission the viewer may see (`submission_for_user` checked it).

    Only aggregates from the run's stored result appear: the ten metrics, per-dataset values,
    and the format report with a few of the submitter's own unparsed answers. Per-sample
    scores and reference answers are never part of a result, so they cannot leak here.
    """
    evaluation = latest_evaluation(submission)
    metrics = list(submission.benchmark.metrics.all())
    board_entry = BoardEntry.objects.filter(submission=submission).first()
    options = declared_options(submission)
    if evaluation is None:
        return SubmissionStatus(
            submission, None, [], False, [], None, [], board_entry, None, options=options
        )
    result = evaluation.result or {}
    benchmark = submission.benchmark
    placing = submission.publish and evaluation.state.has_scores and board_is_behind(benchmark.pk)
    return SubmissionStatus(
        submission=submission,
        evaluation=evaluation,
        steps=_progress(evaluation, judge_step=benchmark.judge_step),
        polling=evaluation.state in POLLING_STATES or placing,
        placing=placing,
        metrics=(
            _metric_lines(evaluation, metrics, unit=benchmark.wording.items)
            if evaluation.state.has_scores
            else []
        ),
        per_dataset=_per_dataset(result, metrics),
        formats=_formats(result, metrics),
        options=options,
        board_entry=board_entry,
        would_be_rank=would_be_rank(submission, viewer=viewer),
        duplicates=own_duplicates(submission),
        listed_copy=listed_copy(submission),
        board_place=_board_place(board_entry),
    )


def _board_place(entry: BoardEntry | None) -> tuple[int, int] | None:
    """(place, rows) of the entry within its own board, in rank order."""
    if entry is None:
        return None
    rows = BoardEntry.objects.filter(benchmark_id=entry.benchmark_id, board=entry.board)
    return rows.filter(rank__lt=entry.rank).count() + 1, rows.count()


def duplicate_note(submission: Submission) -> str:
    """What the page and the upload's flash say of an entry whose file is the owner's earlier
    one (the same words in both, naming the same entries): it scores the same, and when one of
    those is published, this one stays evaluate-only (the same results are listed once)."""
    earlier = own_duplicates(submission)
    if not earlier:
        return ""
    names = [f"“{entry.model_name}”" for entry in earlier]
    listed = listed_copy(submission)
    named = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    text = (
        f"This file is byte for byte the one of your entr{'y' if len(names) == 1 else 'ies'} "
        f"{named}: it scores the same and counts towards your daily evaluations."
    )
    if listed is not None:
        text += (
            f" “{listed.model_name}” is on the boards with it, so this entry is evaluate-only: "
            "the same results are listed once. To list them under this entry's name instead, "
            f"take “{listed.model_name}” off the boards, then publish this one."
        )
    return text


def listed_copy(submission: Submission) -> Submission | None:
    """For an evaluate-only entry, the owner's published entry with the same file (the reason
    it is not listed itself), or None."""
    if submission.publish:
        return None
    return own_published_copy(
        submission.benchmark,
        submission.owner_id,
        submission.predictions_sha256,
        other_than=submission.pk,
    )


def own_duplicates(submission: Submission) -> list[Submission]:
    """The same owner's earlier entries on the benchmark whose file is byte-identical to this
    one's (by sha256): accepted, but the submitter is told it will score the same."""
    if not submission.predictions_sha256 or submission.owner_id is None:
        return []
    return list(
        Submission.objects.filter(
            benchmark_id=submission.benchmark_id,
            owner_id=submission.owner_id,
            predictions_sha256=submission.predictions_sha256,
            created_at__lt=submission.created_at,
        ).order_by("created_at")
    )


# The steps of a benchmark without a judge step (MedSG-Bench): a scored run is complete at
# once (submissions.scoring_runs), so "Scored (judge pending)" and "Judging captions" would be
# steps it never waits in.
JUDGE_STEPS = frozenset({EvaluationStatus.SCORED, EvaluationStatus.JUDGING})


def _progress(evaluation: Evaluation, *, judge_step: bool = True) -> list[Step]:
    steps = []
    for state in PROGRESS_STEPS:
        if not judge_step and state in JUDGE_STEPS and state != evaluation.state:
            continue
        if state == evaluation.state:
            progress = "done" if state == EvaluationStatus.COMPLETE else "current"
        elif getattr(evaluation, STATUS_TIMESTAMP_FIELD[state]) is not None:
            progress = "done"
        else:
            progress = "todo"
        steps.append(Step(EvaluationStatus(state).label, progress))
    return steps


def _metric_lines(
    evaluation: Evaluation, metrics: list[Metric], *, unit: str = "samples"
) -> list[MetricLine]:
    counts = (evaluation.result or {}).get("counts", {})
    pending = evaluation.state in STATES_JUDGE_PENDING
    intervals = (
        RunReplicates.objects.filter(evaluation=evaluation)
        .values_list("intervals", flat=True)
        .first()
    ) or {}
    lines = []
    for metric in metrics:
        value = metric_value(evaluation.metrics.get(metric.key))
        count = counts.get(metric.key, {})
        if value is not None:
            text, css = f"{value:.{metric.display_decimals}f}", ""
        elif metric.is_judge_metric and pending:
            text, css = "pending", "pending"
        else:
            text, css = "—", "missing"
        lines.append(
            MetricLine(
                metric.key,
                metric.label,
                text,
                css,
                count.get("scored"),
                count.get("total"),
                unit="items" if metric.is_judge_metric else unit,
                interval=interval_range(intervals.get(metric.key), metric.display_decimals),
            )
        )
    return lines


def _per_dataset(result: dict[str, Any], metrics: list[Metric]) -> DatasetBreakdown | None:
    per_dataset: dict[str, dict[str, float]] = result.get("per_dataset") or {}
    shown = [metric for metric in metrics if per_dataset.get(metric.key)]
    if not shown:
        return None
    datasets = group_order({name for metric in shown for name in per_dataset[metric.key]}, metrics)
    rows = []
    for dataset in datasets:
        cells = []
        for metric in shown:
            value = metric_value(per_dataset[metric.key].get(dataset))
            cells.append("—" if value is None else f"{value:.{metric.display_decimals}f}")
        rows.append((dataset, cells))
    return DatasetBreakdown(metrics=shown, rows=rows)


# Tasks whose unparsed answers still score (spec 3.4): said beside the parse rate, so "0 of 667
# parsed" next to a non-zero NAP_acc is not a puzzle.
FORMAT_NOTES = {
    "next_action": (
        "Parsed means the answer is exactly one of the question's class names. Any other "
        "answer is matched to the nearest class by meaning (the official MiniLM rule) and "
        "scored as that class, so unparsed answers still count towards NAP_acc."
    ),
}


def _formats(result: dict[str, Any], metrics: list[Metric]) -> list[TaskFormat]:
    examples = result.get("unparsed_examples") or {}
    parsed = result.get("parsed") or {}
    formats = []
    for task in group_order(parsed, metrics):
        count = parsed[task]
        shown = [
            UnparsedAnswer(
                row=example["row"],
                sample_id=example["id"],
                prediction=_clip(example["prediction"], UNPARSED_EXAMPLE_CHARS),
            )
            for example in examples.get(task, [])[:UNPARSED_EXAMPLES_SHOWN]
        ]
        formats.append(
            TaskFormat(task, count["parsed"], count["total"], shown, FORMAT_NOTES.get(task, ""))
        )
    return formats


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
