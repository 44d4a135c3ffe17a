from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from accounts.selectors import github_sign_in_enabled, local_accounts_enabled


def sign_in_options(request: HttpRequest) -> dict[str, Any]:
    """``github_enabled`` and ``local_accounts_enabled`` for the sign-in templates.

    ``github_enabled`` is lazy: it may cost a query, and only the sign-in pages look at it, so
    every other page (and its query-count test) pays nothing.
    """
    return {
        "github_enabled": SimpleLazyObject(lambda: github_sign_in_enabled(request)),
        "local_accounts_enabled": local_accounts_enabled(),
    }
