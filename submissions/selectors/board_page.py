"""One page of a board table (issue 13, point 11): the rows a search and a tag select, in the
order a column asks for, a page at a time, read from the database for that page only.

The order is the one `sort_board_rows` gives (the API sorts with it): equal values keep their
rank order in either direction, an empty value goes last whichever the direction, names compare
casefolded in code-point order (`BoardEntry.model_key` and `team_key`, written by
`recompute_board`; PostgreSQL compares them under the "C" collation, SQLite's default already
is). A test holds the two orders together on the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import Case, F, FloatField, Q, QuerySet, Value, When
from django.db.models.expressions import OrderBy
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Collate, NullIf
from django.utils.functional import cached_property

from benchmark.models import Benchmark, Metric

from ..charts.rank_intervals import ChartEntry
from ..enums import BoardKind, SubmissionSource, VerificationStatus
from ..models import BoardEntry
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
    """What a board shows: rows whose model or team contains `text` (casefolded), and that
    carry `tag` (a key of BOARD_TAGS); empty means no condition."""

    text: str = ""
    tag: str = ""

    @property
    def active(self) -> bool:
        return bool(self.text or self.tag)

    @property
    def params(self) -> dict[str, str]:
        """The query parameters that ask for this filter (none for the whole board)."""
        return {name: value for name, value in (("q", self.text), ("tag", self.tag)) if value}


def parse_board_filter(text: str | None, tag: str | None) -> BoardFilter:
    """The filter a board URL asks for (`?q=<text>&tag=<tag>`). An unknown tag is ignored, as
    an unknown sort is: a stray parameter never errors."""
    text = " ".join((text or "").split())[:MAX_SEARCH_CHARS]
    return BoardFilter(text=text, tag=tag if tag in BOARD_TAGS else "")


def filter_board_entries(entries: QuerySet[BoardEntry], board_filter: BoardFilter) -> QuerySet:
    """`entries` narrowed to the rows `board_filter` selects: the one rule for the board page,
    its downloads and the API."""
    if board_filter.text:
        needle = board_filter.text.casefold()
        entries = entries.filter(Q(model_key__contains=needle) | Q(team_key__contains=needle))
    if board_filter.tag:
        entries = entries.filter(TAG_FILTERS[board_filter.tag])
    return entries


def _code_points(field: str) -> Any:
    """`field` compared character by character as Python compares strings."""
    if connection.vendor == "postgresql":
        return Collate(F(field), "C")
    return F(field)  # SQLite's BINARY collation: UTF-8 bytes, hence code points


def _directed(expression: Any, descending: bool) -> OrderBy:
    return expression.desc(nulls_last=True) if descending else expression.asc(nulls_last=True)


def board_ordering(sort: BoardSort) -> list[Any]:
    """The `order_by` of `sort`, ties in rank order (ranks are unique within a board)."""
    if sort.key == "rank":
        return ["-rank" if sort.descending else "rank"]
    if sort.key == "model":
        return [_directed(_code_points("model_key"), sort.descending), "rank"]
    if sort.key == "team":
        no_team = Case(When(team_key="", then=Value(1)), default=Value(0))
        return [no_team.asc(), _directed(_code_points("team_key"), sort.descending), "rank"]
    if sort.key == "date":
        return [_directed(F("listed_at"), sort.descending), "rank"]
    # A missing value is JSON null: SQL NULL from PostgreSQL's ->>, the text "null" from
    # SQLite's (which CAST would read as 0.0), hence the NULLIF.
    value = Cast(NullIf(KeyTextTransform(sort.key, "values"), Value("null")), FloatField())
    return [_directed(value, sort.descending), "rank"]


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
    entries = BoardEntry.objects.filter(benchmark=benchmark, board__in=boards)
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
) -> BoardPage:
    """One page of the board's rows: a read of the page's rows with their submissions,
    whatever the board's size, after a COUNT of the rows the filter selects unless the caller
    knows it (`count`: the board summary's, when nothing is filtered). A page number past the
    last shows the last page, anything not a number the first (Django's `get_page`)."""
    page_size = page_size or settings.PODIUM_BOARD_PAGE_SIZE
    entries = (
        board_entries(benchmark, board, board_filter)
        .select_related("submission")
        .order_by(*board_ordering(sort))
    )
    paginator = CountedPaginator(entries, page_size, count=count)
    current: Page = paginator.get_page(page)
    rows = mark_tier_starts([board_row(entry, metrics) for entry in current], sort)
    query = {**board_filter.params}
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
    records = (
        board_entries(benchmark, board, board_filter)
        .order_by("rank")
        .values_list(
            "submission__model_name", "rank", "rank_best", "rank_worst", "tier", "submission_id"
        )[:limit]
    )
    return [
        ChartEntry(label=name, rank=rank, best=best, worst=worst, tier=tier, key=key)
        for name, rank, best, worst, tier, key in records
    ]


def board_download_query(board: BoardKind, sort: BoardSort, board_filter: BoardFilter) -> str:
    """The rankings API's query string for the board as shown (its sort, search and tag) but
    whole, not one page: what the CSV and JSON download links ask for."""
    return urlencode(
        {"board": board.value, "sort": sort.key, "direction": sort.direction, **board_filter.params}
    )
