"""The entry owner's page for their model's endpoint (/submissions/<pk>/model-endpoint/):
the entry is found as its status page finds it (owner, maintainers, superusers; a 404 for
anyone else), the permission predicate says who may register (its owner or a superuser: a 403
for a maintainer, who uses the admin), and one service registers it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters

from submissions.models import Submission
from submissions.selectors import submission_for_user

from . import endpoints
from .forms import ModelEndpointForm
from .permissions import can_register_endpoint, can_set_endpoint_key


@sensitive_post_parameters("api_key")  # an error report never carries the key
@login_required
def endpoint(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        submission = submission_for_user(request.user, pk)
    except Submission.DoesNotExist:
        raise Http404("No such submission.") from None
    allowed = can_set_endpoint_key(request.user, submission)
    if not (allowed and can_register_endpoint(request.user, submission)):
        raise PermissionDenied
    current = endpoints.active_endpoint(submission)
    # Pre-filled only from an endpoint the viewer registered: the owner should never type
    # their key into a form carrying an address someone else chose.
    mine = current is not None and current.created_by_id == request.user.pk
    initial = {"base_url": current.base_url, "model": current.model} if mine else {}
    form = ModelEndpointForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            endpoints.register_endpoint(
                submission,
                actor=request.user,
                base_url=form.cleaned_data["base_url"],
                model=form.cleaned_data["model"],
                api_key=form.cleaned_data["api_key"],
            )
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                form.add_error(field if field in form.fields else None, problems)
        else:
            messages.success(
                request,
                "The model endpoint is registered. Its key is stored encrypted and will not be "
                "shown again.",
            )
            return redirect(submission)
    context = {"submission": submission, "endpoint": current, "form": form}
    return render(request, "verifying/endpoint.html", context)
