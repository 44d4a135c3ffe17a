"""The account pages: a person's API tokens, created and revoked by their owner."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from core.exceptions import DomainError

from . import services
from .forms import ApiTokenForm
from .models import ApiToken


@never_cache  # Cache-Control: no-store, so no cache keeps the page showing a new raw token
@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """The signed-in person's tokens and a form for a new one.

    A new token's raw value is rendered in the POST's own response, once: it is never stored,
    nor put in the session to survive a redirect.
    """
    form = ApiTokenForm(request.POST or None)
    new_token = raw_token = None
    if request.method == "POST" and form.is_valid():
        try:
            new_token, raw_token = services.create_api_token(
                request.user, name=form.cleaned_data["name"]
            )
        except DomainError as error:  # too many active tokens
            form.add_error(None, str(error))
        else:
            form = ApiTokenForm()
    context = {
        "form": form,
        "new_token": new_token,
        "raw_token": raw_token,
        # A one-line read of the owner's own rows; never the hash (the template shows the prefix).
        "tokens": ApiToken.objects.filter(user=request.user),
    }
    return render(request, "accounts/tokens.html", context)


@require_POST
@login_required
def revoke_api_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Revoke one of the signed-in person's tokens; someone else's token is a 404."""
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    services.revoke_api_token(token, actor=request.user)
    messages.success(request, f"Token “{token.name}” revoked; scripts using it are now refused.")
    return redirect("accounts:tokens")
