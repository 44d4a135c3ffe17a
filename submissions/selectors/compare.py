"""Reads for the compare page (issue 12, point 7): which entries a viewer may compare, the runs
behind two of them, and the paired comparison laid out as lines to print.

Who sees what follows the rankings: a published entry of a benchmark the viewer can open is
everyone's; an evaluate-only entry is its owner's, and every entry is visible to those who
may see all entries (`accounts.roles.can_view_all_entries`: maintainers and superusers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, Q, Subquery

from accounts.roles import can_view_all_entries
from benchmark.models import Benchmark, Metric
from benchmark.scoring.bootstrap import PairedDifference

from ..enums import STATES_WITH_SCORES, BoardKind
from ..models import Evaluation, Submission
from .entries import group_order, metric_value


@dataclass(frozen=True)
class ComparableEntry:
    """One choice of the compare page's selects: an entry with scores the viewer may see, and
    the run it is compared on (its newest run with scores, the one the board shows)."""

    submission_id: int
    model_name: str
    run_id: int
    published: bool
    own: bool
    board: str | None  # "official" / "community" when the entry is on a board
    rank: int | None

    @property
    def label(self) -> str:
        """ "Model A · Official #3", "Model B · evaluate-only (yours)"."""
        if self.board and self.rank:
            return f"{self.model_name} · {BoardKind(self.board).label} #{self.rank}"
        if self.published:
            return f"{self.model_name} · published, not ranked yet"
        return f"{self.model_name} · evaluate-only" + (" (yours)" if self.own else "")


def comparable_entries(benchmark: Benchmark, *, viewer: Any) -> list[ComparableEntry]:
    """The entries of `benchmark` that `viewer` may compare, in one query: the board's rows
    in board order (Official first, by rank), then the others by model name. Only entries
    with a scored run are listed."""
    newest_run = Evaluation.objects.filter(
        submission=OuterRef("pk"), status__in=STATES_WITH_SCORES
    ).order_by("-created_at", "-id")
    entries = (
        Submission.objects.filter(benchmark=benchmark)
        .annotate(run_id=Subquery(newest_run.values("id")[:1]))
        .filter(run_id__isnull=False)
    )
    if not can_view_all_entries(viewer):
        visible = Q(publish=True)
        if getattr(viewer, "is_authenticated", False):
            visible |= Q(owner=viewer)
        entries = entries.filter(visible)
    records = entries.values_list(
        "pk", "model_name", "run_id", "publish", "owner_id",
        "board_entry__board", "board_entry__rank", named=True,
    )  # fmt: skip
    viewer_id = getattr(viewer, "pk", None)
    found = [
        ComparableEntry(
            submission_id=record.pk,
            model_name=record.model_name,
            run_id=record.run_id,
            published=record.publish,
            own=viewer_id is not None and record.owner_id == viewer_id,
            board=record.board_entry__board,
            rank=record.board_entry__rank,
        )
        for record in records
    ]
    board_order = {BoardKind.OFFICIAL.value: 0, BoardKind.COMMUNITY.value: 1}
    found.sort(
        key=lambda entry: (
            board_order.get(entry.board or "", 2),
            entry.rank or 0,
            entry.model_name.casefold(),
            entry.submission_id,
        )
    )
    return found


def comparable_runs(entries: list[ComparableEntry], *ids: int) -> list[Evaluation]:
    """The runs of the entries `ids` (among `entries`, the viewer's choices), with their
    submissions, in the order asked. Raises `KeyError` for an id not among them."""
    by_id = {entry.submission_id: entry for entry in entries}
    wanted = [by_id[pk].run_id for pk in ids]
    runs = Evaluation.objects.select_related("submission").in_bulk(wanted)
    return [runs[pk] for pk in wanted]


# --- the comparison as lines to print -------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Entry a against entry b (the compare API and page): per metric the paired difference,
    per dataset the point differences, and whether the replicates could be paired.

    `submissions.intervals.compare_runs` makes it; it lives here, below `intervals`, because
    the lines below read it and `intervals` imports the selectors (issue 33: no import
    circle)."""

    a: Evaluation
    b: Evaluation
    metrics: dict[str, PairedDifference]
    per_dataset: dict[str, dict[str, float | None]]
    paired: bool
    # Why there are no intervals, when `paired` is False ("" otherwise).
    unpaired_reason: str
    # metric key -> "a" | "b" | "tied" | None (no value or no interval)
    verdicts: dict[str, str | None]
    summary: str


@dataclass(frozen=True)
class CompareLine:
    """One metric of the comparison: both values, a - b with its interval and p-value, and
    which is better. Texts are formatted at the metric's decimals (the difference at one more,
    since differences are small)."""

    key: str
    label: str
    higher_is_better: bool
    value_a: str
    value_b: str
    difference: str
    interval: str
    p_value: str
    verdict: str | None  # "a", "b", "tied" or None
    verdict_text: str


@dataclass(frozen=True)
class DatasetLine:
    metric_key: str
    dataset: str
    value_a: str
    value_b: str
    difference: str


def _number(value: Any, decimals: int) -> str:
    found = metric_value(value)
    return "—" if found is None else f"{found:.{decimals}f}"


def _signed(value: Any, decimals: int) -> str:
    found = metric_value(value)
    if found is None:
        return "—"
    text = f"{found:+.{decimals}f}"
    return text.replace("-", "\N{MINUS SIGN}")  # as the page writes A - B


def compare_lines(comparison: Comparison, metrics: list[Metric]) -> list[CompareLine]:
    """The per-metric lines of a `Comparison`, in the benchmark's metric order. A metric
    without a value on one side says "pending" for a judge metric not judged yet, else "—"."""
    metrics_a = comparison.a.metrics or {}
    metrics_b = comparison.b.metrics or {}
    names = {"a": comparison.a.submission.model_name, "b": comparison.b.submission.model_name}
    lines = []
    for metric in metrics:
        found = comparison.metrics[metric.key]
        decimals = metric.display_decimals
        verdict = comparison.verdicts.get(metric.key)
        if verdict in names:
            verdict_text = f"{names[verdict]} is better"
        elif verdict == "tied":
            verdict_text = "cannot tell apart"
        elif found.difference is None:
            pending = metric.is_judge_metric and (
                metrics_a.get(metric.key) is None or metrics_b.get(metric.key) is None
            )
            verdict_text = "pending (not judged yet)" if pending else "no value to compare"
        else:
            verdict_text = "no interval"
        interval = "—"
        if found.interval is not None:
            low, high = found.interval
            interval = f"{_signed(low, decimals + 1)} to {_signed(high, decimals + 1)}"
        lines.append(
            CompareLine(
                key=metric.key,
                label=metric.label,
                higher_is_better=metric.higher_is_better,
                value_a=_number(metrics_a.get(metric.key), decimals),
                value_b=_number(metrics_b.get(metric.key), decimals),
                difference=_signed(found.difference, decimals + 1),
                interval=interval,
                p_value="—" if found.p_value is None else f"{found.p_value:.3f}",
                verdict=verdict,
                verdict_text=verdict_text,
            )
        )
    return lines


def dataset_lines(comparison: Comparison, metrics: list[Metric]) -> list[DatasetLine]:
    """Per metric and breakdown group, both runs' values and a - b (aggregates: public), in
    the benchmark's metric order, the groups as `group_order` puts them (MedSG-Bench's tasks
    in column order, MedVidBench's datasets by name)."""
    found_a = (comparison.a.result or {}).get("per_dataset") or {}
    found_b = (comparison.b.result or {}).get("per_dataset") or {}
    lines = []
    for metric in metrics:
        differences = comparison.per_dataset.get(metric.key) or {}
        decimals = metric.display_decimals
        for dataset in group_order(differences, metrics):
            difference = differences[dataset]
            lines.append(
                DatasetLine(
                    metric_key=metric.key,
                    dataset=dataset,
                    value_a=_number((found_a.get(metric.key) or {}).get(dataset), decimals),
                    value_b=_number((found_b.get(metric.key) or {}).get(dataset), decimals),
                    difference=_signed(difference, decimals + 1),
                )
            )
    return lines
