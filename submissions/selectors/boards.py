"""Reads for the board pages: the summary, the sort, the columns and the rows; and the About tab."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count

from benchmark.enums import RankingScope
from benchmark.facts import FACTS, fact_text
from benchmark.models import Benchmark, Category, Metric

from ..charts.rank_intervals import WIDE, ChartEntry, Layout, RankChart, rank_interval_chart
from ..enums import (
    BoardKind,
    SubmissionSource,
)
from ..models import BoardEntry, BoardTotals
from .entries import interval_range, metric_value

MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}
# The rank-interval chart under a board shows its first rows only (a 1,000-row chart says
# nothing a reader can take in); the table below it has them all.
RANK_CHART_ROWS = 30

# --- the board pages -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoardIntervals:
    """What a board table says about its rank intervals as a whole: `ready` when every row has
    one, `computing` when rows have metric intervals but the background task has not written
    the rank intervals yet, neither when no row has per-sample data (nothing will come)."""

    ready: bool
    computing: bool
    has_tiers: bool
    # Some row has metric intervals, or rank intervals are shown: only then does a row without
    # metric intervals say so (a board of imported rows alone says nothing about intervals).
    any_intervals: bool


NO_INTERVALS = BoardIntervals(ready=False, computing=False, has_tiers=False, any_intervals=False)


@dataclass(frozen=True)
class BoardSummary:
    """How many rows each board has, the state of each board's intervals, and when the board
    was last computed (None: never, or nothing to show). `computed_at` changes on every
    recompute, so it keys cached pages."""

    counts: dict[str, int]
    computed_at: datetime | None
    intervals: dict[str, BoardIntervals] = field(default_factory=dict)
    # Each board's first row's rank (1 unless the other board holds the ranks above it).
    first_ranks: dict[str, int] = field(default_factory=dict)
    # Each board's metrics with a value on some row (None: not known, show every column).
    filled_metrics: dict[str, list[str] | None] = field(default_factory=dict)
    # The boards where some row names a team (a board not recomputed since counts as one).
    teams: set[str] = field(default_factory=set)


def board_summary(benchmark: Benchmark) -> BoardSummary:
    """Row counts, interval states per board and the time of the last recompute: one read
    of the boards' stored totals (`BoardTotals`, written with the rows), whatever the
    board's size."""
    counts = {kind.value: 0 for kind in BoardKind}
    first_ranks = {kind.value: 1 for kind in BoardKind}
    filled: dict[str, list[str] | None] = {kind.value: None for kind in BoardKind}
    intervals = {kind.value: NO_INTERVALS for kind in BoardKind}
    computed_at = None
    teams = set()
    for totals in BoardTotals.objects.filter(benchmark=benchmark):
        if totals.has_teams:
            teams.add(totals.board)
        counts[totals.board] = totals.entries
        first_ranks[totals.board] = totals.first_rank
        filled[totals.board] = totals.filled_metrics
        ready = totals.entries > 0 and totals.with_rank_intervals == totals.entries
        intervals[totals.board] = BoardIntervals(
            ready=ready,
            computing=not ready and totals.with_intervals > 0,
            has_tiers=ready and totals.with_tiers == totals.entries,
            any_intervals=ready or totals.with_intervals > 0,
        )
        computed_at = max(filter(None, [computed_at, totals.computed_at]))
    return BoardSummary(
        counts=counts,
        computed_at=computed_at,
        intervals=intervals,
        first_ranks=first_ranks,
        filled_metrics=filled,
        teams=teams,
    )


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


def category_metrics(category: Category, metrics: list[Metric]) -> list[Metric]:
    """A category's columns (issue 15): its metrics, in the category's order."""
    by_key = {metric.key: metric for metric in metrics}
    return [by_key[key] for key in category.metric_keys if key in by_key]


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
    # A heading without a sort link (the model facts, issue 15).
    sortable: bool = True

    @property
    def label_parts(self) -> list[str]:
        """The label cut after each `_` and `@`, where a narrow heading may wrap
        ("TAG_" "mIoU@" "0.3"), never inside a word."""
        return re.split(r"(?<=[_@])", self.label)


# The columns besides the rank, the model and the metrics that a visitor may hide (issue 32).
OPTIONAL_FIXED_COLUMNS = frozenset({"team", "facts", "date"})


def choosable_columns(metrics: list[Metric], *, facts: bool) -> list[tuple[str, str]]:
    """(key, label) of every column a board's column chooser offers, in the table's order:
    the team, the model facts where the benchmark asks for them, each metric, the date."""
    return [
        ("team", "Team"),
        *([("facts", "Facts")] if facts else []),
        *((metric.key, "Rating" if metric.is_rating else metric.key) for metric in metrics),
        ("date", "Date"),
    ]


def empty_columns(
    metrics: list[Metric], summary: BoardSummary, board: str
) -> list[tuple[str, str]]:
    """(key, label) of the columns no row of `board` fills, which its page hides by default:
    a metric with no value on any row (`BoardTotals.filled_metrics`; a judge metric pending
    somewhere and a rating count as filled), the team when no row names one. None while the
    board's totals do not say (written before they did)."""
    filled = summary.filled_metrics.get(board)
    empty = [] if board in summary.teams else [("team", "Team")]
    if filled is not None:
        empty += [(metric.key, metric.key) for metric in metrics if metric.key not in filled]
    return empty


def board_columns(
    metrics: list[Metric],
    sort: BoardSort,
    keep: dict[str, str] | None = None,
    *,
    facts: bool = False,
    category: Category | None = None,
    team: bool = True,
    date: bool = True,
) -> list[BoardColumn]:
    """The board's header, in column order, each with a link that sorts by it: the first
    click gives the natural direction, a click on the sorted column reverses it. The links
    keep the query parameters in `keep` (the search, the tag, the facts and the tab) and go
    back to page 1. Issue 15: `facts` adds the model facts' column after the team (not
    sortable); on a category's tab the rank is the category's."""
    rank_title = "Rank on the board (mean rank over the metrics, then tiebreakers)"
    if category is not None:
        rank_title = (
            f"Rank in {category.label} (by its rating, highest first)"
            if category.ranks_by_rating
            else f"Rank in {category.label} (over its metrics, then tiebreakers)"
        )
    fixed = [
        ("rank", "Rank", rank_title),
        ("model", "Model", "Model name"),
        *([("team", "Team", "Team or institution")] if team else []),
    ]
    columns = [(key, label, title, key == "rank") for key, label, title in fixed]
    # A metric's heading is its key (the benchmark's own column names), a rating's "Rating":
    # its key names a category, not a number a reader looks up.
    columns += [
        (metric.key, "Rating" if metric.is_rating else metric.key, metric.label, True)
        for metric in metrics
    ]
    if date:
        columns.append(("date", "Date", "Verified on (official) or scored on (community)", False))
    header = []
    for key, label, title, numeric in columns:
        if key == sort.key:
            descending = not sort.descending
            aria_sort = "descending" if sort.descending else "ascending"
        else:
            descending = first_click_descending(key, metrics)
            aria_sort = ""
        href = "?" + urlencode(
            {**(keep or {}), "sort": key, "dir": "desc" if descending else "asc"}
        )
        header.append(BoardColumn(key, label, title, href, aria_sort, numeric))
        if facts and key == ("team" if team else "model"):
            # Beside the team, as part of who the entry is (after the metrics it would sit
            # past the table's right edge).
            title = "Model facts: type, size, licence, precision, domain-specific"
            header.append(BoardColumn("facts", "Facts", title, "", "", False, sortable=False))
    return header


@dataclass(frozen=True)
class BoardCell:
    text: str
    css: str  # "best", "second", "pending", "missing" or ""
    note: str = ""  # "over 2,460 of 2,472 items": a judge metric accepted over a subset
    # How sure the value is, for the cell's tooltip: "95% interval 0.512-0.604" (an en dash), "no interval
    # (imported)", "no interval" (issue 12).
    interval: str = ""
    # A rating (issue 15): the cell shows its interval beside it ("+19/-18") and its
    # battles as the note, and a pending one says so in its tooltip whatever the board.
    rating: bool = False
    spread: str = ""


# What a rating cell says before its category's battles have run (docs/boards.md).
RATING_PENDING = "rating pending: battles not run yet"


@dataclass(frozen=True)
class FactBadge:
    """One model fact on a row (issue 15): its key (the badge's class) and how it reads."""

    key: str
    text: str
    title: str


@dataclass(frozen=True)
class BoardRow:
    """One row of a board table, ready to print."""

    submission_id: int
    rank: int
    # The medal's place (1-3), 0 for none: the row's place on this board (issue 32: under the
    # global scope the Official board's leader may hold rank 2, and its medal says "1st");
    # on a category's tab, its rank there.
    medal: int
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
    # Issue 12: the 95% rank interval and the statistical tier within the board (None until
    # `compute_rank_intervals` wrote them, or when no row has replicates); `has_intervals` is
    # False for a row without per-sample data (an imported result: "no interval (imported)").
    rank_best: int | None = None
    rank_worst: int | None = None
    tier: int | None = None
    has_intervals: bool = True
    # The entry's paper and code, shown beside its name (issue 13, point 11).
    paper_url: str = ""
    code_url: str = ""
    # The first row of a tier in the order shown (only when the table is in rank order): the
    # table draws a separator above it.
    tier_start: bool = False
    # The model facts the benchmark asks for, as badges (issue 15; empty without them).
    facts: tuple[FactBadge, ...] = ()
    # Evaluated by Podium (hosted evaluation, docs/hosted.md): the row's badge.
    is_hosted: bool = False
    # The row's place in its board's rank order (1 to the board's rows): equal to `rank`
    # under the per-board scope, and where no entry of the other board ranks above it.
    position: int = 0

    @property
    def rank_interval(self) -> str:
        """ "2-5" (with an en dash), or "" without one."""
        if self.rank_best is None or self.rank_worst is None:
            return ""
        return f"{self.rank_best}\N{EN DASH}{self.rank_worst}"


def board_intervals(rows: list[BoardRow]) -> BoardIntervals:
    ready = bool(rows) and all(row.rank_best is not None for row in rows)
    with_intervals = any(row.has_intervals for row in rows)
    return BoardIntervals(
        ready=ready,
        computing=not ready and with_intervals,
        has_tiers=ready and all(row.tier is not None for row in rows),
        any_intervals=ready or with_intervals,
    )


def board_rank_chart(
    rows: list[BoardRow], *, limit: int = RANK_CHART_ROWS, layout: Layout = WIDE
) -> RankChart | None:
    """The rank-interval chart of a board's first `limit` rows in rank order (whatever order
    `rows` are in) in `layout`, or None until every row has its rank interval."""
    if not board_intervals(rows).ready:
        return None
    in_rank_order = sorted(rows, key=lambda row: row.rank)
    entries = [
        ChartEntry(
            label=row.model_name,
            rank=row.rank,
            best=row.rank_best,
            worst=row.rank_worst,
            tier=row.tier,
            key=row.submission_id,
        )
        for row in in_rank_order
    ]
    return rank_interval_chart(entries, total=len(entries), limit=limit, layout=layout)


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
    rows = [board_row(entry, metrics) for entry in entries]
    sort = sort or BoardSort()
    return mark_tier_starts(sort_board_rows(rows, sort), sort)


def mark_tier_starts(rows: list[BoardRow], sort: BoardSort) -> list[BoardRow]:
    """`rows` with `tier_start` set on each row whose tier differs from the row above, when
    they are in rank order (either way); sorted by another column, tiers are not contiguous
    and nothing is marked. The first row is never marked (nothing above it to separate)."""
    if sort.key != "rank":
        return rows
    marked = rows[:1]
    for above, row in itertools.pairwise(rows):
        start = row.tier is not None and above.tier is not None and row.tier != above.tier
        marked.append(replace(row, tier_start=True) if start else row)
    return marked


def board_row(
    entry: BoardEntry,
    metrics: list[Metric],
    *,
    category: Category | None = None,
    facts: Sequence[str] = (),
) -> BoardRow:
    """A row as the table prints it: `metrics` are the columns shown (a category's on its
    tab, issue 15, where the rank is the category's and there is no rank interval), `facts`
    the model facts the benchmark asks for."""
    submission = entry.submission
    values = {metric.key: metric_value(entry.values.get(metric.key)) for metric in metrics}
    has_intervals = bool(entry.intervals)
    is_imported = submission.source == SubmissionSource.IMPORTED
    # A run without per-sample data: an imported result, or an older run whose intervals
    # `compute_intervals` has not filled in.
    without = "no interval (imported)" if is_imported else "no interval (no per-sample data)"
    cells = []
    for metric in metrics:
        value = values[metric.key]
        if metric.is_rating:
            cells.append(_rating_cell(entry, metric, value))
        elif value is None:
            pending = metric.is_judge_metric and entry.judge_pending
            cells.append(
                BoardCell("pending" if pending else "—", "pending" if pending else "missing")
            )
        else:
            text = f"{value:.{metric.display_decimals}f}"
            over = entry.judged_over.get(metric.key)
            note = f"over {over['judged']:,} of {over['items']:,} items" if over else ""
            interval = _interval_text(entry.intervals, metric) if has_intervals else without
            cells.append(BoardCell(text, entry.highlights.get(metric.key, ""), note, interval))
    rank = entry.rank
    place = entry.position
    if category is not None:
        rank = place = (entry.category_ranks or {}).get(category.key, entry.rank)
    return BoardRow(
        submission_id=submission.pk,
        rank=rank,
        medal=place if place in MEDALS else 0,
        position=entry.position,
        mean_rank=entry.mean_rank,
        wins=entry.wins,
        model_name=submission.model_name,
        model_url=submission.model_url,
        team=submission.team_name or submission.institution,
        is_verified=submission.is_verified,
        is_baseline=submission.is_baseline,
        is_imported=is_imported,
        verified_at=submission.verified_at,
        listed_at=entry.listed_at,
        values=values,
        cells=cells,
        rank_best=entry.rank_best if category is None else None,
        rank_worst=entry.rank_worst if category is None else None,
        tier=entry.tier if category is None else None,
        has_intervals=has_intervals,
        paper_url=submission.paper_url,
        code_url=submission.code_url,
        is_hosted=submission.source == SubmissionSource.HOSTED,
        facts=fact_badges(entry.model_facts or {}, facts),
    )


def fact_badges(stored: dict[str, Any], keys: Sequence[str]) -> tuple[FactBadge, ...]:
    """The facts of `keys` a row has, as badges in the vocabulary's order."""
    badges = []
    for key in keys:
        text = fact_text(key, stored.get(key))
        if text:
            # "Domain-specific: yes" rather than its badge's "domain-specific" again.
            said = stored[key] if key == "domain_specific" else text
            badges.append(FactBadge(key, text, f"{FACTS[key].label}: {said}"))
    return tuple(badges)


def _rating_cell(entry: BoardEntry, metric: Metric, value: float | None) -> BoardCell:
    """A rating's cell: "1048" with "+19/-18" (its 95% interval as distances from it) and
    "312 battles"; "rating pending" until its category's battles are run."""
    if value is None:
        return BoardCell(
            "rating pending", "pending", "battles not run yet", RATING_PENDING, rating=True
        )
    decimals = metric.display_decimals
    battles = (entry.rating_battles or {}).get(metric.key)
    note = f"{battles:,} battle{'s' if battles != 1 else ''}" if battles is not None else ""
    return BoardCell(
        f"{value:.{decimals}f}",
        entry.highlights.get(metric.key, ""),
        note,
        _interval_text(entry.intervals, metric),
        rating=True,
        spread=rating_spread(value, (entry.intervals or {}).get(metric.key), decimals),
    )


def rating_spread(value: float, interval: Any, decimals: int) -> str:
    """A rating's 95% interval as MEDIC and Chatbot Arena print it: "+19/-18", how far above
    and below the rating its ends are (at the rating's decimals); "" without one."""
    if not interval:
        return ""
    low, high = (metric_value(bound) for bound in interval)
    if low is None or high is None:
        return ""
    return f"+{high - value:.{decimals}f}/-{value - low:.{decimals}f}"


def _interval_text(intervals: dict[str, Any], metric: Metric) -> str:
    """A metric cell's tooltip: its 95% interval at the column's decimals."""
    shown = interval_range(intervals.get(metric.key), metric.display_decimals)
    return f"95% interval {shown}" if shown else "no interval"


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


# --- the home page ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchmarkCard:
    """A benchmark on the home page: its rows on each board and the Official board's leader."""

    benchmark: Benchmark
    official: int
    community: int
    leader: str  # the model ranked first on the Official board ("" when it has no row)


def benchmark_cards(benchmarks: list[Benchmark]) -> list[BenchmarkCard]:
    """A card per benchmark, in two queries whatever their number: the row counts per board and
    each Official board's first row."""
    counts: dict[tuple[int, str], int] = {
        (row["benchmark"], row["board"]): row["count"]
        for row in BoardEntry.objects.filter(benchmark__in=benchmarks)
        .values("benchmark", "board")
        .annotate(count=Count("id"))
        .order_by()
    }
    # The Official board's first row, its position 1: rank 1 on a per-board ranking, possibly
    # lower under the global scope (a Community entry may rank above every verified one).
    leaders = dict(
        BoardEntry.objects.filter(benchmark__in=benchmarks, board=BoardKind.OFFICIAL, position=1)
        .values_list("benchmark", "submission__model_name")
        .order_by()
    )
    return [
        BenchmarkCard(
            benchmark=benchmark,
            official=counts.get((benchmark.pk, BoardKind.OFFICIAL.value), 0),
            community=counts.get((benchmark.pk, BoardKind.COMMUNITY.value), 0),
            leader=leaders.get(benchmark.pk, ""),
        )
        for benchmark in benchmarks
    ]


@dataclass(frozen=True)
class RanksAbove:
    """Under the global scope, the other board's entries ranked above a board's first row
    (issue 32: the Official board's leader read "2" with no word why): the first few, and how
    many there are in all."""

    first: list[BoardEntry]
    count: int
    leader_rank: int

    @property
    def other_board(self) -> str:
        return self.first[0].get_board_display() if self.first else ""


def ranks_above(
    benchmark: Benchmark, board: BoardKind, summary: BoardSummary, *, shown: int = 3
) -> RanksAbove | None:
    """The other board's entries whose (global) rank is above `board`'s first row, or None
    when there are none (the per-board scope, an empty board, a leader ranked 1): no query
    then (the summary has the first row's rank), else one or two on the rank index."""
    leader = summary.first_ranks.get(board, 1)
    if benchmark.ranking_scope != RankingScope.GLOBAL or leader <= 1:
        return None
    above = (
        BoardEntry.objects.filter(benchmark=benchmark, rank__lt=leader)
        .exclude(board=board)
        .select_related("submission")
        .order_by("rank")
    )
    first = list(above[:shown])
    count = len(first) if len(first) < shown else above.count()
    return RanksAbove(first=first, count=count, leader_rank=leader) if first else None


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
