from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from accounts.selectors import github_sign_in_enabled, local_accounts_enabled


def sign_in_options(request: HttpRequest) -> dict[str, Any]:
    """``github_enabled``, ``local_accounts_enabled`` and ``show_operator_hints`` for the
    sign-in templates.

    ``github_enabled`` is lazy: it may cost a query, and only the sign-in pages look at it, so
    every other page (and its query-count test) pays nothing. ``show_operator_hints`` (how to
    turn GitHub on) is for the people who run the server, superusers and anyone on a DEBUG
    machine, never for visitors of a deployment.
    """
    return {
        "github_enabled": SimpleLazyObject(lambda: github_sign_in_enabled(request)),
        "local_accounts_enabled": local_accounts_enabled(),
        "show_operator_hints": SimpleLazyObject(
            lambda: bool(settings.DEBUG or getattr(request.user, "is_superuser", False))
        ),
    }
