"""System checks for sign-in, run by ``manage.py check``, ``migrate`` and ``runserver``."""

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from accounts.selectors import local_accounts_enabled


@register()
def check_someone_can_sign_in(app_configs, **kwargs) -> list[CheckMessage]:
    """With local accounts off and no GitHub app, nobody but staff (via /admin/) could sign in.

    Production's fail-fast for sign-in: ``migrate`` runs the checks on every deploy. Only the
    app from the environment counts: checks also run before the first migrate, when SocialApp
    rows cannot be read. A deployment that keeps its app in a SocialApp row silences the check
    (``SILENCED_SYSTEM_CHECKS = ["accounts.E001"]``).
    """
    github_app_in_settings = bool(settings.SOCIALACCOUNT_PROVIDERS.get("github", {}).get("APPS"))
    if local_accounts_enabled() or github_app_in_settings:
        return []
    return [
        Error(
            "Nobody can sign in: PODIUM_LOCAL_ACCOUNTS is off and GitHub is not configured.",
            hint="Set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET, or PODIUM_LOCAL_ACCOUNTS=true "
            "(docs/accounts.md).",
            id="accounts.E001",
        )
    ]
