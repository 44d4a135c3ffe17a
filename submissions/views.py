"""The web pages: the benchmark list, a benchmark's boards, About and Submit tabs, and a
submitter's own pages. Each view parses the request, checks permission through a selector,
calls one service or selector and renders."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import quote_etag
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST, require_safe

from benchmark.facts import filterable_facts
from benchmark.models import Benchmark, Category, Metric
from benchmark.plugins import plugin_for
from benchmark.selectors import (
    active_testset,
    benchmark_by_slug,
    benchmark_categories,
    public_benchmarks,
)
from core.exceptions import (
    DomainError,
    DuplicatePredictions,
    InvalidFact,
    InvalidName,
    InvalidPredictions,
)

from . import notifications, selectors, services, verification
from .charts.rank_intervals import NARROW, rank_interval_chart
from .enums import BoardKind
from .forms import CompareForm, SubmissionForm
from .intervals import compare_runs
from .judge_step import board_judges
from .models import Submission
from .ratings import entry_battles, rating_tab
from .selectors import file_format
from .selectors.entry_page import entry_for_viewer, entry_page


def home(request: HttpRequest) -> HttpResponse:
    """The public benchmarks; with only one, its board directly."""
    benchmarks = list(public_benchmarks())
    if len(benchmarks) == 1:
        return redirect("submissions:board", slug=benchmarks[0].slug)
    return render(
        request,
        "submissions/home.html",
        {"benchmarks": benchmarks, "cards": selectors.benchmark_cards(benchmarks)},
    )


def board(request: HttpRequest, slug: str, board: str = BoardKind.OFFICIAL) -> HttpResponse:
    """One board table (Official or Community) a page at a time: searched by model or team
    (`?q=`), narrowed to a tag (`?tag=`) and to model facts (`?type=`, `?precision=`,
    `?domain_specific=`), sorted by `?sort=<column>&dir=asc|desc` (`?page=`), with the chart
    of its rank intervals and the board's downloads. A benchmark with categories (issue 15)
    has a tab per category beside the overview (`?category=<key>`: its columns and ranks; an
    unknown one is 404)."""
    benchmark = _visible_benchmark(request, slug)
    kind = BoardKind(board)
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
    summary = selectors.board_summary(benchmark)
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
        "ranks_above": None if category else selectors.ranks_above(benchmark, kind, summary),
        **_official_how(benchmark),
    }
    return render(request, "submissions/board.html", context)


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
) -> tuple[SafeString, SafeString]:
    """The table's (with its pagination) and the rank-interval chart's HTML, cached per board,
    sort, tag, page and recompute: the same for every viewer, and they only change when
    `recompute_board` or `compute_rank_intervals` runs (both move `computed_at`, hence the
    key). A search is not cached (its text is the searcher's; it reads one page anyway). A
    cache hit costs no query beyond the page's three; a miss reads the page's rows in one,
    plus a count and the interval state."""
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
    rows_page = selectors.board_page(
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
        entries = selectors.board_chart_entries(
            benchmark,
            board,
            board_filter,
            rows=rows_page.rows,
            sort=sort,
            page=rows_page.number,
            count=rows_page.count,
        )
        chart = rank_interval_chart(entries, total=rows_page.count)
        narrow_chart = rank_interval_chart(entries, total=rows_page.count, layout=NARROW)
    context = {
        "benchmark": benchmark,
        "page": rows_page,
        "rows": rows_page.rows,
        # Who scored the judge columns shown, and whether they mix judges (issue 32).
        "judges": board_judges(benchmark.pk, board)
        if any(metric.is_judge_metric for metric in metrics)
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


def compare(request: HttpRequest, slug: str) -> HttpResponse:
    """Two entries side by side (`?a=<submission id>&b=<submission id>`): per metric a - b with
    its paired 95% interval and p-value, per dataset the differences, one plain sentence.
    The selects list the entries the viewer may see (`selectors.comparable_entries`); a
    missing, unknown or hidden id re-shows the form with the reason (400)."""
    benchmark = _visible_benchmark(request, slug)
    entries = selectors.comparable_entries(benchmark, viewer=request.user)
    form = CompareForm(request.GET or None, entries=entries)
    context: dict[str, object] = {"benchmark": benchmark, "tab": "compare", "form": form}
    if form.is_valid():
        metrics = list(benchmark.metrics.all())
        a, b = selectors.comparable_runs(entries, form.cleaned_data["a"], form.cleaned_data["b"])
        comparison = compare_runs(benchmark, a, b)
        context |= {
            "comparison": comparison,
            "lines": selectors.compare_lines(comparison, metrics),
            "datasets": selectors.dataset_lines(comparison, metrics),
        }
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "submissions/compare.html", context, status=status)


def about(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = _visible_benchmark(request, slug)
    fmt = file_format.file_format(benchmark)
    context = {
        "benchmark": benchmark,
        "tab": "about",
        "about": selectors.about_blocks(benchmark.about),
        # Each metric with the rows that feed it (the plugin's: MedVidBench's qa_type strings,
        # the checker's, not task names).
        "metric_lines": [
            (metric, fmt.guide.sources.get(metric.task, ()) if fmt else ())
            for metric in benchmark.metrics.all()
        ],
        "sources_heading": fmt.guide.sources_heading if fmt else "From the rows",
        "breakdown_label": plugin_for(benchmark).breakdown_label,
        "test_set": active_testset(benchmark),
        "file_format": fmt,
        **_official_how(benchmark),
    }
    return render(request, "submissions/about.html", context)


@require_safe
def prediction_template(request: HttpRequest, slug: str) -> HttpResponse:
    """The predictions template of the active test set (issue 13), as an attachment: every id
    and qa_type in order with an empty prediction (`file_format.template_chunks`), public like
    the benchmark (its ids and qa_types are in every predictions file). Revalidated by an ETag
    of the test set's checksum, so a new version is never served stale."""
    benchmark = _visible_benchmark(request, slug)
    test_set = active_testset(benchmark)
    if test_set is None:
        raise Http404("No test set yet; submissions are closed.")
    etag = quote_etag(file_format.template_etag(test_set))
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = StreamingHttpResponse(
            file_format.template_chunks(test_set), content_type="application/json"
        )
        name = file_format.template_filename(benchmark, test_set)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["ETag"] = etag
    # A hidden benchmark's template is for those who may see it: never in a shared cache.
    patch_cache_control(
        response, no_cache=True, **{"public" if benchmark.is_public else "private": True}
    )
    return response


def entry(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The public page of one entry (issue 12): its metrics with their intervals, its rank
    with its rank interval, the per-dataset values and who judged it. A published entry is
    everyone's to see; an evaluate-only one its owner's (and maintainers'), 404 for anyone
    else, as for an entry that does not exist."""
    benchmark = _visible_benchmark(request, slug)
    try:
        submission = entry_for_viewer(benchmark, pk, viewer=request.user)
    except Submission.DoesNotExist:
        raise Http404("No such entry.") from None
    page = entry_page(submission)
    return render(
        request,
        "submissions/entry.html",
        # The tab of the board the entry is on (none for an evaluate-only entry).
        {
            "benchmark": benchmark,
            "tab": page.board.value if submission.publish else "",
            "page": page,
            "breakdown_label": plugin_for(benchmark).breakdown_label,
            # Its battles in the rating categories, from the battles app (a hook).
            "battles": entry_battles(benchmark, submission),
        },
    )


def _official_how(benchmark: Benchmark) -> dict[str, object]:
    """The context of "How to get on the Official board" (Official tab and About)."""
    return {
        "official_steps": verification.OFFICIAL_STEPS,
        "contact_href": verification.contact_href(benchmark),
    }


@login_required
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    """The submission form. Every synchronous check runs before anything is stored; a valid
    file is stored and queued, and the submitter lands on its status page."""
    benchmark = _visible_benchmark(request, slug)
    form = SubmissionForm(request.POST or None, request.FILES or None, benchmark=benchmark)
    if request.method == "POST" and form.is_valid():
        try:
            submission = services.create_submission(
                benchmark,
                owner=request.user,
                details=form.details(),
                predictions=form.predictions_bytes(),
            )
        except InvalidPredictions as error:
            form.refuse_predictions(error)
        except DuplicatePredictions as error:
            form.add_error("predictions", str(error))
        except InvalidName as error:  # a look-alike published meanwhile
            form.add_error(error.field or None, str(error))
        except InvalidFact as error:  # the form checks them too; the writer has the last word
            for key, message in error.problems.items():
                form.add_error(key if key in form.fields else None, message)
        except DomainError as error:  # the quota, submissions closed
            form.add_error(None, str(error))
        else:
            # True for as long as the page shows it (its status part refreshes itself under
            # it, past "queued" to Complete): what happened, not the state it is in.
            messages.success(
                request, "Your file passed the checks. This page follows it until it is scored."
            )
            if note := selectors.duplicate_note(submission):
                messages.warning(request, note)
            return redirect(submission)
    left = services.evaluations_left_today(request.user, benchmark)
    resets_at = services.quota_window_start() + timedelta(days=1)
    context = {
        "benchmark": benchmark,
        "tab": "submit",
        "form": form,
        "evaluations_left": left,
        # At 0 the form is shown disabled with when it opens again (the service refuses too).
        "quota_reached": left == 0 and benchmark.daily_submission_limit > 0,
        "quota_resets_at": resets_at,
        "quota_resets_in": _duration(resets_at - timezone.now()),
        "file_format": file_format.file_format(benchmark),
    }
    return render(request, "submissions/submit.html", context)


def _duration(delta: timedelta) -> str:
    """ "5 h 12 min", "12 min", "less than a minute"."""
    minutes = int(delta.total_seconds() // 60)
    if minutes < 1:
        return "less than a minute"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


@login_required
def my_submissions(request: HttpRequest) -> HttpResponse:
    context = {
        "submissions": selectors.submissions_for_user(request.user),
        "notifications": notifications.unread_notifications(request.user),
    }
    return render(request, "submissions/my_submissions.html", context)


@login_required
@require_POST
def notifications_read(request: HttpRequest) -> HttpResponse:
    """Mark all of the viewer's notifications read (only theirs)."""
    notifications.mark_notifications_read(request.user)
    return redirect("submissions:mine")


@login_required
def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A submission's status page: its owner's, maintainers' and superusers' only
    (`can_view_all_entries`), 404 for anyone else."""
    status = selectors.submission_status(_visible_submission(request, pk), viewer=request.user)
    context = {
        "status": status,
        "benchmark": status.submission.benchmark,
        "notifications": notifications.submission_notifications(
            status.submission, viewer=request.user
        ),
        "verification": verification.verification_summary(status.submission),
    }
    return render(request, "submissions/submission_detail.html", context)


@login_required
def submission_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The live region the detail page polls (htmx) while the run or its judge is in
    progress: the status and the judge panel together (`_live.html`)."""
    status = selectors.submission_status(_visible_submission(request, pk), viewer=request.user)
    return render(request, "submissions/_live.html", {"status": status})


def _visible_benchmark(request: HttpRequest, slug: str) -> Benchmark:
    try:
        return benchmark_by_slug(slug, viewer=request.user)
    except Benchmark.DoesNotExist:
        raise Http404("No such benchmark.") from None


def _visible_submission(request: HttpRequest, pk: int) -> Submission:
    try:
        return selectors.submission_for_user(request.user, pk)
    except Submission.DoesNotExist:
        raise Http404("No such submission.") from None
