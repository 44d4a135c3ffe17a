"""allauth adapters: the setting that turns local accounts off, and GitHub usernames.

Named in ``ACCOUNT_ADAPTER`` and ``SOCIALACCOUNT_ADAPTER`` (config/settings/base.py).
"""

from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.adapter import get_adapter as get_account_adapter
from allauth.account.utils import user_username
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialApp, SocialLogin
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest

from accounts.selectors import local_accounts_enabled
from core.client_address import client_address

LOCAL_ACCOUNTS_OFF_MESSAGE = "Local accounts are turned off on this server: sign in with GitHub."


class AccountAdapter(DefaultAccountAdapter):
    """Local accounts: signup and password sign-in follow ``PODIUM_LOCAL_ACCOUNTS``.

    The admin's own login page (/admin/) does not go through allauth and stays available to staff.
    """

    def is_open_for_signup(self, request: HttpRequest) -> bool:
        # allauth renders its "signup closed" page when this is False.
        return local_accounts_enabled()

    def get_client_ip(self, request: HttpRequest) -> str:
        # allauth's remaining limits (signup, password reset) count per address: the same
        # address as the sign-in lockouts and the API's throttles, and never allauth's
        # ImproperlyConfigured (a 500) for a short X-Forwarded-For.
        return client_address(request)

    def pre_authenticate(self, request: HttpRequest, **credentials: Any) -> None:
        # Called by allauth's login form before it checks a password; the error becomes a form
        # error. GitHub sign-in never gets here.
        if not local_accounts_enabled():
            raise ValidationError(LOCAL_ACCOUNTS_OFF_MESSAGE)
        super().pre_authenticate(request, **credentials)


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    """GitHub sign-in: always open for signup, and the GitHub login kept as the username."""

    def is_open_for_signup(self, request: HttpRequest, sociallogin: SocialLogin) -> bool:
        # allauth's default asks the account adapter, which would close GitHub signup together
        # with local accounts; GitHub is the way in when local accounts are off.
        return True

    def get_provider(self, request: HttpRequest, provider: str, client_id: str | None = None):
        # Without an OAuth app allauth raises SocialApp.DoesNotExist, a 500 on
        # /accounts/github/login/; a server without GitHub has no such page, so 404.
        try:
            return super().get_provider(request, provider, client_id=client_id)
        except SocialApp.DoesNotExist:
            raise Http404(f"{provider} sign-in is not configured on this server.") from None

    def save_user(self, request: HttpRequest, sociallogin: SocialLogin, form=None):
        """Create the user; effects: the User, its EmailAddress rows and the SocialAccount.

        allauth uses the GitHub login as the username when it is free. When a local account has
        taken it, allauth blanks the username and would derive one from the person's name; we
        derive it from the GitHub login instead (``octocat`` -> ``octocat7``), so it stays
        recognisable.
        """
        user = sociallogin.user
        github_login = sociallogin.account.extra_data.get("login")
        if form is None and not user_username(user) and github_login:
            # allauth's helper cleans the text and appends digits until the name is free.
            username = get_account_adapter(request).generate_unique_username([github_login, "user"])
            user_username(user, username)
        return super().save_user(request, sociallogin, form=form)
