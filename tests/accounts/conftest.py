"""Sign-in settings for the accounts tests, set explicitly so a developer's own GITHUB_CLIENT_ID or
PODIUM_LOCAL_ACCOUNTS in the shell cannot change the outcome."""

import copy

import pytest

GITHUB_CLIENT_ID = "podium-test-client-id"
GITHUB_CLIENT_SECRET = "podium-test-client-secret"


def _github_apps(settings, apps: list[dict[str, str]]) -> None:
    # A copy of the real provider settings (scope included) with only the apps replaced.
    providers = copy.deepcopy(settings.SOCIALACCOUNT_PROVIDERS)
    providers["github"]["APPS"] = apps
    settings.SOCIALACCOUNT_PROVIDERS = providers


@pytest.fixture
def github_configured(settings):
    _github_apps(settings, [{"client_id": GITHUB_CLIENT_ID, "secret": GITHUB_CLIENT_SECRET}])


@pytest.fixture
def github_unconfigured(settings):
    _github_apps(settings, [])


@pytest.fixture
def local_accounts_on(settings):
    settings.PODIUM_LOCAL_ACCOUNTS = True


@pytest.fixture
def local_accounts_off(settings):
    settings.PODIUM_LOCAL_ACCOUNTS = False
