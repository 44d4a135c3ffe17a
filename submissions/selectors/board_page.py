"""One page of a board table (issue 13, point 11): the rows a search and a tag select, in the
order a column asks for, a page at a time, read from the database for that page only.

The order is the one `sort_board_rows` gives (the API sorts with it): equal values keep their
rank order in either direction, an empty value goes last whichever the direction, names compare
casefolded in code-point order (`BoardEntry.model_key` and `team_key`, written by
`recompute_board`; PostgreSQL compares them under the "C" collation, SQLite's default already
is). A test holds the two orders together on the same rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import numpy as np
from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import (
    Case,
    F,
    FloatField,
    IntegerField,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.expressions import OrderBy
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Collate, NullIf
from django.utils.functional import cached_property

from benchmark.facts import filterable_facts
from benchmark.models import Benchmark, Category, Metric

from ..charts.rank_intervals import ChartEntry
from ..enums import BoardKind, SubmissionSource, VerificationStatus
from ..models import BoardBuild, BoardEntry, BoardOrder
from .boards import (
    RANK_CHART_ROWS,
    BoardRow,
    BoardSort,
    board_row,
    mark_tier_starts,
)

# The tag select: value -> what it offers. A tag is what a row carries on the board (✓ verified,
# baseline, imported) or a link it shows (paper, code).
BOARD_TAGS = {
    "verified": "Verified by the maintainers",
    "baseline": "Baselines",
    "imported": "Imported results",
    "paper": "With a paper",
    "code": "With code",
}
TAG_FILTERS = {
    "verified": Q(submission__verification_status=VerificationStatus.VERIFIED),
    "baseline": Q(submission__is_baseline=True),
    "imported": Q(submission__source=SubmissionSource.IMPORTED),
    "paper": ~Q(submission__paper_url=""),
    "code": ~Q(submission__code_url=""),
}
# A search longer than any model name or team matches nothing anyway; the cut keeps URLs,
# queries and logs bounded.
MAX_SEARCH_CHARS = 100


@dataclass(frozen=True)
class BoardFilter:
    """What a board shows: rows whose model or team contains `text` (casefolded), that carry
    `tag` (a key of BOARD_TAGS), whose model facts have each (key, value) of `facts`
    (issue 15: `?type=`, `?precision=`, `?domain_specific=`) and whose parameter count lies
    in `size` (issue 32: `?size_min=`, `?size_max=`, billions, either end open); empty means
    no condition."""

    text: str = ""
    tag: str = ""
    facts: tuple[tuple[str, str], ...] = ()
    size: tuple[float | None, float | None] = (None, None)
    # `?columns=all` (issue 32): every column, the empty ones too; `?columns=<key>,<key>`:
    # the columns chosen (the rank, the model and the sorted column always show). Not a
    # filter of the rows: kept in the page's links, left out of the downloads (which have
    # every column).
    all_columns: bool = False
    columns: tuple[str, ...] = ()
    # What the URL asked for that this board does not take, in words ("Model type 'big' is
    # not one of ...; ignored."): the page says so rather than ignore it silently.
    ignored: tuple[str, ...] = field(default=(), compare=False)

    @property
    def active(self) -> bool:
        return bool(self.text or self.tag or self.facts or self.sized)

    @property
    def sized(self) -> bool:
        return self.size != (None, None)

    @property
    def params(self) -> dict[str, str]:
        """The query parameters that ask for this filter (none for the whole board), and for
        the columns chosen."""
        if self.all_columns:
            return self.row_params | {"columns": "all"}
        if self.columns:
            return self.row_params | {"columns": ",".join(self.columns)}
        return self.row_params

    @property
    def row_params(self) -> dict[str, str]:
        """The query parameters that choose the rows."""
        chosen = {name: value for name, value in (("q", self.text), ("tag", self.tag)) if value}
        sizes = {
            name: f"{value:g}"
            for name, value in zip(SIZE_PARAMS, self.size, strict=True)
            if value is not None
        }
        return chosen | dict(self.facts) | sizes

    def fact(self, key: str) -> str:
        """The value a fact is filtered on ("" for none)."""
        return dict(self.facts).get(key, "")

    @property
    def size_text(self) -> tuple[str, str]:
        """The size range's ends as its inputs show them ("" for an open end)."""
        return tuple("" if value is None else f"{value:g}" for value in self.size)  # type: ignore[return-value]


# The size range's parameters (billions of parameters; issue 32), where a benchmark asks for
# the parameter count.
SIZE_PARAMS = ("size_min", "size_max")
# A column list longer than any benchmark's columns is cut (a stray parameter never errors).
MAX_CHOSEN_COLUMNS = 64


def parse_size(raw: Any) -> float | None:
    """A size range's end as given ("7", "0.5", "70B"), or None for an empty, unreadable or
    non-positive one (ignored, as an unknown tag is)."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int | float):
        value = float(raw)  # the API's, validated already
    elif isinstance(raw, str):
        text = raw.strip().removesuffix("B").removesuffix("b").strip()
        try:
            value = float(text)
        except ValueError:
            return None
    else:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def parse_board_filter(
    text: str | None,
    tag: str | None,
    facts: Mapping[str, Any] | None = None,
    *,
    asked: Iterable[str] = (),
    columns: str | Sequence[str] | None = None,
    known_columns: Iterable[str] = (),
) -> BoardFilter:
    """The filter a board URL asks for (`?q=<text>&tag=<tag>`, a value for each fact the
    benchmark asks (`asked`) and boards filter on, and a size range where it asks for the
    parameter count). An unknown tag or fact value, or an unreadable size, is ignored, as an
    unknown sort is: a stray parameter never errors. `columns` is `?columns=` (the page's
    links send one comma-separated value, its chooser one value per column): "all", or keys
    of `known_columns` (unknown ones left out)."""
    text = " ".join((text or "").split())[:MAX_SEARCH_CHARS]
    asked = list(asked)
    ignored: list[str] = []
    if tag and tag not in BOARD_TAGS:
        ignored.append(f"Show {_quoted(tag)} is not one of its choices; every entry is shown.")
    chosen = []
    for definition in filterable_facts(asked):
        value = facts.get(definition.key) if facts else None
        if value in definition.values:
            chosen.append((definition.key, str(value)))
        elif value not in (None, ""):
            ignored.append(
                f"{definition.label} {_quoted(value)} is not one of "
                f"{', '.join(definition.values)}; ignored."
            )
    size: tuple[float | None, float | None] = (None, None)
    if facts and "parameters" in asked:
        low, high = (parse_size(facts.get(name)) for name in SIZE_PARAMS)
        for name, value, end in zip(SIZE_PARAMS, (low, high), ("from", "to"), strict=True):
            raw = facts.get(name)
            if value is None and isinstance(raw, str) and raw.strip():
                ignored.append(
                    f"Size {end} {_quoted(raw)} is not a number of billions (e.g. 7 or 0.5); "
                    "ignored."
                )
        if low is not None and high is not None and low > high:
            low, high = high, low  # "70 to 7" is the range from 7 to 70
        size = (low, high)
    given = [columns] if isinstance(columns, str) else list(columns or ())
    keys = [key.strip() for value in given for key in value.split(",") if key.strip()]
    known = list(known_columns)
    picked = tuple(key for key in known if key in keys)[:MAX_CHOSEN_COLUMNS]
    unknown = [key for key in keys if key != "all" and key not in known]
    if unknown and known:
        ignored.append(
            f"This board has no column {', '.join(_quoted(key) for key in unknown[:3])}; "
            + ("the default columns are shown." if not picked else "the others are shown.")
        )
    return BoardFilter(
        text=text,
        tag=tag if tag in BOARD_TAGS else "",
        facts=tuple(chosen),
        size=size,
        all_columns="all" in keys,
        columns=() if "all" in keys else picked,
        ignored=tuple(ignored),
    )


def _quoted(value: Any) -> str:
    """A value from the URL as a note quotes it: at most 40 characters."""
    text = repr(str(value))
    return text if len(text) <= 42 else text[:40] + "…'"


def filter_board_entries(entries: QuerySet[BoardEntry], board_filter: BoardFilter) -> QuerySet:
    """`entries` narrowed to the rows `board_filter` selects: the one rule for the board page,
    its downloads and the API. The facts are matched on the row's own copy
    (`BoardEntry.model_facts`), in the same query."""
    if board_filter.text:
        needle = board_filter.text.casefold()
        entries = entries.filter(Q(model_key__contains=needle) | Q(team_key__contains=needle))
    if board_filter.tag:
        entries = entries.filter(TAG_FILTERS[board_filter.tag])
    for key, value in board_filter.facts:
        # The JSON key lookup, which sends the value as JSON. An alias of KeyTextTransform
        # compared with the plain string made SQLite parse "no" as JSON ("malformed JSON":
        # tests/plugins/toy failed so on SQLite when run on its own).
        entries = entries.filter(**{f"model_facts__{key}": value})
    low, high = board_filter.size
    if low is not None:  # a row whose size its submitter did not give is outside any range
        entries = entries.filter(model_facts__parameters__gte=low)
    if high is not None:
        entries = entries.filter(model_facts__parameters__lte=high)
    return entries


def _code_points(field: str) -> Any:
    """`field` compared character by character as Python compares strings."""
    if connection.vendor == "postgresql":
        return Collate(F(field), "C")
    return F(field)  # SQLite's BINARY collation: UTF-8 bytes, hence code points


def _directed(expression: Any, descending: bool) -> OrderBy:
    return expression.desc(nulls_last=True) if descending else expression.asc(nulls_last=True)


def category_rank(category: str) -> Any:
    """A row's rank in a category's tab (`BoardEntry.category_ranks`), as an integer."""
    return Cast(KeyTextTransform(category, "category_ranks"), IntegerField())


def board_ordering(sort: BoardSort, category: str = "") -> list[Any]:
    """The `order_by` of `sort`, ties in rank order (ranks are unique within a board); on a
    category's tab (issue 15) "rank" is the category's rank, and ties follow it."""
    ranks: list[Any] = ["rank"]
    if category:
        ranks = [category_rank(category).asc(nulls_last=True), "rank"]
    if sort.key == "rank":
        if not sort.descending:
            return ranks
        if category:
            return [category_rank(category).desc(nulls_last=True), "-rank"]
        return ["-rank"]
    if sort.key == "model":
        return [_directed(_code_points("model_key"), sort.descending), *ranks]
    if sort.key == "team":
        no_team = Case(When(team_key="", then=Value(1)), default=Value(0))
        return [no_team.asc(), _directed(_code_points("team_key"), sort.descending), *ranks]
    if sort.key == "date":
        return [_directed(F("listed_at"), sort.descending), *ranks]
    # A missing value is JSON null: SQL NULL from PostgreSQL's ->>, the text "null" from
    # SQLite's (which CAST would read as 0.0), hence the NULLIF.
    value = Cast(NullIf(KeyTextTransform(sort.key, "values"), Value("null")), FloatField())
    return [_directed(value, sort.descending), *ranks]


class CountedPaginator(Paginator):
    """A paginator told the number of rows when the caller knows it, saving the COUNT."""

    def __init__(self, object_list: Any, per_page: int, *, count: int | None = None) -> None:
        super().__init__(object_list, per_page)
        self._known_count = count

    @cached_property
    def count(self) -> int:
        return super().count if self._known_count is None else self._known_count


@dataclass(frozen=True)
class PageLink:
    """One link of the pagination: a page number (or None for the "…" between them)."""

    number: int | None
    href: str
    current: bool = False


@dataclass(frozen=True)
class BoardPage:
    """The rows of one page of a board, and where the page sits among the others."""

    rows: list[BoardRow]
    number: int
    pages: int
    count: int  # rows the filter selects
    start: int  # 1-based position of the first row shown (0 when none)
    end: int
    links: list[PageLink]
    previous_href: str
    next_href: str


def board_entries(
    benchmark: Benchmark, board: str | Sequence[str], board_filter: BoardFilter | None = None
) -> QuerySet[BoardEntry]:
    """The rows of one board (or of several: a list of `BoardKind` values) the filter selects."""
    boards = [board] if isinstance(board, str) else list(board)
    entries = BoardEntry.objects.filter(benchmark=benchmark)
    if set(boards) != set(BoardKind.values):  # both: no condition, so an index gives the order
        entries = entries.filter(board__in=boards)
    return filter_board_entries(entries, board_filter or BoardFilter())


def board_page(
    benchmark: Benchmark,
    *,
    board: BoardKind,
    sort: BoardSort,
    board_filter: BoardFilter,
    page: str | int | None,
    metrics: list[Metric],
    count: int | None = None,
    page_size: int | None = None,
    category: Category | None = None,
    facts: Sequence[str] = (),
) -> BoardPage:
    """One page of the board's rows: a read of the page's rows with their submissions,
    whatever the board's size, after a COUNT of the rows the filter selects unless the caller
    knows it (`count`: the board summary's, when nothing is filtered). A page number past the
    last shows the last page, anything not a number the first (Django's `get_page`). On a
    category's tab (issue 15) the rows are in the category's rank order and `metrics` are its
    columns; `facts` are the model facts the rows show."""
    page_size = page_size or settings.PODIUM_BOARD_PAGE_SIZE
    entries = (
        board_entries(benchmark, board, board_filter)
        .select_related("submission")
        .order_by(*board_ordering(sort, category.key if category else ""))
    )
    paginator = CountedPaginator(entries, page_size, count=count)
    current: Page = paginator.get_page(page)
    start = (current.number - 1) * page_size
    whole = category is None and not board_filter.active
    shown: Iterable[BoardEntry] | None = None
    if whole and sort.key == "rank":
        # The whole board in rank order: the page is a range of positions, read through
        # their index (an offset would walk every row before the page).
        shown = position_range(
            entries, "position", start, page_size, paginator.count, descending=sort.descending
        )
    elif whole:
        # Sorted by another column: its stored order, when it is the board's build's.
        shown = stored_order_rows(entries, benchmark, board, sort, start, page_size)
    if shown is None:
        shown = _page_rows(entries, start, page_size)
    rows = [board_row(entry, metrics, category=category, facts=facts) for entry in shown]
    return paged_rows(rows, paginator, current, sort, board_filter, category)


def paged_rows(
    rows: list[BoardRow],
    paginator: Paginator,
    current: Page,
    sort: BoardSort,
    board_filter: BoardFilter,
    category: Category | None,
) -> BoardPage:
    """`rows` (the page `current` of `paginator`) as a `BoardPage`, with its tiers marked and
    the links to the other pages: the live board's and a snapshot's (`snapshot_board`)."""
    # A category's ranks have no rank intervals or tiers (those are the overview's).
    rows = mark_tier_starts(rows, sort) if category is None else rows
    query = {**board_filter.params, **({"category": category.key} if category else {})}
    if sort.key != "rank" or sort.descending:
        query |= {"sort": sort.key, "dir": sort.direction}

    def href(number: int) -> str:
        return "?" + urlencode({**query, "page": number} if number > 1 else query)

    number, pages = current.number, paginator.num_pages
    links = []
    for link in paginator.get_elided_page_range(number, on_each_side=2, on_ends=1):
        if isinstance(link, int):
            links.append(PageLink(link, href(link), current=link == number))
        else:  # Paginator.ELLIPSIS
            links.append(PageLink(None, ""))
    return BoardPage(
        rows=rows,
        number=number,
        pages=pages,
        count=paginator.count,
        start=current.start_index(),
        end=current.end_index(),
        links=links,
        previous_href=href(number - 1) if current.has_previous() else "",
        next_href=href(number + 1) if current.has_next() else "",
    )


def _page_rows(entries: QuerySet[BoardEntry], start: int, size: int) -> list[BoardEntry]:
    """The page's rows of `entries` in its order, found without their submissions, then read
    with them: joined first, PostgreSQL fetched the submission of every row of the board
    before it sorted them (0.7 s for a 66,666-row board sorted by a metric, half of it the
    join; issue 16). A row a recompute replaced between the two reads is left out."""
    keys = list(entries.values_list("pk", flat=True)[start : start + size])
    found = entries.model.objects.select_related("submission").in_bulk(keys)
    return [found[key] for key in keys if key in found]


def stored_order_page(
    entries: QuerySet[BoardEntry],
    benchmark: Benchmark,
    board: str,
    sort: BoardSort,
    start: int,
    size: int,
) -> tuple[QuerySet[BoardEntry], int] | None:
    """Rows `start` to `start + size` of `entries` (one whole board, or both: `board` is then
    `BoardOrder.BOTH`) in the order of `sort`
    (a column other than the rank), from the board's stored order (`BoardOrder`), and how
    many rows that is: the positions' slice, then a query of those rows by position (the
    board's index), in the slice's order, and only while they are the build's the order was
    computed for. None when the board has no order for its current build (its writer has not
    run since the recompute, or the column is not stored) or the slice is empty: the caller
    sorts in the database. A caller that reads fewer rows than the slice holds (a recompute
    replaced them between the two reads) does so too."""
    build = BoardBuild.objects.filter(benchmark=benchmark).values("built_at")[:1]
    found = (
        BoardOrder.objects.filter(
            benchmark=benchmark,
            board=board,
            key=sort.key,
            descending=sort.descending,
            built_at=Subquery(build),
        )
        .values_list("positions", "built_at")
        .first()
    )
    if found is None:
        return None
    stored, built_at = found
    wanted = np.frombuffer(stored, dtype=BoardOrder.POSITION_TYPE)[start : start + size].tolist()
    if not wanted:
        return None
    # Both boards' order holds their overall positions, a board's its own.
    field = "overall_position" if board == BoardOrder.BOTH else "position"
    place = Case(
        *(When(**{field: position}, then=Value(index)) for index, position in enumerate(wanted)),
        output_field=IntegerField(),
    )
    page = entries.filter(
        **{f"{field}__in": wanted}, benchmark__board_build__built_at=built_at
    ).order_by(place)
    return page, len(wanted)


def stored_order_rows(
    entries: QuerySet[BoardEntry],
    benchmark: Benchmark,
    board: str,
    sort: BoardSort,
    start: int,
    size: int,
) -> list[BoardEntry] | None:
    """`stored_order_page`'s rows, read; None where it gives none or fewer rows than the
    slice holds."""
    found = stored_order_page(entries, benchmark, board, sort, start, size)
    if found is None:
        return None
    page, expected = found
    rows = list(page)
    return rows if len(rows) == expected else None


def position_range(
    entries: QuerySet[BoardEntry],
    field: str,
    start: int,
    size: int,
    count: int,
    *,
    descending: bool = False,
) -> QuerySet[BoardEntry]:
    """Rows `start` to `start + size` (0-based, not included) of `entries` in the order of
    `field` (`position` within a board, `overall_position` across both; 1 to `count`
    without gaps), or the other way round: one range read of the position's index."""
    if descending:
        low, high = count - start - size + 1, count - start
    else:
        low, high = start + 1, start + size
    return entries.filter(**{f"{field}__gte": low, f"{field}__lte": high}).order_by(
        f"-{field}" if descending else field
    )


def board_chart_entries(
    benchmark: Benchmark,
    board: BoardKind,
    board_filter: BoardFilter,
    *,
    rows: list[BoardRow] | None = None,
    sort: BoardSort | None = None,
    page: int = 1,
    count: int | None = None,
    limit: int = RANK_CHART_ROWS,
) -> list[ChartEntry]:
    """The first `limit` rows the filter selects, in rank order, for the rank-interval chart
    (whatever order and page the table shows). The rows of the table's first page in rank
    order are those rows, when there are enough of them or they are all (`count`, the rows the
    filter selects); else one read of `limit` rows."""
    in_rank_order = sort is not None and sort.key == "rank" and not sort.descending
    enough = rows is not None and (len(rows) >= limit or len(rows) == count)
    if rows is not None and enough and in_rank_order and page == 1:
        return [
            ChartEntry(
                label=row.model_name,
                rank=row.rank,
                best=row.rank_best,
                worst=row.rank_worst,
                tier=row.tier,
                key=row.submission_id,
            )
            for row in rows[:limit]
        ]
    records = board_entries(benchmark, board, board_filter).order_by("position")
    if not board_filter.active:
        records = records.filter(position__lte=limit)  # the position index's first rows
    records = records.values_list(
        "submission__model_name", "rank", "rank_best", "rank_worst", "tier", "submission_id"
    )[:limit]
    return [
        ChartEntry(label=name, rank=rank, best=best, worst=worst, tier=tier, key=key)
        for name, rank, best, worst, tier, key in records
    ]


def board_download_query(
    board: BoardKind, sort: BoardSort, board_filter: BoardFilter, category: str = ""
) -> str:
    """The rankings API's query string for the board as shown (its tab, sort, search, tag
    and facts) but whole, not one page: what the CSV and JSON download links ask for."""
    return urlencode(
        {
            "board": board.value,
            **({"category": category} if category else {}),
            "sort": sort.key,
            "direction": sort.direction,
            **board_filter.row_params,
        }
    )


@dataclass(frozen=True)
class CategoryTab:
    """One tab above a board table (issue 15): "Overview" (`key` "") or a category."""

    key: str
    label: str
    href: str
    current: bool


def category_tabs(
    categories: Sequence[Category], current: Category | None, keep: Mapping[str, str]
) -> list[CategoryTab]:
    """The tabs of a benchmark with categories, "Overview" first: links to the same board
    (`?category=<key>`, bookmarkable), keeping the search, tag and facts in `keep` and
    dropping the sort and page (another tab has other columns). None without categories."""
    if not categories:
        return []
    tabs = [CategoryTab("", "Overview", "?" + urlencode(dict(keep)), current is None)]
    for category in categories:
        href = "?" + urlencode({"category": category.key, **keep})
        tabs.append(
            CategoryTab(
                category.key,
                category.label,
                href,
                current is not None and current.pk == category.pk,
            )
        )
    return tabs
