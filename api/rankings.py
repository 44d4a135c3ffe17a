"""Read endpoints, public: a benchmark's rankings (JSON and CSV).

    GET /api/v1/benchmarks/<slug>/rankings/          rankings      (?format=csv for CSV)
    GET /api/v1/benchmarks/<slug>/rankings.csv       rankings-csv
    GET /api/v1/benchmarks/<slug>/rankings.json      rankings-json (every row, as a download)

The rankings read the materialised board (`BoardEntry`, written only by `recompute_board`), so
they hold published entries only: an evaluate-only run is never on a board. Everything a row
says about its place is stored there (issue 16): the rank, mean rank, wins, the per-metric
ranks and the two other tiebreak values; the rounded values the ranking compared are the
stored values rounded as the policy rounds. So a page is one read of its own rows, filtered,
ordered and sliced in the database in the HTML board's order (`board_ordering`), and its
count is the board's stored total unless a filter asks for a COUNT: nothing here ranks or
reads the rest of the board (the CSV and the JSON download read every row they hold).

A board only changes when `recompute_board` runs, which moves `computed_at`. That time keys
everything: the ETag and Last-Modified of a rankings response (a client polling with
If-None-Match gets 304 before any row is read), and the rendered body kept in Django's cache,
as the HTML board keeps its table (docs/boards.md). Rows are built as plain dicts rather than
through DRF serializers (which take ~50 ms for 1,000 nested rows); the serializers in
`api.rankings_serializers` describe the same shape for the schema, and a test holds the two
together.

Each row also carries how sure its numbers are (issue 12, docs/statistics.md): each metric's
interval and the row's rank interval and tier, as `recompute_board` and
`compute_rank_intervals` stored them on the board. Nothing here reads a test set's file, a
run's result or its replicates (`RunReplicates`): no reference answer, per-sample score,
replicate value or private path can be serialised.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db.models import QuerySet
from django.http import HttpResponse
from django.urls import path
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import http_date
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.models import Benchmark, Category, Metric
from submissions.board_json import (
    JSON_OPTIONS,
    RankingRow,
    overview_rows_json,
    ranking_rows,
)
from submissions.enums import BoardKind
from submissions.models import BoardEntry, BoardOrder
from submissions.selectors import (
    FIXED_SORT_COLUMNS,
    BoardFilter,
    BoardSort,
    BoardSummary,
    board_entries,
    board_ordering,
    board_summary,
    category_metrics,
    category_rank,
    first_click_descending,
    parse_board_filter,
    position_range,
    stored_order_page,
)

from .benchmarks import NotFoundSerializer, visible_benchmark
from .rankings_as_of import as_of_response
from .rankings_csv import CSVExtras, CSVRenderer, csv_body, csv_filename
from .rankings_page import page_bounds, page_json
from .rankings_serializers import (
    ALL_BOARDS,
    CSV_QUERY,
    FACT_FILTERS,
    JSON_QUERY,
    SIZE_FILTERS,
    InvalidParametersSerializer,
    RankingPageSerializer,
    RankingRowSerializer,
    RankingsQuerySerializer,
)

__all__ = [
    "JSON_QUERY",
    "RankingRow",
    "RankingRowSerializer",
    "RankingsQuerySerializer",
    "ranking_rows",
    "urlpatterns",
]

# Part of every ETag and cache key: bump it when the rankings' representation changes, so no
# client or cache keeps a body of the old shape.
# 2: intervals, rank intervals and tiers (issue 12).
# 3: categories, ratings and model facts (issue 15).
# 4: evaluated_by_podium (issue 15, hosted evaluation).
REPRESENTATION_VERSION = "4"


# --- rankings: rows ---------------------------------------------------------------------------------


def rankings_ordering(sort: BoardSort, category: Category | None) -> list[Any]:
    """The rows' order: the HTML board's (`board_ordering`: a column's values, equal ones in
    rank order, empty ones last) with the submission id after the rank, since under the
    per-board scope the two boards share ranks (`board=all`). `rank` descending is the
    rank order reversed, on a category's tab too (its rank order is the category's rank,
    then the rank)."""
    if sort.key == "rank" and sort.descending:
        if category is not None:
            return [category_rank(category.key).desc(nulls_first=True), "-rank", "-submission_id"]
        return ["-rank", "-submission_id"]
    return [*board_ordering(sort, category.key if category else ""), "submission_id"]


# --- views ----------------------------------------------------------------------------------------


RANKINGS_DESCRIPTION = """\
The board's rows, published entries only, by rank then submission id unless `sort` says \
otherwise. Each row has its rank, the ten metrics (the stored value at full precision, the \
rounded value the ranking compared, the rank on that metric and its 95% `interval`), the \
`rank_interval`, `tier` and `interval_note` (how sure each number is: docs/statistics.md), \
the tiebreak values, verification, team, links and dates.

CSV (`?format=csv`, `Accept: text/csv` or the `.csv` URL): the whole board, one row per entry, \
in the HTML board's column order (rank, model, team, the metrics, date) followed by the other \
fields, the intervals last (`<key>_low`, `<key>_high`, `rank_best`, `rank_worst`, `tier`, \
`interval_note`); the same values as the JSON, an empty cell for null.

A benchmark with categories (issue 15): `category=<key>` gives a tab's rows in its rank order \
(`category_rank`) with its columns only; every row has `category_ranks` and `model_facts`, and \
a rating metric's cell its `battles`. `type`, `precision` and `domain_specific` filter on the \
model facts. The CSV appends `category_rank`, `<key>_battles` and the facts.

Send `If-None-Match` with the last `ETag` (or `If-Modified-Since`): an unchanged board answers \
304 with no body. The board changes only when it is recomputed (`computed_at`)."""

# Errors are JSON whatever format was asked for (RankingsView.handle_exception).
RANKINGS_ERRORS = {
    304: OpenApiResponse(description="Not modified since the ETag or date given"),
    (400, "application/json"): OpenApiResponse(
        InvalidParametersSerializer, description="An invalid parameter"
    ),
    (404, "application/json"): OpenApiResponse(
        NotFoundSerializer,
        description=(
            "No such benchmark or page, or the benchmark has no such category, sort column or "
            "model fact (the message names those it has)"
        ),
    ),
}


# The filters' parameters (the board page's search and tag, the model facts), and the tab:
# left out of links and ETags when empty.
FILTERS = ("q", "tag", "category", *FACT_FILTERS, *SIZE_FILTERS, "as_of")

# What a rankings response is: a page of the JSON, every row of it as a download, or the CSV.
JSON_PAGE, JSON_WHOLE, CSV = "json", "json-whole", "csv"


class RankingsView(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]
    json_kind = JSON_PAGE

    @extend_schema(
        operation_id="benchmarks_rankings",
        summary="A benchmark's rankings, as JSON or CSV",
        description=RANKINGS_DESCRIPTION,
        parameters=[
            RankingsQuerySerializer,
            OpenApiParameter(
                "format", str, enum=["json", "csv"], description="json (default) or csv"
            ),
        ],
        responses={
            (200, "application/json"): RankingPageSerializer,
            (200, "text/csv"): OpenApiTypes.STR,
            **RANKINGS_ERRORS,
        },
    )
    def get(self, request: Request, slug: str, format: str | None = None) -> HttpResponse:
        benchmark = visible_benchmark(request, slug)
        query, metrics, category = _rankings_query(request, benchmark)
        kind = CSV if request.accepted_renderer.format == CSVRenderer.format else self.json_kind
        if query["as_of"]:  # issue 33: a board snapshot's rows
            shown = metrics if metrics is not None else list(benchmark.metrics.all())
            shown = category_metrics(category, shown) if category else shown
            canonical = _canonical_query(query, kind)
            keys = [metric.key for metric in shown]
            return as_of_response(request, benchmark, query, category, keys, kind, canonical)
        # The boards' stored totals: when they were computed (the ETag's) and their rows.
        summary = board_summary(benchmark)
        computed_at = summary.computed_at
        etag = _etag(benchmark, computed_at, _canonical_query(query, kind), kind)
        not_modified = get_conditional_response(
            request, etag=etag, last_modified=computed_at and int(computed_at.timestamp())
        )
        if not_modified is not None:
            return _with_validators(not_modified, benchmark, etag, computed_at)

        link_base = request.build_absolute_uri(request.path)
        body = _rankings_body(benchmark, metrics, query, summary, etag, link_base, kind, category)
        if kind == CSV:
            response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        else:
            response = HttpResponse(body, content_type="application/json")
        if kind != JSON_PAGE:
            extension = "csv" if kind == CSV else "json"
            filename = csv_filename(benchmark, query["board"], computed_at, extension=extension)
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return _with_validators(response, benchmark, etag, computed_at)

    def handle_exception(self, exc: Exception) -> Response:
        # Errors are JSON whatever format was asked for: a CSV of an error means nothing.
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)


class RankingsJSONView(RankingsView):
    renderer_classes = [JSONRenderer]
    json_kind = JSON_WHOLE

    @extend_schema(
        operation_id="benchmarks_rankings_json",
        summary="A benchmark's rankings as one JSON download",
        description=(
            "The JSON of the rankings endpoint with every row the parameters select in "
            "`results` (no pages: `page` and `page_size` are ignored, `next` and `previous` "
            "are null), sent as an attachment: the board page's JSON download."
        ),
        parameters=[RankingsQuerySerializer],
        responses={(200, "application/json"): RankingPageSerializer, **RANKINGS_ERRORS},
    )
    def get(self, request: Request, slug: str, format: str | None = None) -> HttpResponse:
        return super().get(request, slug, format)


class RankingsCSVView(RankingsView):
    renderer_classes = [CSVRenderer]

    @extend_schema(
        operation_id="benchmarks_rankings_csv",
        summary="A benchmark's rankings as CSV",
        description=RANKINGS_DESCRIPTION,
        parameters=[RankingsQuerySerializer],
        responses={(200, "text/csv"): OpenApiTypes.STR, **RANKINGS_ERRORS},
    )
    def get(self, request: Request, slug: str, format: str | None = None) -> HttpResponse:
        return super().get(request, slug, format)


def _rankings_query(
    request: Request, benchmark: Benchmark
) -> tuple[dict[str, Any], list[Metric] | None, Category | None]:
    """The validated parameters, with the direction filled in: 400 for a value the schema
    refuses, 404 naming what there is for a well-formed one this benchmark does not have (a
    category, a sort column, a model fact it does not ask for), as the board page's tabs.

    Also the benchmark's metrics when the sort names one (to check it and find its natural
    direction), else None: a revalidation or a cached body does not need them, and every
    query counts when a notebook polls; and the category asked for (None: the overview).
    """
    serializer = RankingsQuerySerializer(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    query = dict(serializer.validated_data)
    for name in SIZE_FILTERS:
        query.setdefault(name, None)
    unasked = [key for key in FACT_FILTERS if query[key] and key not in benchmark.fact_keys]
    if "parameters" not in benchmark.fact_keys:
        # The size range filters on the parameter count: the fact it does not ask for.
        unasked += ["parameters"] if any(query[name] is not None for name in SIZE_FILTERS) else []
    if unasked:
        asked = ", ".join(benchmark.fact_keys) or "none"
        raise NotFound(
            f"{benchmark.name} asks for no model fact {unasked[0]!r} (it asks for: {asked})."
        )
    category = _query_category(benchmark, query["category"])
    metrics = None
    if query["sort"] not in FIXED_SORT_COLUMNS:
        metrics = list(benchmark.metrics.all())
        columns_metrics = category_metrics(category, metrics) if category else metrics
        keys = [metric.key for metric in columns_metrics]
        if query["sort"] not in keys:
            columns = ", ".join([*FIXED_SORT_COLUMNS, *keys])
            where = f" on category {category.key!r}" if category else ""
            raise NotFound(
                f"{benchmark.name} has no column {query['sort']!r}{where}: sort by one of: "
                f"{columns}."
            )
    if "direction" not in query:
        descending = first_click_descending(query["sort"], metrics or [])
        query["direction"] = "desc" if descending else "asc"
    return query, metrics, category


def _query_category(benchmark: Benchmark, key: str) -> Category | None:
    """The category `category=` names (None for the overview), or 404 naming the benchmark's
    categories. One query, only when a category is asked for."""
    if not key:
        return None
    categories = list(benchmark.categories.all())
    found = next((category for category in categories if category.key == key), None)
    if found is None:
        known = ", ".join(category.key for category in categories) or "none"
        raise NotFound(f"{benchmark.name} has no category {key!r} (its categories: {known}).")
    return found


def _canonical_query(query: dict[str, Any], kind: str) -> dict[str, Any]:
    """The parameters that shape the body, in a fixed order: the CSV and the JSON download
    hold every row, so pages do not shape them. An empty search or tag is left out (it
    selects every row), so links and ETags are the same as before the filters existed."""
    names = JSON_QUERY if kind == JSON_PAGE else CSV_QUERY
    return {name: query[name] for name in names if name not in FILTERS or query[name]}


def _etag(
    benchmark: Benchmark, computed_at: datetime | None, query: dict[str, Any], kind: str
) -> str:
    stamp = computed_at.isoformat() if computed_at else "never"
    source = "|".join([REPRESENTATION_VERSION, str(benchmark.pk), stamp, kind, urlencode(query)])
    return f'"{hashlib.sha256(source.encode()).hexdigest()[:32]}"'


def _with_validators(
    response: HttpResponse, benchmark: Benchmark, etag: str, computed_at: datetime | None
) -> HttpResponse:
    """ETag and Last-Modified, and `no-cache` (store, but ask us each time: a 304 is cheap).
    A hidden benchmark's rankings are maintainers' only, so no shared cache may keep them."""
    response["ETag"] = etag
    if computed_at is not None:
        response["Last-Modified"] = http_date(computed_at.timestamp())
    visibility = {"public": True} if benchmark.is_public else {"private": True}
    patch_cache_control(response, no_cache=True, **visibility)
    return response


def _rankings_body(
    benchmark: Benchmark,
    metrics: list[Metric] | None,
    query: dict[str, Any],
    summary: BoardSummary,
    etag: str,
    link_base: str,
    kind: str,
    category: Category | None = None,
) -> bytes:
    """The response body, from the cache when this board (as of its `computed_at`, which the
    ETag holds) was already rendered with these parameters; the JSON's links name the host
    too."""
    key = f"podium:api:rankings:{etag}:{hashlib.sha256(link_base.encode()).hexdigest()}"
    body = cache.get(key)
    if body is not None:
        return body
    if metrics is None:
        metrics = list(benchmark.metrics.all())
    entries, board_filter = _board_entries(benchmark, query, category)
    shown = category_metrics(category, metrics) if category else metrics
    keys = [metric.key for metric in shown]
    if kind == CSV:
        extra = CSVExtras(
            category=category is not None,
            ratings=[metric.key for metric in shown if metric.is_rating],
            facts=benchmark.fact_keys,
        )
        body = csv_body(ranking_rows(benchmark, metrics, entries, category), keys, extra)
    else:
        count = _count(summary, query, entries, board_filter)
        page = _page(benchmark, metrics, entries, count, keys, query, summary.computed_at,
                     link_base, category=category, whole=kind == JSON_WHOLE,
                     filtered=board_filter.active)  # fmt: skip
        body = page.encode()
    if settings.PODIUM_BOARD_CACHE_SECONDS > 0:
        cache.set(key, body, settings.PODIUM_BOARD_CACHE_SECONDS)
    return body


def _board_entries(
    benchmark: Benchmark, query: dict[str, Any], category: Category | None
) -> tuple[QuerySet[BoardEntry], BoardFilter]:
    """The rows the parameters select (`board`, the board page's filters through its own
    selector), in their order, not yet read."""
    board_filter = parse_board_filter(query["q"], query["tag"], query, asked=benchmark.fact_keys)
    boards = BoardKind.values if query["board"] == ALL_BOARDS else [query["board"]]
    sort = BoardSort(query["sort"], descending=query["direction"] == "desc")
    entries = board_entries(benchmark, boards, board_filter).order_by(
        *rankings_ordering(sort, category)
    )
    return entries, board_filter


def _count(
    summary: BoardSummary,
    query: dict[str, Any],
    entries: QuerySet[BoardEntry],
    board_filter: BoardFilter,
) -> int:
    """How many rows the parameters select: the boards' stored totals, or a COUNT when a
    filter narrows them."""
    if board_filter.active:
        return entries.count()
    counts = summary.counts
    return sum(counts.values()) if query["board"] == ALL_BOARDS else counts[query["board"]]


def _page_rows_json(
    benchmark: Benchmark,
    metrics: list[Metric],
    page: QuerySet[BoardEntry],
    category: Category | None,
) -> list[str]:
    """The page's rows' JSON: the overview's as stored (`submissions.board_json`), else built
    and encoded here."""
    rows = overview_rows_json(page) if category is None else None
    if rows is None:
        rows = [
            json.dumps(row.body, **JSON_OPTIONS)
            for row in ranking_rows(benchmark, metrics, page, category)
        ]
    return rows


def _page(
    benchmark: Benchmark,
    metrics: list[Metric],
    entries: QuerySet[BoardEntry],
    count: int,
    keys: list[str],
    query: dict[str, Any],
    computed_at: datetime | None,
    link_base: str,
    *,
    category: Category | None = None,
    whole: bool = False,
    filtered: bool = False,
) -> str:
    """The page's JSON: the links and counts, and its rows' JSON in `results`."""
    bounds = page_bounds(query, count, whole=whole)
    start, size = bounds.start, bounds.size
    page = entries[start : start + size]
    expected = None  # the rows a stored order's page must have
    descending = query["direction"] == "desc"
    if category is None and not filtered and not whole:
        if query["sort"] == "rank":
            # The board (or both) in rank order: a range of positions, through their index.
            field = "overall_position" if query["board"] == ALL_BOARDS else "position"
            page = position_range(entries, field, start, size, count, descending=descending)
        else:
            # Sorted by another column: the board's (or both's) stored order, when it is the
            # build's.
            board = BoardOrder.BOTH if query["board"] == ALL_BOARDS else query["board"]
            sort = BoardSort(query["sort"], descending=descending)
            found = stored_order_page(entries, benchmark, board, sort, start, size)
            if found is not None:
                page, expected = found
    rows = _page_rows_json(benchmark, metrics, page, category)
    if expected is not None and len(rows) != expected:  # a recompute replaced the rows
        rows = _page_rows_json(benchmark, metrics, entries[start : start + size], category)

    canonical = _canonical_query(query, JSON_PAGE)
    return page_json(benchmark.slug, query, canonical, link_base, bounds, count, keys,
                     computed_at, rows)  # fmt: skip


urlpatterns = [
    path("benchmarks/<slug:slug>/rankings/", RankingsView.as_view(), name="rankings"),
    path(
        "benchmarks/<slug:slug>/rankings.json",
        RankingsJSONView.as_view(),
        name="rankings-json",
    ),
    path(
        "benchmarks/<slug:slug>/rankings.csv",
        RankingsCSVView.as_view(),
        {"format": "csv"},
        name="rankings-csv",
    ),
]
