"""The judge's web endpoints on a submission page: the panel fragment the page polls, and the
start, rerun and cancel buttons (POST only). Each view finds the submission as its status
page does (its owner, maintainers and superusers see it; anyone else gets a 404), checks the
permission predicate (a 403 for someone who sees the entry but may not do this), calls one
service, and turns a `DomainError` into a message on the page it redirects back to."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.exceptions import DomainError
from submissions.models import Evaluation, Submission
from submissions.selectors import latest_evaluation, submission_for_user

from . import selectors, services


@login_required
@require_GET
def panel(request: HttpRequest, pk: int) -> HttpResponse:
    """The judge panel alone, polled (htmx) while a job is queued or running."""
    submission = _visible_submission(request, pk)
    context = {"panel": selectors.judge_panel(latest_evaluation(submission), request.user)}
    return render(request, "judging/_panel.html", context)


@login_required
@require_POST
def start(request: HttpRequest, pk: int) -> HttpResponse:
    """The submitter (or a maintainer) starts step 2 on the newest run."""
    submission = _visible_submission(request, pk)
    if not selectors.can_start_judge(request.user, submission):
        raise PermissionDenied
    evaluation = _newest_run(submission)
    return _act(
        request,
        submission,
        lambda: services.start_judge(evaluation, actor=request.user),
        "The LLM judge is queued; this page shows its progress, and you may leave and come back.",
    )


@login_required
@require_POST
def rerun(request: HttpRequest, pk: int) -> HttpResponse:
    """A maintainer judges the newest run again (a complete one is copied into a new run)."""
    submission = _visible_submission(request, pk)
    if not selectors.can_rerun_judge(request.user):
        raise PermissionDenied
    evaluation = _newest_run(submission)
    return _act(
        request,
        submission,
        lambda: services.rerun_judge(evaluation, actor=request.user),
        "The LLM judge is queued again; verdicts already in the cache cost nothing.",
    )


@login_required
@require_POST
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Stop the newest run's queued or running job; the run waits for the judge again. Two
    steps, without script: the panel's button asks, and only the confirmation page's button
    (``confirm=yes``) cancels."""
    submission = _visible_submission(request, pk)
    job = services.active_job(_newest_run(submission))
    if job is None:
        messages.error(request, "No judge job is running on this submission.")
        return redirect(submission)
    if not selectors.can_cancel_job(request.user, job, submission):
        raise PermissionDenied
    if request.POST.get("confirm") != "yes":
        context = {"submission": submission, "job": job}
        return render(request, "judging/cancel_confirm.html", context)
    return _act(
        request,
        submission,
        lambda: services.cancel_job(job, actor=request.user),
        "The judge job is cancelled; the caption metrics stay pending.",
    )


def _act(
    request: HttpRequest, submission: Submission, action: Callable[[], object], success: str
) -> HttpResponse:
    try:
        action()
    except DomainError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, success)
    return redirect(submission)


def _visible_submission(request: HttpRequest, pk: int) -> Submission:
    try:
        return submission_for_user(request.user, pk)
    except Submission.DoesNotExist:
        raise Http404("No such submission.") from None


def _newest_run(submission: Submission) -> Evaluation:
    evaluation = latest_evaluation(submission)
    if evaluation is None:
        raise Http404("This submission has no run.")
    return evaluation
