"""Hosted evaluation's pages: the "Submit a model endpoint" form, a benchmark's public queue
(and the fragment it polls), a request's own page (its owner's and the maintainers', polled
while it runs) and its Cancel button (POST, asks first). Each view parses the request,
checks permission through a selector or predicate, calls one service or selector, renders."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST, require_safe

from benchmark.models import Benchmark
from benchmark.selectors import benchmark_by_slug
from core.exceptions import DomainError, InvalidEndpoint, InvalidName
from submissions.services import evaluations_left_today, quota_window_start

from . import selectors, services
from .forms import HostedRequestForm
from .models import HostedRequest
from .permissions import can_cancel_request


def _benchmark(request: HttpRequest, slug: str) -> Benchmark:
    """A benchmark the viewer may see that takes model endpoints (else 404)."""
    try:
        benchmark = benchmark_by_slug(slug, viewer=request.user)
    except Benchmark.DoesNotExist:
        raise Http404("No such benchmark.") from None
    if not selectors.takes_endpoints(benchmark):
        raise Http404(f"{benchmark.name} does not evaluate model endpoints.")
    return benchmark


def _own_request(request: HttpRequest, pk: int) -> HostedRequest:
    try:
        return selectors.request_for_viewer(pk, viewer=request.user)
    except HostedRequest.DoesNotExist:
        raise Http404("No such hosted evaluation.") from None


@login_required
@sensitive_post_parameters("api_key")
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    """The endpoint form. Every synchronous check runs before anything is stored; a valid
    request is queued and its owner lands on its page."""
    benchmark = _benchmark(request, slug)
    form = HostedRequestForm(request.POST or None, benchmark=benchmark)
    if request.method == "POST" and form.is_valid():
        try:
            hosted = services.submit_request(
                benchmark,
                owner=request.user,
                actor=request.user,
                details=form.details(),
                **form.endpoint(),
            )
        except InvalidEndpoint as error:
            form.refuse_endpoint(error)
        except InvalidName as error:  # a look-alike published or queued meanwhile
            form.add_error(error.field or None, str(error))
        except DomainError as error:  # the quota, submissions closed
            form.add_error(None, str(error))
        else:
            messages.success(
                request,
                "Your model endpoint is queued: Podium will ask it every question and score "
                "its answers as an upload. This page follows it; you may leave and come back.",
            )
            return redirect(hosted)
    left = evaluations_left_today(request.user, benchmark)
    resets_at = quota_window_start() + timedelta(days=1)
    context = {
        "benchmark": benchmark,
        "tab": "submit",
        "form": form,
        "rules": selectors.hosted_rules(benchmark),
        "evaluations_left": left,
        "quota_reached": left == 0 and benchmark.daily_submission_limit > 0,
        "quota_resets_at": resets_at,
        "minutes_left": int((resets_at - timezone.now()).total_seconds() // 60),
    }
    return render(request, "hosting/submit.html", context)


def _queue_context(request: HttpRequest, benchmark: Benchmark) -> dict[str, object]:
    rows = selectors.queue_rows(benchmark, viewer=request.user)
    return {
        "benchmark": benchmark,
        "rows": rows,
        "categories": selectors.queue_categories(benchmark),
        "polling": selectors.queue_is_moving(rows),
    }


@require_safe
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    """The benchmark's public queue of hosted evaluations (MEDIC's request queue)."""
    benchmark = _benchmark(request, slug)
    context = {**_queue_context(request, benchmark), "tab": "queue"}
    return render(request, "hosting/queue.html", context)


@require_safe
def queue_live(request: HttpRequest, slug: str) -> HttpResponse:
    """The queue's table alone, polled (htmx) while a request is moving."""
    benchmark = _benchmark(request, slug)
    return render(request, "hosting/_queue_table.html", _queue_context(request, benchmark))


@require_safe
def legacy_queue(request: HttpRequest, slug: str) -> HttpResponse:
    """/benchmarks/<slug>/queue/, the address the issue names: the benchmark pages live under
    /b/<slug>/."""
    return redirect("hosting:queue", slug=slug, permanent=True)


@login_required
@require_safe
def request_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A request's own page: its owner's and the maintainers' (404 for anyone else)."""
    hosted = _own_request(request, pk)
    page = selectors.request_page(hosted, viewer=request.user)
    return render(request, "hosting/request.html", {"page": page, "benchmark": hosted.benchmark})


@login_required
@require_safe
def request_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The request's progress alone, polled (htmx) while it moves."""
    hosted = _own_request(request, pk)
    page = selectors.request_page(hosted, viewer=request.user)
    return render(request, "hosting/_request_live.html", {"page": page})


@login_required
@require_POST
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Stop a queued or running request. Two steps, without script: the page's button asks,
    and only the confirmation page's button (``confirm=yes``) cancels."""
    hosted = _own_request(request, pk)
    if not can_cancel_request(request.user, hosted):
        if hosted.state.is_terminal:
            messages.error(
                request,
                f"This request is {hosted.state.label.lower()}; there is nothing to cancel.",
            )
            return redirect(hosted)
        raise PermissionDenied
    if request.POST.get("confirm") != "yes":
        return render(request, "hosting/cancel_confirm.html", {"hosted": hosted})
    try:
        services.cancel_request(hosted, actor=request.user)
    except DomainError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "The hosted evaluation is cancelled; nothing was published.")
    return redirect(hosted)
