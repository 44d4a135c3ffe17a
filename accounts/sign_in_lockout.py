"""Password-guessing lockouts: django-axes, configured for Podium (docs/accounts.md, "Failed sign-ins").

axes counts every failed password sign-in, on the site (allauth) and on /admin/login/ alike: its
backend (first in ``AUTHENTICATION_BACKENDS``) refuses a locked-out attempt before any password is
checked, and its handler records a failure as one atomic ``UPDATE ... SET failures = failures + 1``
in our own database, which every web process shares. This module holds what axes leaves to the
project: which name an attempt counts against, the second limit (per address), and the page a
locked-out person sees. The client's address is ``core.client_address`` (AXES_CLIENT_IP_CALLABLE).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from core.client_address import client_address

# AccessAttempt.username's length.
USERNAME_KEY_LENGTH = 255


def attempted_username(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """The account an attempt counts against, the same whichever form and spelling was used.

    The admin posts ``username``; allauth's form posts ``login`` and authenticates with
    ``username=`` or ``email=``. allauth finds accounts case-insensitively, so the key is
    case-folded (``Maria`` and ``maria`` are one account, not two allowances), and an email
    address of an existing account counts as that account's username. Unknown names count as typed:
    a guesser learns nothing from the counting, and the address limit still applies.
    """
    credentials = credentials or {}
    data = getattr(request, "POST", {}) or {}
    typed = (
        credentials.get("username")
        or credentials.get("email")
        or data.get("username")
        or data.get("login")
    )
    if not isinstance(typed, str) or not typed.strip():
        return None
    typed = typed.strip()
    if "@" in typed:
        # One indexed query per failed or attempted sign-in by address; cheap next to the hash.
        username = (
            get_user_model()
            .objects.filter(email__iexact=typed)
            .order_by("pk")
            .values_list("username", flat=True)
            .first()
        )
        typed = username or typed
    return typed.casefold()[:USERNAME_KEY_LENGTH]


class SignInLockoutHandler(AxesDatabaseHandler):
    """axes' database handler with two limits instead of one.

    axes compares a single number with a single limit (``AXES_FAILURE_LIMIT``), taking the worst of
    the lockout parameters: here ``[username, address]`` and ``address``. A whole address gets
    ``PODIUM_SIGN_IN_ADDRESS_FAILURE_LIMIT`` failures, not 5, or one shared hospital or university
    address would be locked by five people mistyping. So the address's count is shifted down by
    the difference of the two limits before the comparison: it reaches the account limit exactly
    when the address reaches its own. Counting and storage are axes' own.
    """

    def get_failures(self, request: HttpRequest, credentials: dict | None = None) -> int:
        account, address = (
            attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        )
        offset = settings.PODIUM_SIGN_IN_ADDRESS_FAILURE_LIMIT - get_failure_limit(
            request, credentials
        )
        return max(account, address - offset)


def lockout_ends_at(request: HttpRequest, credentials: dict | None) -> datetime:
    """When password sign-in opens again for this account and address, at the latest: the cool-off
    after the last counted failure (failures while locked out are not counted, so it does not
    move)."""
    cool_off: timedelta = get_cool_off(request) or timedelta(0)
    address = getattr(request, "axes_ip_address", None) or client_address(request)
    attempts = AccessAttempt.objects.filter(
        ip_address=address, attempt_time__gte=timezone.now() - cool_off
    )
    username = attempted_username(request, credentials)
    limit = get_failure_limit(request, credentials)
    account = attempts.filter(username=username)
    account_failures = account.aggregate(total=Sum("failures_since_start"))["total"] or 0
    locking = account if account_failures >= limit else attempts
    last = locking.aggregate(last=Max("attempt_time"))["last"] or timezone.now()
    return last + cool_off


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """HTTP 429 with a page in the site's layout saying when to try again (also the admin's login:
    axes answers for whichever view authenticated), and ``Retry-After`` in seconds."""
    ends_at = lockout_ends_at(request, credentials)
    seconds = max(1, math.ceil((ends_at - timezone.now()).total_seconds()))
    context = {
        "ends_at": ends_at,
        "minutes": math.ceil(seconds / 60),
        "account_limit": get_failure_limit(request, credentials),
        "address_limit": settings.PODIUM_SIGN_IN_ADDRESS_FAILURE_LIMIT,
        "cool_off_minutes": round((get_cool_off(request) or timedelta(0)).total_seconds() / 60),
        "contact_email": settings.PODIUM_CONTACT_EMAIL,
    }
    response = render(request, "accounts/locked_out.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response
