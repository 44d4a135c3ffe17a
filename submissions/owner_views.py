"""The owner's changes to their own entry (issue 13, point 6): publish or take off the boards,
and edit the details the boards show. Thin: the rules are in `submissions.owner_actions`."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.exceptions import DomainError, InvalidFact, InvalidName
from core.request_text import posted_text

from . import owner_actions, selectors
from .models import Submission
from .owner_forms import EntryDetailsForm


def _own_entry(request: HttpRequest, pk: int) -> Submission:
    """The signed-in person's entry (or one a maintainer may see); 404 for anyone else."""
    try:
        return selectors.submission_for_user(request.user, pk)
    except Submission.DoesNotExist:
        raise Http404("No such submission.") from None


@require_POST
@login_required
def publication(request: HttpRequest, pk: int) -> HttpResponse:
    """POST publish=1 puts the entry on the boards, publish=0 takes it off."""
    submission = _own_entry(request, pk)
    publish = request.POST.get("publish") == "1"
    try:
        owner_actions.set_published(
            submission, publish=publish, actor=request.user, note=posted_text(request, "note")
        )
    except (InvalidName, DomainError) as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            "The entry is published: it appears on the boards once scored."
            if publish
            else "The entry is off the boards; only you see it. You can publish it again.",
        )
    return redirect(submission)


@login_required
def edit_details(request: HttpRequest, pk: int) -> HttpResponse:
    """The form for the entry's links, team, authors and institution, and its model facts
    where the benchmark asks for them."""
    submission = _own_entry(request, pk)
    form = EntryDetailsForm(request.POST or None, instance=submission)
    if request.method == "POST" and form.is_valid():
        try:
            owner_actions.edit_own_entry(submission, actor=request.user, **form.changes())
        except InvalidName as error:
            form.add_error(error.field or None, str(error))
        except InvalidFact as error:
            for key, message in error.problems.items():
                form.add_error(key if key in form.fields else None, message)
        except DomainError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, "The entry's details are saved.")
            return redirect(submission)
    context = {"submission": submission, "benchmark": submission.benchmark, "form": form}
    return render(request, "submissions/edit_details.html", context)
