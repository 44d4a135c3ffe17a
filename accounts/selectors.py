"""Reads about how people may sign in on this server.

Both are read per request (not cached at import) so the settings can change under tests.
"""

from allauth.socialaccount.adapter import get_adapter as get_socialaccount_adapter
from django.conf import settings
from django.http import HttpRequest


def local_accounts_enabled() -> bool:
    """Whether local (username and password) signup and sign-in are on: ``PODIUM_LOCAL_ACCOUNTS``."""
    return settings.PODIUM_LOCAL_ACCOUNTS


def github_sign_in_enabled(request: HttpRequest | None) -> bool:
    """Whether a GitHub OAuth app is configured, from the environment or as a SocialApp row.

    allauth's own lookup, so this agrees with what ``/accounts/github/login/`` will accept. It may
    query the database (SocialApp rows), so templates get it lazily.
    """
    return bool(get_socialaccount_adapter(request).list_apps(request, provider="github"))
