"""The board pages (issue 33 split them from `views`): a board live (`board`), a board as a
snapshot holds it (`snapshot_board`, and `?as_of=` on the live URL, which redirects to the
snapshot's permanent page), and a benchmark's list of snapshots (`history`). A snapshot's
page is the live page's, from the snapshot's rows (`snapshot_board`), with a banner naming
the snapshot and how to cite it."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from benchmark.facts import filterable_facts
from benchmark.models import Benchmark, Category, Metric
from benchmark.selectors import benchmark_categories

from . import selectors
from .charts.rank_intervals import NARROW, ChartEntry, rank_interval_chart
from .enums import BoardKind
from .judge_step import board_judges
from .models import BoardSnapshot
from .ratings import rating_tab
from .snapshot_board import (
    parse_as_of,
    snapshot_board_row,
    snapshot_chart_rows,
    snapshot_selection,
    snapshot_summary_of,
)
from .snapshots import (
    DecodedSnapshot,
    decoded_snapshot,
    first_snapshot,
    sealed_snapshots,
    snapshot_as_of,
)
from .views import _official_how, _visible_benchmark


def board(request: HttpRequest, slug: str, board: str = BoardKind.OFFICIAL) -> HttpResponse:
    """One board table (Official or Community) a page at a time: searched by model or team
    (`?q=`), narrowed to a tag (`?tag=`) and to model facts (`?type=`, `?precision=`,
    `?domain_specific=`), sorted by `?sort=<column>&dir=asc|desc` (`?page=`), with the chart
    of its rank intervals and the board's downloads. A benchmark with categories (issue 15)
    has a tab per category beside the overview (`?category=<key>`: its columns and ranks; an
    unknown one is 404). `?as_of=<date or datetime>` (issue 33) goes to the page of the
    latest snapshot taken at or before that moment, with the other parameters."""
    benchmark = _visible_benchmark(request, slug)
    kind = BoardKind(board)
    if "as_of" in request.GET:
        return _as_of_redirect(request, benchmark, kind)
    return render(request, "submissions/board.html", board_context(request, benchmark, kind))


def snapshot_board(
    request: HttpRequest, slug: str, pk: int, board: str = BoardKind.OFFICIAL
) -> HttpResponse:
    """A board as snapshot `pk` holds it: the live board's page (sort, search, columns,
    intervals, chart, downloads) over the snapshot's rows, under a banner naming it."""
    benchmark = _visible_benchmark(request, slug)
    snapshot = (
        BoardSnapshot.objects.filter(benchmark=benchmark, pk=pk, sealed_at__isnull=False)
        .defer("csv", "rows")
        .first()
    )
    if snapshot is None:
        raise Http404(f"{benchmark.name} has no snapshot {pk}.")
    context = board_context(request, benchmark, BoardKind(board), snapshot=snapshot)
    return render(request, "submissions/board.html", context)


def snapshot_url(benchmark: Benchmark, snapshot: BoardSnapshot, board: str) -> str:
    name = (
        "submissions:snapshot" if board == BoardKind.OFFICIAL else "submissions:snapshot_community"
    )
    return reverse(name, args=[benchmark.slug, snapshot.pk])


def _as_of_redirect(request: HttpRequest, benchmark: Benchmark, kind: BoardKind) -> HttpResponse:
    """To the page of the snapshot `?as_of=` names, keeping the other parameters; a moment
    that is none, or before the first snapshot, is the history page saying so (404)."""
    raw = request.GET.get("as_of", "")
    try:
        snapshot = snapshot_as_of(benchmark, parse_as_of(raw))
    except ValueError as error:
        return _history(request, benchmark, missing=str(error))
    if snapshot is None:
        first = first_snapshot(benchmark)
        return _history(
            request,
            benchmark,
            missing=f"The boards have no snapshot as of {raw.strip()[:40]}: "
            + (
                f"the first was taken on {first.taken_at.date().isoformat()}."
                if first
                else "none has been taken yet."
            ),
        )
    rest = {key: value for key, value in request.GET.items() if key != "as_of"}
    target = snapshot_url(benchmark, snapshot, kind)
    return redirect(f"{target}?{urlencode(rest)}" if rest else target)


def history(request: HttpRequest, slug: str) -> HttpResponse:
    """The benchmark's snapshots, newest first: when, why, how many rows, the sha256."""
    return _history(request, _visible_benchmark(request, slug))


def _history(request: HttpRequest, benchmark: Benchmark, *, missing: str = "") -> HttpResponse:
    snapshots = list(sealed_snapshots(benchmark)[:500])
    # Each row's "Changes" link compares it with the snapshot before it (the next one down).
    rows = [
        (snapshot, snapshots[index + 1].pk if index + 1 < len(snapshots) else None)
        for index, snapshot in enumerate(snapshots)
    ]
    context = {
        "benchmark": benchmark,
        "tab": "history",
        "snapshots": snapshots,
        "rows": rows,
        "choices": snapshots,
        "missing": missing,
    }
    return render(request, "submissions/history.html", context, status=404 if missing else 200)


def cite_text(benchmark: Benchmark, snapshot: BoardSnapshot, kind: BoardKind, url: str) -> str:
    """How to cite a board as a snapshot holds it: the benchmark's BibTeX, then an entry for
    the snapshot with its id, date, sha256 and permanent URL."""
    taken = snapshot.taken_at.astimezone(UTC)
    entry = "\n".join(
        [
            f"@misc{{podium-{benchmark.slug}-snapshot-{snapshot.pk},",
            f"  title = {{{{{benchmark.name} {kind.label} board, snapshot {snapshot.pk}}}}},",
            f"  howpublished = {{\\url{{{url}}}}},",
            f"  year = {{{taken.year}}},",
            f"  month = {{{taken.strftime('%b').lower()}}},",
            f"  note = {{Podium board snapshot {snapshot.pk}, taken "
            f"{taken.strftime('%Y-%m-%d %H:%M')} UTC; sha256 of its CSV: {snapshot.sha256}}}",
            "}",
        ]
    )
    return f"{benchmark.citation.strip()}\n\n{entry}" if benchmark.citation.strip() else entry


def board_context(
    request: HttpRequest,
    benchmark: Benchmark,
    kind: BoardKind,
    *,
    snapshot: BoardSnapshot | None = None,
) -> dict[str, object]:
    """The board page's context: the live board's, or `snapshot`'s."""
    board = kind.value
    metrics = list(benchmark.metrics.all())
    categories = benchmark_categories(benchmark)
    category = _category(benchmark, categories, request.GET.get("category"))
    columns = selectors.category_metrics(category, metrics) if category else metrics
    sort = selectors.parse_board_sort(request.GET.get("sort"), request.GET.get("dir"), columns)
    facts = bool(benchmark.fact_keys)
    choosable = selectors.choosable_columns(columns, facts=facts)
    board_filter = selectors.parse_board_filter(
        request.GET.get("q"),
        request.GET.get("tag"),
        request.GET,
        asked=benchmark.fact_keys,
        columns=request.GET.getlist("columns"),
        known_columns=[key for key, _ in choosable],
    )
    decoded = decoded_snapshot(snapshot) if snapshot is not None else None
    summary = (
        selectors.board_summary(benchmark)
        if decoded is None
        else snapshot_summary_of(decoded, metrics, snapshot.taken_at)
    )
    # Issue 32: which columns show. By default every one some row of this board fills (a
    # metric with no value on any row, the Team column when no row names one, are hidden);
    # `?columns=all` every one; `?columns=<key>,...` those chosen. The rank, the model and
    # the sorted column always show.
    empty = selectors.empty_columns(columns, summary, board)
    if board_filter.all_columns:
        shown = {key for key, _ in choosable}
    elif board_filter.columns:
        shown = set(board_filter.columns)
    else:
        shown = {key for key, _ in choosable} - {key for key, _ in empty}
    shown.add(sort.key)
    table, chart = _board_parts(
        benchmark,
        kind,
        sort,
        board_filter,
        request.GET.get("page"),
        [metric for metric in columns if metric.key in shown],
        summary,
        category,
        fixed=frozenset(shown & set(selectors.OPTIONAL_FIXED_COLUMNS)),
        snapshot=(snapshot, decoded) if decoded is not None else None,
    )
    context = {
        "benchmark": benchmark,
        "tab": board,
        "board": kind,
        "summary": summary,
        "count": summary.counts[board],
        "sort": sort,
        "filter": board_filter,
        "tags": selectors.BOARD_TAGS,
        "size_filter": "parameters" in benchmark.fact_keys,
        "fact_filters": [
            (fact, board_filter.fact(fact.key)) for fact in filterable_facts(benchmark.fact_keys)
        ],
        "has_ratings": any(metric.is_rating for metric in metrics),
        "category": category,
        # A rating tab's battles and ratings in words, from the battles app (a hook).
        "rating_tab": rating_tab(benchmark, category),
        "category_tabs": selectors.category_tabs(categories, category, board_filter.params),
        "download_query": selectors.board_download_query(
            kind, sort, board_filter, category.key if category else ""
        ),
        "table": table,
        "chart": chart,
        # The column chooser (issue 32): every optional column, whether it shows, whether
        # no row fills it; what the default hides; the links to every column and back.
        "column_choices": [
            (key, label, key in shown, (key, label) in empty) for key, label in choosable
        ],
        # What the default hid (a visitor's own choice needs no note).
        "hidden_columns": []
        if board_filter.all_columns or board_filter.columns
        else [label for key, label in empty if key not in shown],
        "shown_count": sum(1 for key, _ in choosable if key in shown),
        "empty_count": len(empty),
        "columns_chosen": board_filter.all_columns or bool(board_filter.columns),
        "columns_query": _columns_query(category, board_filter, sort),
        # Who holds the ranks above this board's first row (the global scope; the overview).
        "ranks_above": None
        if category or snapshot
        else selectors.ranks_above(benchmark, kind, summary),
        **_official_how(benchmark),
    }
    cite = snapshot if snapshot is not None else sealed_snapshots(benchmark).first()
    if cite is not None:
        url = request.build_absolute_uri(snapshot_url(benchmark, cite, board))
        context |= {"cite_snapshot": cite, "cite_text": cite_text(benchmark, cite, kind, url)}
    if snapshot is not None:
        context |= {
            "snapshot": snapshot,
            "snapshot_urls": {
                "official": snapshot_url(benchmark, snapshot, BoardKind.OFFICIAL),
                "community": snapshot_url(benchmark, snapshot, BoardKind.COMMUNITY),
            },
            "permanent_url": request.build_absolute_uri(snapshot_url(benchmark, snapshot, board)),
            "ranks_above": None,
            "download_query": context["download_query"]
            + "&"
            + urlencode({"as_of": snapshot.taken_at.isoformat().replace("+00:00", "Z")}),
            "latest": sealed_snapshots(benchmark).values_list("pk", flat=True).first(),
        }
    return context


def _columns_query(
    category: Category | None, board_filter: selectors.BoardFilter, sort: selectors.BoardSort
) -> dict[str, str]:
    """The board's parameters but its columns: what the column chooser's form and its links
    keep."""
    return {
        **({"category": category.key} if category else {}),
        **board_filter.row_params,
        **(
            {"sort": sort.key, "dir": sort.direction}
            if sort.key != "rank" or sort.descending
            else {}
        ),
    }


def _category(benchmark: Benchmark, categories: list[Category], key: str | None) -> Category | None:
    """The tab `?category=` asks for: None for the overview; 404 naming the benchmark's
    categories for a key it does not have (a bookmark of a removed tab says so)."""
    if not key:
        return None
    found = next((category for category in categories if category.key == key), None)
    if found is None:
        known = ", ".join(category.key for category in categories) or "none"
        raise Http404(f"{benchmark.name} has no category {key!r} (its categories: {known}).")
    return found


def _board_parts(
    benchmark: Benchmark,
    board: BoardKind,
    sort: selectors.BoardSort,
    board_filter: selectors.BoardFilter,
    page: str | None,
    metrics: list[Metric],
    summary: selectors.BoardSummary,
    category: Category | None = None,
    fixed: frozenset[str] = selectors.OPTIONAL_FIXED_COLUMNS,
    snapshot: tuple[BoardSnapshot, DecodedSnapshot] | None = None,
) -> tuple[SafeString, SafeString]:
    """The table's (with its pagination) and the rank-interval chart's HTML, cached per board,
    sort, tag, page and recompute: the same for every viewer, and they only change when
    `recompute_board` or `compute_rank_intervals` runs (both move `computed_at`, hence the
    key). A search is not cached (its text is the searcher's; it reads one page anyway). A
    cache hit costs no query beyond the page's three; a miss reads the page's rows in one,
    plus a count and the interval state. A snapshot's (`snapshot`: it and its decoded rows)
    is keyed by the snapshot, which never changes."""
    key = None
    if (
        summary.computed_at is not None
        and settings.PODIUM_BOARD_CACHE_SECONDS > 0
        and not board_filter.text
    ):
        stamp = summary.computed_at.timestamp()
        page_key = page if page and page.isdigit() and len(page) < 8 else "1"
        key = (
            f"podium:board:v4:{benchmark.pk}:{board}:{stamp}:{sort.key}:{sort.direction}"
            f":{board_filter.tag}:{page_key}"
        )
        if snapshot is not None:
            key += f":snapshot={snapshot[0].pk}"
        # Issue 32: the columns shown (appended, so the keys of a board showing every
        # column are as they were).
        shown = ",".join([*sorted(fixed), *(metric.key for metric in metrics)])
        key += ":cols=" + hashlib.blake2b(shown.encode(), digest_size=8).hexdigest()
        if category is not None or board_filter.facts:
            # Issue 15: the tab and the facts shape the table too (appended, so the keys of a
            # board without them are as they were).
            facts = ",".join(f"{name}={value}" for name, value in board_filter.facts)
            key += f":{category.key if category else ''}:{facts}"
        if board_filter.sized:  # issue 32: the size range
            key += ":size=" + "-".join(board_filter.size_text)
        cached = cache.get(key)
        if cached is not None:
            # our own rendered templates, escaped when rendered
            return mark_safe(cached[0]), mark_safe(cached[1])
    facts = benchmark.fact_keys
    rows_page = (
        _snapshot_page(snapshot[1], board, sort, board_filter, page, metrics, category, facts)
        if snapshot is not None
        else None
    ) or selectors.board_page(
        benchmark,
        board=board,
        sort=sort,
        board_filter=board_filter,
        page=page,
        metrics=metrics,
        count=None if board_filter.active else summary.counts[board],
        category=category,
        facts=facts,
    )
    intervals = summary.intervals.get(board, selectors.NO_INTERVALS)
    if category is not None:
        # A category ranks without rank intervals or tiers (those are the overview's); its
        # values keep their intervals.
        intervals = replace(intervals, ready=False, computing=False, has_tiers=False)
    keep = {**board_filter.params, **({"category": category.key} if category else {})}
    chart = narrow_chart = None
    if intervals.ready and rows_page.count:
        entries = (
            _snapshot_chart_entries(snapshot[1], board, board_filter)
            if snapshot is not None
            else selectors.board_chart_entries(
                benchmark,
                board,
                board_filter,
                rows=rows_page.rows,
                sort=sort,
                page=rows_page.number,
                count=rows_page.count,
            )
        )
        chart = rank_interval_chart(entries, total=rows_page.count)
        narrow_chart = rank_interval_chart(entries, total=rows_page.count, layout=NARROW)
    context = {
        "benchmark": benchmark,
        "page": rows_page,
        "rows": rows_page.rows,
        # Who scored the judge columns shown, and whether they mix judges (issue 32).
        "judges": board_judges(benchmark.pk, board)
        if snapshot is None and any(metric.is_judge_metric for metric in metrics)
        else [],
        "judge_columns": ", ".join(metric.key for metric in metrics if metric.is_judge_metric),
        # Imported rows with a rank interval: the legend says what theirs means (issue 32).
        "has_fixed_rows": any(
            row.is_imported and not row.has_intervals and row.rank_interval
            for row in rows_page.rows
        ),
        "columns": selectors.board_columns(
            metrics,
            sort,
            keep,
            facts=bool(facts) and "facts" in fixed,
            category=category,
            team="team" in fixed,
            date="date" in fixed,
        ),
        "board": board,
        "filter": board_filter,
        "category": category,
        "show_facts": bool(facts) and "facts" in fixed,
        "show_team": "team" in fixed,
        "show_date": "date" in fixed,
        "intervals": intervals,
        "chart": chart,
        "narrow_chart": narrow_chart,
    }
    table = render_to_string("submissions/_board_table.html", context)
    chart_html = render_to_string("submissions/_rank_chart.html", context) if chart else ""
    if key is not None:
        cache.set(key, (table, chart_html), settings.PODIUM_BOARD_CACHE_SECONDS)
    # our own rendered templates, escaped when rendered
    return mark_safe(table), mark_safe(chart_html)


def _snapshot_page(
    snapshot: DecodedSnapshot,
    board: BoardKind,
    sort: selectors.BoardSort,
    board_filter: selectors.BoardFilter,
    page: str | None,
    metrics: list[Metric],
    category: Category | None,
    facts: list[str],
) -> selectors.BoardPage:
    """A page of a snapshot's board: its rows the filter selects, in the sort's order
    (`snapshot_board`, kept with the snapshot), printed by the live board's own `board_row`:
    only the page's rows are."""
    selected = snapshot_selection(
        snapshot, [board], board_filter, sort, category.key if category else ""
    )
    paginator = Paginator(selected, settings.PODIUM_BOARD_PAGE_SIZE)
    current = paginator.get_page(page)
    shown = [
        snapshot_board_row(row, metrics, category=category, facts=facts)
        for row in current.object_list
    ]
    return selectors.paged_rows(shown, paginator, current, sort, board_filter, category)


def _snapshot_chart_entries(
    snapshot: DecodedSnapshot, board: BoardKind, board_filter: selectors.BoardFilter
) -> list[ChartEntry]:
    """The chart's rows: the first the filter selects in rank order (`board_chart_entries`)."""
    first = snapshot_chart_rows(snapshot, board, board_filter, selectors.RANK_CHART_ROWS)
    return [
        ChartEntry(
            label=row["model"],
            rank=row["rank"],
            best=row["rank_interval"][0] if row["rank_interval"] else None,
            worst=row["rank_interval"][1] if row["rank_interval"] else None,
            tier=row["tier"],
            key=row["submission_id"],
        )
        for row in first
    ]
