"""Reads for submissions, their runs and the boards. Each takes the viewer where visibility
depends on who asks, so views never re-derive who may see what."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Max, OuterRef, QuerySet, Subquery

from benchmark.enums import RankingScope
from benchmark.models import Benchmark, Metric
from benchmark.scoring.ranking import Entry, MetricSpec, RankingPolicy, rank_entries

from .enums import (
    STATES_JUDGE_PENDING,
    STATES_WITH_SCORES,
    STATUS_TIMESTAMP_FIELD,
    BoardKind,
    EvaluationStatus,
    SubmissionSource,
)
from .models import BoardEntry, Evaluation, Submission

MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}
# How many of the submitter's unparsed answers the status page shows per task, and how much
# of each (they are the submitter's own text, never a reference answer).
UNPARSED_EXAMPLES_SHOWN = 3
UNPARSED_EXAMPLE_CHARS = 300


# --- submissions ---------------------------------------------------------------------------------


def submissions_for_user(user: Any, *, benchmark: Benchmark | None = None) -> QuerySet[Submission]:
    """The user's own submissions, newest first, each annotated with its newest run's
    `latest_status` and carrying its board entry (if published and ranked). None for an
    anonymous user."""
    if not getattr(user, "is_authenticated", False):
        return Submission.objects.none()
    newest_run = Evaluation.objects.filter(submission=OuterRef("pk")).order_by("-created_at", "-id")
    submissions = (
        Submission.objects.filter(owner=user)
        .select_related("benchmark", "board_entry")
        .annotate(latest_status=Subquery(newest_run.values("status")[:1]))
        .order_by("-created_at", "-id")
    )
    if benchmark is not None:
        submissions = submissions.filter(benchmark=benchmark)
    return submissions


def submission_for_user(user: Any, pk: int) -> Submission:
    """The submission `pk` if `user` owns it or is staff; `Submission.DoesNotExist` otherwise
    (the page then 404s: another person's entry is not even confirmed to exist)."""
    submissions = Submission.objects.select_related("benchmark")
    if not getattr(user, "is_authenticated", False):
        raise Submission.DoesNotExist
    if not user.is_staff:
        submissions = submissions.filter(owner=user)
    return submissions.get(pk=pk)


def published_name_taken(benchmark: Benchmark, model_name: str) -> bool:
    """Whether a published entry on `benchmark` already has this model name (case-insensitive)."""
    return Submission.objects.filter(
        benchmark=benchmark, publish=True, model_name__iexact=model_name
    ).exists()


def latest_evaluation(submission: Submission) -> Evaluation | None:
    """The submission's newest run, whatever its state."""
    return submission.evaluations.order_by("-created_at", "-id").first()


# --- ranking inputs (shared by recompute_board and would_be_rank) --------------------------------


def ranking_policy(benchmark: Benchmark) -> RankingPolicy:
    """The benchmark's tie method and rounding as the pure ranking function takes them."""
    return RankingPolicy(tie_method=str(benchmark.tie_method), decimals=benchmark.ranking_decimals)


def metric_specs(metrics: list[Metric]) -> list[MetricSpec]:
    return [MetricSpec(metric.key, higher_is_better=metric.higher_is_better) for metric in metrics]


def metric_value(value: Any) -> float | None:
    """A stored metric value as a number, or None (missing, pending, or not a finite number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def ranking_entry(key: int, name: str, stored: dict[str, Any], metrics: list[Metric]) -> Entry:
    """One row for `rank_entries`. A pending judge metric is None, so it ranks last."""
    return Entry(
        key=key,
        name=name,
        values={metric.key: metric_value(stored.get(metric.key)) for metric in metrics},
    )


def board_candidates(benchmark: Benchmark) -> list[Evaluation]:
    """The run each published entry of `benchmark` shows: its newest run that has scores
    (scored, judging or complete), with its submission. Entries without one are not listed."""
    runs = (
        Evaluation.objects.filter(
            submission__benchmark=benchmark,
            submission__publish=True,
            status__in=STATES_WITH_SCORES,
        )
        .select_related("submission")
        .order_by("submission_id", "-created_at", "-id")
    )
    newest: dict[int, Evaluation] = {}
    for run in runs:
        newest.setdefault(run.submission_id, run)
    return list(newest.values())


def newest_scored_run(submission: Submission) -> Evaluation | None:
    return (
        submission.evaluations.filter(status__in=STATES_WITH_SCORES)
        .order_by("-created_at", "-id")
        .first()
    )


# --- the board pages -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoardSummary:
    """How many rows each board has and when the board was last computed (None: never, or
    nothing to show). `computed_at` changes on every recompute, so it keys cached pages."""

    counts: dict[str, int]
    computed_at: datetime | None


def board_summary(benchmark: Benchmark) -> BoardSummary:
    """Row counts per board and the time of the last recompute, in one query."""
    rows = (
        BoardEntry.objects.filter(benchmark=benchmark)
        .values("board")
        .annotate(count=Count("id"), computed_at=Max("computed_at"))
        .order_by()
    )
    counts = {kind.value: 0 for kind in BoardKind}
    computed_at = None
    for row in rows:
        counts[row["board"]] = row["count"]
        computed_at = max(filter(None, [computed_at, row["computed_at"]]))
    return BoardSummary(counts=counts, computed_at=computed_at)


# Columns a board can be sorted by besides the metrics, with their first-click direction.
FIXED_SORT_COLUMNS = {"rank": False, "model": False, "team": False, "date": True}


@dataclass(frozen=True)
class BoardSort:
    """Which column orders a board table and which way. Sorting never changes the rank column."""

    key: str = "rank"
    descending: bool = False

    @property
    def direction(self) -> str:
        return "desc" if self.descending else "asc"


def first_click_descending(key: str, metrics: list[Metric]) -> bool:
    """A column's natural direction: best first for a metric, newest first for the date."""
    if key in FIXED_SORT_COLUMNS:
        return FIXED_SORT_COLUMNS[key]
    metric = next(metric for metric in metrics if metric.key == key)
    return metric.higher_is_better


def parse_board_sort(key: str | None, direction: str | None, metrics: list[Metric]) -> BoardSort:
    """The sort a board URL asks for (`?sort=<column>&dir=asc|desc`); anything unknown falls
    back to the rank order, so a stray parameter never errors and never fills the cache."""
    keys = set(FIXED_SORT_COLUMNS) | {metric.key for metric in metrics}
    if not key or key not in keys:
        return BoardSort()
    if direction in ("asc", "desc"):
        return BoardSort(key, descending=direction == "desc")
    return BoardSort(key, descending=first_click_descending(key, metrics))


@dataclass(frozen=True)
class BoardColumn:
    """A header cell: its label, the one-click sort link, and whether it is the current sort."""

    key: str
    label: str
    title: str
    href: str
    aria_sort: str  # "ascending" / "descending" on the sorted column, "" elsewhere
    numeric: bool

    @property
    def label_parts(self) -> list[str]:
        """The label cut after each `_` and `@`, where a narrow heading may wrap
        ("TAG_" "mIoU@" "0.3"), never inside a word."""
        return re.split(r"(?<=[_@])", self.label)


def board_columns(metrics: list[Metric], sort: BoardSort) -> list[BoardColumn]:
    """The board's header, in column order, each with a link that sorts by it: the first
    click gives the natural direction, a click on the sorted column reverses it."""
    fixed = [
        ("rank", "Rank", "Rank on the board (mean rank over the metrics, then tiebreakers)"),
        ("model", "Model", "Model name"),
        ("team", "Team", "Team or institution"),
    ]
    columns = [(key, label, title, key == "rank") for key, label, title in fixed]
    columns += [(metric.key, metric.key, metric.label, True) for metric in metrics]
    columns.append(("date", "Date", "Verified on (official) or scored on (community)", False))
    header = []
    for key, label, title, numeric in columns:
        if key == sort.key:
            descending = not sort.descending
            aria_sort = "descending" if sort.descending else "ascending"
        else:
            descending = first_click_descending(key, metrics)
            aria_sort = ""
        href = "?" + urlencode({"sort": key, "dir": "desc" if descending else "asc"})
        header.append(BoardColumn(key, label, title, href, aria_sort, numeric))
    return header


@dataclass(frozen=True)
class BoardCell:
    text: str
    css: str  # "best", "second", "pending", "missing" or ""
    note: str = ""  # "over 2,460 of 2,472 items": a judge metric accepted over a subset


@dataclass(frozen=True)
class BoardRow:
    """One row of a board table, ready to print."""

    submission_id: int
    rank: int
    medal: str
    mean_rank: float
    wins: int
    model_name: str
    model_url: str
    team: str
    is_verified: bool
    is_baseline: bool
    is_imported: bool
    verified_at: datetime | None
    listed_at: datetime
    values: dict[str, float | None]
    cells: list[BoardCell]


def board_rows(
    benchmark: Benchmark,
    *,
    board: BoardKind,
    sort: BoardSort | None = None,
    metrics: list[Metric] | None = None,
) -> list[BoardRow]:
    """The rows of one board table, in rank order unless `sort` says otherwise.

    Reads the materialised `BoardEntry` rows with their submissions in one query whatever the
    board's size (plus one for the metrics unless the caller has them); ranks and highlights
    were computed by `recompute_board`. Only published entries are ever materialised, so
    evaluate-only runs never appear here.
    """
    if metrics is None:
        metrics = list(benchmark.metrics.all())
    entries = (
        BoardEntry.objects.filter(benchmark=benchmark, board=board)
        .select_related("submission")
        .order_by("rank")
    )
    rows = [_board_row(entry, metrics) for entry in entries]
    return sort_board_rows(rows, sort or BoardSort())


def _board_row(entry: BoardEntry, metrics: list[Metric]) -> BoardRow:
    submission = entry.submission
    values = {metric.key: metric_value(entry.values.get(metric.key)) for metric in metrics}
    cells = []
    for metric in metrics:
        value = values[metric.key]
        if value is None:
            pending = metric.is_judge_metric and entry.judge_pending
            cells.append(
                BoardCell("pending" if pending else "—", "pending" if pending else "missing")
            )
        else:
            text = f"{value:.{metric.display_decimals}f}"
            over = entry.judged_over.get(metric.key)
            note = f"over {over['judged']:,} of {over['items']:,} items" if over else ""
            cells.append(BoardCell(text, entry.highlights.get(metric.key, ""), note))
    return BoardRow(
        submission_id=submission.pk,
        rank=entry.rank,
        medal=MEDALS.get(entry.rank, ""),
        mean_rank=entry.mean_rank,
        wins=entry.wins,
        model_name=submission.model_name,
        model_url=submission.model_url,
        team=submission.team_name or submission.institution,
        is_verified=submission.is_verified,
        is_baseline=submission.is_baseline,
        is_imported=submission.source == SubmissionSource.IMPORTED,
        verified_at=submission.verified_at,
        listed_at=entry.listed_at,
        values=values,
        cells=cells,
    )


def sort_board_rows(rows: list[BoardRow], sort: BoardSort) -> list[BoardRow]:
    """`rows` (in rank order) ordered by one column. Equal values keep their rank order, and
    empty values (a missing metric, no team) go last whichever the direction."""
    if sort.key == "rank":
        return list(reversed(rows)) if sort.descending else list(rows)
    if sort.key == "model":
        value_of: Any = lambda row: row.model_name.casefold()  # noqa: E731
    elif sort.key == "team":
        value_of = lambda row: row.team.casefold() or None  # noqa: E731
    elif sort.key == "date":
        value_of = lambda row: row.listed_at  # noqa: E731
    else:
        value_of = lambda row: row.values.get(sort.key)  # noqa: E731
    present = [row for row in rows if value_of(row) is not None]
    empty = [row for row in rows if value_of(row) is None]
    # A stable sort: rows with equal values stay in rank order, in either direction.
    present.sort(key=value_of, reverse=sort.descending)
    return present + empty


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
    """Everything the status page shows about a submission, for its owner (or staff)."""

    submission: Submission
    evaluation: Evaluation | None
    steps: list[Step]
    polling: bool
    metrics: list[MetricLine]
    per_dataset: DatasetBreakdown | None
    formats: list[TaskFormat]
    board_entry: BoardEntry | None
    would_be_rank: WouldBeRank | None

    @property
    def has_scores(self) -> bool:
        return self.evaluation is not None and self.evaluation.state.has_scores


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
    if evaluation is None:
        return SubmissionStatus(submission, None, [], False, [], None, [], board_entry, None)
    result = evaluation.result or {}
    return SubmissionStatus(
        submission=submission,
        evaluation=evaluation,
        steps=_progress(evaluation),
        polling=evaluation.state in POLLING_STATES,
        metrics=_metric_lines(evaluation, metrics) if evaluation.state.has_scores else [],
        per_dataset=_per_dataset(result, metrics),
        formats=_formats(result),
        board_entry=board_entry,
        would_be_rank=would_be_rank(submission, viewer=viewer),
    )


def _progress(evaluation: Evaluation) -> list[Step]:
    steps = []
    for state in PROGRESS_STEPS:
        if state == evaluation.state:
            progress = "done" if state == EvaluationStatus.COMPLETE else "current"
        elif getattr(evaluation, STATUS_TIMESTAMP_FIELD[state]) is not None:
            progress = "done"
        else:
            progress = "todo"
        steps.append(Step(EvaluationStatus(state).label, progress))
    return steps


def _metric_lines(evaluation: Evaluation, metrics: list[Metric]) -> list[MetricLine]:
    counts = (evaluation.result or {}).get("counts", {})
    pending = evaluation.state in STATES_JUDGE_PENDING
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
            MetricLine(metric.key, metric.label, text, css, count.get("scored"), count.get("total"))
        )
    return lines


def _per_dataset(result: dict[str, Any], metrics: list[Metric]) -> DatasetBreakdown | None:
    per_dataset: dict[str, dict[str, float]] = result.get("per_dataset") or {}
    shown = [metric for metric in metrics if per_dataset.get(metric.key)]
    if not shown:
        return None
    datasets = sorted({name for metric in shown for name in per_dataset[metric.key]})
    rows = []
    for dataset in datasets:
        cells = []
        for metric in shown:
            value = metric_value(per_dataset[metric.key].get(dataset))
            cells.append("—" if value is None else f"{value:.{metric.display_decimals}f}")
        rows.append((dataset, cells))
    return DatasetBreakdown(metrics=shown, rows=rows)


def _formats(result: dict[str, Any]) -> list[TaskFormat]:
    examples = result.get("unparsed_examples") or {}
    formats = []
    for task, count in sorted((result.get("parsed") or {}).items()):
        shown = [
            UnparsedAnswer(
                row=example["row"],
                sample_id=example["id"],
                prediction=_clip(example["prediction"], UNPARSED_EXAMPLE_CHARS),
            )
            for example in examples.get(task, [])[:UNPARSED_EXAMPLES_SHOWN]
        ]
        formats.append(TaskFormat(task, count["parsed"], count["total"], shown))
    return formats


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the About tab -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextBlock:
    kind: str  # "heading", "list", "numbered" or "paragraph"
    lines: list[str]


NUMBERED_LINE = re.compile(r"^\d+\.\s+")


def about_blocks(text: str) -> list[TextBlock]:
    """A benchmark's About text (plain text, blocks separated by blank lines) as blocks: a
    block of "- " lines is a list, of "1. " lines a numbered list, a single short line without
    a final full stop a heading, anything else a paragraph. The text is maintainers' plain
    text, so the template escapes every line."""
    blocks = []
    for chunk in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in chunk.splitlines() if line.strip()]
        if not lines:
            continue
        if all(line.startswith("- ") for line in lines):
            blocks.append(TextBlock("list", [line[2:] for line in lines]))
        elif all(NUMBERED_LINE.match(line) for line in lines[1:]) and len(lines) > 1:
            heading, *items = lines
            blocks.append(TextBlock("paragraph", [heading]))
            blocks.append(TextBlock("numbered", [NUMBERED_LINE.sub("", item) for item in items]))
        elif len(lines) == 1 and len(lines[0]) <= 60 and not lines[0].endswith((".", ":")):
            blocks.append(TextBlock("heading", lines))
        else:
            blocks.append(TextBlock("paragraph", [" ".join(lines)]))
    return blocks
