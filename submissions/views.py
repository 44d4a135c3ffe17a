"""The web pages: the benchmark list, a benchmark's boards, About and Submit tabs, and a
submitter's own pages. Each view parses the request, checks permission through a selector,
calls one service or selector and renders."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import quote_etag
from django.views.decorators.http import require_POST, require_safe

from benchmark.models import Benchmark
from benchmark.plugins import plugin_for
from benchmark.selectors import (
    active_testset,
    benchmark_by_slug,
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
from .forms import CompareForm, SubmissionForm
from .intervals import compare_runs
from .models import Submission
from .ratings import entry_battles
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
