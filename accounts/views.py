"""The account pages: a person's API tokens, created and revoked by their owner."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from core import encryption
from core.exceptions import DomainError

from . import services
from .forms import ApiTokenForm
from .models import ApiToken

# The session key that carries a new token across the redirect after it was created, once.
NEW_TOKEN_SESSION_KEY = "accounts.new_api_token"
# A new token is shown on the page load right after its creation, not after this long.
NEW_TOKEN_SHOWN_FOR = timedelta(minutes=5)


@never_cache  # Cache-Control: no-store, so no cache keeps the page showing a new raw token
@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """The signed-in person's tokens and a form for a new one.

    Creating answers with a redirect to this page (so a refresh never creates a second token),
    and the raw value is shown on that next load, once: it travels in the session encrypted
    (`core.encryption`), is removed from it as it is read, and is never stored anywhere else
    (the token row keeps only its hash). A value the next load does not pick up within
    NEW_TOKEN_SHOWN_FOR is dropped unseen.
    """
    form = ApiTokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            new_token, raw_token = services.create_api_token(
                request.user, name=form.cleaned_data["name"]
            )
        except DomainError as error:  # too many active tokens
            form.add_error(None, str(error))
        else:
            request.session[NEW_TOKEN_SESSION_KEY] = {
                "id": new_token.pk,
                "value": encryption.encrypt(raw_token),
            }
            return redirect("accounts:tokens")
    new_token, raw_token = _new_token_once(request)
    context = {
        "form": form,
        "new_token": new_token,
        "raw_token": raw_token,
        # A one-line read of the owner's own rows; never the hash (the template shows the prefix).
        "tokens": ApiToken.objects.filter(user=request.user),
    }
    return render(request, "accounts/tokens.html", context)


def _new_token_once(request: HttpRequest) -> tuple[ApiToken | None, str | None]:
    """The token created just before this page load and its raw value, taken out of the
    session (None, None when there is none, it is stale, or it is not this person's)."""
    carried = request.session.pop(NEW_TOKEN_SESSION_KEY, None)
    if not isinstance(carried, dict):
        return None, None
    token = ApiToken.objects.filter(pk=carried.get("id"), user=request.user).first()
    if token is None or timezone.now() - token.created_at > NEW_TOKEN_SHOWN_FOR:
        return None, None
    try:
        return token, encryption.decrypt(str(carried.get("value", "")))
    except encryption.DecryptionError:
        return None, None


@require_POST
@login_required
def revoke_api_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Revoke one of the signed-in person's tokens; someone else's token is a 404."""
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    services.revoke_api_token(token, actor=request.user)
    messages.success(request, f"Token “{token.name}” revoked; scripts using it are now refused.")
    return redirect("accounts:tokens")
