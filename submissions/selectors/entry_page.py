"""Reads for the public page of one entry (issue 12, point 5): who may see it, and everything
it shows, from aggregates only.

What is public here is what the board and the status page already publish in aggregate: the
metrics with their 95% intervals, the rank with its rank interval and tier, the per-dataset
values, and how many answers of each task parsed (counts, never the unparsed answers, which
are the submitter's text). Per-sample contributions and replicates (`RunReplicates`'s
`contributions` and `values`) are never read. A verified upload's re-run is shown by its
discrepancy report's aggregates (`public_evidence`), never the endpoint or its answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q

from accounts.roles import can_view_all_entries
from benchmark.enums import RankingScope
from benchmark.models import Benchmark, Metric

from ..charts.bars import MetricBarInput, MetricBars, metric_bars
from ..charts.heatmap import Heatmap, dataset_heatmap
from ..charts.rank_history import NARROW as HISTORY_NARROW
from ..charts.rank_history import RankHistoryChart, rank_history_chart
from ..enums import STATES_JUDGE_PENDING, BoardKind, SubmissionSource, VerificationStatus
from ..judge_step import JudgeDetails, judge_details
from ..models import BoardEntry, Evaluation, RunReplicates, Submission
from ..public_evidence import RerunEvidence, numbers_source, rerun_evidence
from ..snapshot_trends import RankHistory, rank_history
from .entries import group_order, metric_value, newest_scored_run

# How many entries "statistically tied with ..." names before it says "and N more".
TIED_NAMES_SHOWN = 8
# The judge's scores run up to this unless the benchmark's rubric says otherwise.
DEFAULT_JUDGE_SCORE_MAX = 5


def entry_for_viewer(benchmark: Benchmark, pk: int, *, viewer: Any) -> Submission:
    """The entry `pk` of `benchmark` (which the caller found visible to `viewer`) if `viewer`
    may see its public page: a published entry for everyone; an evaluate-only one for its
    owner and those who may see every entry (`can_view_all_entries`). Raises
    `Submission.DoesNotExist` otherwise, so a hidden entry and a missing one look the same."""
    entries = Submission.objects.filter(benchmark=benchmark).select_related("benchmark")
    if not can_view_all_entries(viewer):
        visible = Q(publish=True)
        if getattr(viewer, "is_authenticated", False):
            visible |= Q(owner=viewer)
        entries = entries.filter(visible)
    return entries.get(pk=pk)


@dataclass(frozen=True)
class EntryMetric:
    """One metric of the entry, as printed: the value, its interval and the board's best."""

    key: str
    label: str
    value: float | None
    value_text: str  # "0.412", "pending" or "—"
    interval: tuple[float, float] | None
    interval_text: str  # "[0.380, 0.445]", "no interval (imported)", "pending", ...
    best: float | None
    best_text: str
    is_best: bool  # the entry holds the board's best value for this metric
    css: str  # "pending", "missing" or ""
    scale: tuple[float, float] | None  # None for a rating: no bar (issue 15)
    # "over 2,460 of 2,472 items": a judge metric a maintainer accepted over a subset (issue 10)
    note: str = ""


@dataclass(frozen=True)
class BoardNeighbour:
    submission_id: int
    model_name: str
    rank: int


@dataclass(frozen=True)
class EntryRank:
    """Where the entry stands on its board."""

    board: BoardKind
    rank: int
    out_of: int  # the entries ranked together: both boards under the global scope
    global_scope: bool
    rank_best: int | None
    rank_worst: int | None
    tier: int | None
    tied_with: tuple[BoardNeighbour, ...]
    tied_more: int  # tied entries beyond those named

    @property
    def has_interval(self) -> bool:
        return self.rank_best is not None and self.rank_worst is not None


@dataclass(frozen=True)
class ParseRate:
    """How many of one task's answers the official parser could read (counts only)."""

    task: str
    parsed: int
    total: int

    @property
    def percent(self) -> float | None:
        return 100.0 * self.parsed / self.total if self.total else None


@dataclass(frozen=True)
class DatasetTable:
    """The per-dataset values as a table (the heatmap's fallback): a row per metric."""

    datasets: list[str]
    rows: list[tuple[str, list[str]]]


@dataclass(frozen=True)
class EntryPage:
    submission: Submission
    evaluation: Evaluation | None
    board_entry: BoardEntry | None
    board: BoardKind  # the board the entry is on, or would land on (Community)
    is_imported: bool
    # Evaluated by Podium: its answers came from Podium's own calls to the model's endpoint
    # (hosted evaluation, docs/hosted.md).
    is_hosted: bool
    verification_label: str
    verified_at: datetime | None
    verification_changed_at: datetime | None
    listed_at: datetime | None
    rank: EntryRank | None
    leader: BoardNeighbour | None  # the board's first row, when it is another entry
    metrics: list[EntryMetric]
    bars: MetricBars | None
    per_dataset: DatasetTable | None
    heatmap: Heatmap | None
    parse_rates: list[ParseRate]
    judge: JudgeDetails | None
    has_judge_metrics: bool
    judge_pending: bool
    # What its verification rests on (issue 33, point 4): a verified upload's re-run, and where
    # the numbers came from when not from an uploaded file (an imported row's source, Podium's
    # own calls, a baseline the maintainers ran).
    evidence: RerunEvidence | None = None
    source: str = ""
    # Its rank in the latest snapshots of the boards (issue 33, point 3), oldest first, and
    # the chart of it (wide, narrow) once it is on two snapshots or more.
    rank_history: RankHistory | None = None
    rank_history_charts: tuple[RankHistoryChart, RankHistoryChart] | None = None


def entry_page(submission: Submission) -> EntryPage:
    """Everything the entry page shows about `submission` (the caller checked the viewer may see
    it with `entry_for_viewer`). The run shown is the board's (for a published, ranked entry),
    else the newest run with scores. A handful of queries whatever the board's size, plus one
    read of the board's rows (rank, tier and values) for its best values and its leader, and
    for a published entry its rank history (`snapshot_trends.rank_history`: one query for the
    latest snapshots, one more for those whose place is not cached)."""
    benchmark = submission.benchmark
    metrics = list(benchmark.metrics.all())
    board_entry = None
    if submission.publish:
        board_entry = (
            BoardEntry.objects.filter(submission=submission).select_related("evaluation").first()
        )
    evaluation = board_entry.evaluation if board_entry else newest_scored_run(submission)
    board = BoardKind(board_entry.board) if board_entry else submission.board
    if not submission.publish:
        board = BoardKind.COMMUNITY  # where it would land if published
    every_row = list(
        BoardEntry.objects.filter(benchmark=benchmark)
        .order_by("rank")
        .values_list(
            "submission_id", "rank", "tier", "values", "submission__model_name", "board",
            named=True,
        )
    )  # fmt: skip
    rows = [row for row in every_row if row.board == board]  # the entry's board, in rank order
    # The rank is over both boards together under the global scope, over its board otherwise.
    global_scope = benchmark.ranking_scope == RankingScope.GLOBAL
    ranked_over = len(every_row) if global_scope else len(rows)
    intervals = _intervals(board_entry, evaluation)
    is_imported = submission.source == SubmissionSource.IMPORTED
    shown = _metrics(
        metrics,
        evaluation,
        intervals,
        rows,
        benchmark=benchmark,
        judged_over=board_entry.judged_over if board_entry else {},
        board_shown=board_entry.values if board_entry else {},
    )
    leader = None
    if rows and rows[0].submission_id != submission.pk:
        leader = BoardNeighbour(rows[0].submission_id, rows[0].submission__model_name, rows[0].rank)
    result = (evaluation.result or {}) if evaluation else {}
    per_dataset = _per_dataset(result, metrics, benchmark)
    verified = submission.verification_status == VerificationStatus.VERIFIED
    # An evaluate-only entry was never on a board: no snapshot holds it.
    history = rank_history(benchmark.pk, submission.pk) if submission.publish else None
    return EntryPage(
        submission=submission,
        evaluation=evaluation,
        board_entry=board_entry,
        board=board,
        is_imported=is_imported,
        is_hosted=submission.source == SubmissionSource.HOSTED,
        verification_label=(
            VerificationStatus(submission.verification_status).label
            if submission.publish
            else "Evaluate only"
        ),
        verified_at=submission.verified_at if verified else None,
        verification_changed_at=submission.verification_changed_at,
        listed_at=board_entry.listed_at if board_entry else None,
        rank=_rank(
            board_entry, rows, submission.pk, ranked_over=ranked_over, global_scope=global_scope
        ),
        leader=leader,
        metrics=shown,
        bars=_bars(shown) if evaluation is not None else None,
        per_dataset=per_dataset[0] if per_dataset else None,
        heatmap=per_dataset[1] if per_dataset else None,
        parse_rates=[
            ParseRate(task, int(count.get("parsed", 0)), int(count.get("total", 0)))
            for task, count in (
                (task, result["parsed"][task])
                for task in group_order(result.get("parsed") or {}, metrics)
            )
        ],
        judge=judge_details(evaluation) if evaluation is not None and not is_imported else None,
        has_judge_metrics=any(metric.is_judge_metric for metric in metrics),
        judge_pending=evaluation is not None and evaluation.state in STATES_JUDGE_PENDING,
        evidence=rerun_evidence(submission),
        source=numbers_source(submission),
        rank_history=history,
        rank_history_charts=(
            rank_history_chart(history.points),
            rank_history_chart(history.points, layout=HISTORY_NARROW),
        )
        if history is not None and history.charted
        else None,
    )


def _intervals(
    board_entry: BoardEntry | None, evaluation: Evaluation | None
) -> dict[str, list[float] | None]:
    """metric key -> [low, high] or None: the board's copy for a ranked entry, else the run's
    public intervals (only that column of `RunReplicates` is read)."""
    if board_entry is not None:
        return board_entry.intervals or {}
    if evaluation is None:
        return {}
    found = (
        RunReplicates.objects.filter(evaluation=evaluation)
        .values_list("intervals", flat=True)
        .first()
    )
    return found or {}


def metric_scale(metric: Metric, benchmark: Benchmark) -> tuple[float, float] | None:
    """The range a metric's chart shows: 0 to the judge's highest score for a judge metric (its
    rubric's `score_max`), 0 to 1 for the others (shares: accuracies, IoUs, F1); None for a
    rating (issue 15), which has no fixed range and no bar."""
    if metric.is_rating:
        return None
    if metric.is_judge_metric:
        top = (benchmark.judge_settings or {}).get("score_max", DEFAULT_JUDGE_SCORE_MAX)
        return (0.0, float(top))
    return (0.0, 1.0)


def _metrics(
    metrics: list[Metric],
    evaluation: Evaluation | None,
    intervals: dict[str, list[float] | None],
    rows: list[Any],  # the board's rows (named tuples), in rank order
    *,
    benchmark: Benchmark,
    judged_over: dict[str, dict[str, int]],
    board_shown: dict[str, Any] | None = None,
) -> list[EntryMetric]:
    """The metrics as the page lists them: the run's values, except a rating (issue 15),
    which is the board's (the platform's, from battles; "rating pending" until then)."""
    if evaluation is None:
        return []
    pending = evaluation.state in STATES_JUDGE_PENDING
    imported = evaluation.test_set_id is None
    shown = []
    for metric in metrics:
        decimals = metric.display_decimals
        source = (board_shown or {}) if metric.is_rating else evaluation.metrics
        value = metric_value(source.get(metric.key))
        board_values = [
            found
            for row in rows
            if (found := metric_value((row.values or {}).get(metric.key))) is not None
        ]
        best = None
        if board_values:
            best = max(board_values) if metric.higher_is_better else min(board_values)
        found = intervals.get(metric.key)
        interval = (float(found[0]), float(found[1])) if found else None
        if value is None and metric.is_rating:
            value_text, interval_text, css = "rating pending", "battles not run yet", "pending"
            interval = None
        elif value is None:
            judge_pending = metric.is_judge_metric and pending
            value_text = "pending" if judge_pending else "—"
            interval_text = "pending" if judge_pending else ""
            css = "pending" if judge_pending else "missing"
            interval = None
        else:
            value_text, css = f"{value:.{decimals}f}", ""
            if interval is not None:
                interval_text = f"[{interval[0]:.{decimals}f}, {interval[1]:.{decimals}f}]"
            elif imported:
                interval_text = "no interval (imported)"
            else:
                interval_text = "no interval"
        shown.append(
            EntryMetric(
                key=metric.key,
                label=metric.label,
                value=value,
                value_text=value_text,
                interval=interval,
                interval_text=interval_text,
                best=best,
                best_text="—" if best is None else f"{best:.{decimals}f}",
                is_best=value is not None and best is not None and value == best,
                css=css,
                scale=metric_scale(metric, benchmark),
                note=_judged_over(judged_over.get(metric.key)) if value is not None else "",
            )
        )
    return shown


def _judged_over(over: dict[str, int] | None) -> str:
    return f"over {over['judged']:,} of {over['items']:,} items" if over else ""


def _bars(shown: list[EntryMetric]) -> MetricBars:
    inputs = []
    for line in shown:
        if line.scale is None:
            continue  # a rating (issue 15): an Elo number has no 0-to-1 bar; the table has it
        text = line.value_text
        if line.value is not None and line.interval is not None:
            text = f"{line.value_text} {line.interval_text}"
        elif line.value is not None:
            text = f"{line.value_text}, {line.interval_text}"
        inputs.append(
            MetricBarInput(
                key=line.key,
                value=line.value,
                interval=line.interval,
                best=line.best,
                scale=line.scale,
                value_text=text,
                scale_texts=(f"{line.scale[0]:g}", f"{line.scale[1]:g}"),
            )
        )
    return metric_bars(inputs)


def _rank(
    board_entry: BoardEntry | None,
    rows: list[Any],  # the board's rows (named tuples), in rank order
    submission_id: int,
    *,
    ranked_over: int,
    global_scope: bool,
) -> EntryRank | None:
    if board_entry is None:
        return None
    tied = []
    if board_entry.tier is not None:
        tied = [
            BoardNeighbour(row.submission_id, row.submission__model_name, row.rank)
            for row in rows
            if row.tier == board_entry.tier and row.submission_id != submission_id
        ]
    return EntryRank(
        board=BoardKind(board_entry.board),
        rank=board_entry.rank,
        out_of=ranked_over,
        global_scope=global_scope,
        rank_best=board_entry.rank_best,
        rank_worst=board_entry.rank_worst,
        tier=board_entry.tier,
        tied_with=tuple(tied[:TIED_NAMES_SHOWN]),
        tied_more=max(0, len(tied) - TIED_NAMES_SHOWN),
    )


def _per_dataset(
    result: dict[str, Any], metrics: list[Metric], benchmark: Benchmark
) -> tuple[DatasetTable, Heatmap] | None:
    """The per-dataset values (aggregates) as a table and a heatmap, a row per metric that
    reports any; None when the run has none (an imported row)."""
    per_dataset: dict[str, dict[str, Any]] = result.get("per_dataset") or {}
    shown = [
        metric
        for metric in metrics
        if per_dataset.get(metric.key) and metric_scale(metric, benchmark) is not None
    ]
    if not shown:
        return None
    datasets = group_order({name for metric in shown for name in per_dataset[metric.key]}, metrics)
    shares: dict[tuple[str, str], float | None] = {}
    texts: dict[tuple[str, str], str] = {}
    rows = []
    for metric in shown:
        low, high = metric_scale(metric, benchmark) or (0.0, 1.0)
        cells = []
        for dataset in datasets:
            value = metric_value(per_dataset[metric.key].get(dataset))
            text = "—" if value is None else f"{value:.{metric.display_decimals}f}"
            cells.append(text)
            texts[(metric.key, dataset)] = text
            shares[(metric.key, dataset)] = None if value is None else (value - low) / (high - low)
        rows.append((metric.key, cells))
    table = DatasetTable(datasets=datasets, rows=rows)
    return table, dataset_heatmap([metric.key for metric in shown], datasets, shares, texts)
