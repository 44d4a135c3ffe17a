"""GitHub sign-in end to end through allauth's real views, with GitHub faked at the HTTP layer.

allauth talks to GitHub with ``requests`` (allauth/socialaccount/providers/github/views.py and
oauth2/client.py), so ``responses`` stands in for GitHub's three endpoints: the token exchange,
``/user`` and ``/user/emails``. Any other outgoing request fails the test: ``responses`` refuses
unregistered URLs. Everything on our side (views, adapters, state check, database) is real.
"""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import responses
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from responses import matchers

from accounts.models import User
from tests.accounts.conftest import GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

AUTHORIZE_URL = "https://github.com/login/oauth/authorize"
TOKEN_URL = "https://github.com/login/oauth/access_token"
USER_URL = "https://api.github.com/user"
EMAILS_URL = "https://api.github.com/user/emails"
CALLBACK_PATH = "/accounts/github/login/callback/"
CALLBACK_URL = f"http://testserver{CALLBACK_PATH}"

OCTOCAT = {
    "id": 583231,
    "login": "octocat",
    "name": "The Octocat",
    # GitHub sends null here when the person keeps their address private.
    "email": None,
    "html_url": "https://github.com/octocat",
    "avatar_url": "https://avatars.githubusercontent.com/u/583231",
}
OCTOCAT_EMAILS = [
    {"email": "old@example.org", "primary": False, "verified": False, "visibility": None},
    {"email": "octocat@example.org", "primary": True, "verified": True, "visibility": "private"},
]


def fake_github(rsps, *, code: str, access_token: str, user: dict, emails: list[dict]) -> None:
    """Register GitHub's three endpoints, each matching only the request allauth must send."""
    rsps.post(
        TOKEN_URL,
        # GitHub answers form-encoded unless asked for JSON, and allauth does not ask.
        body=urlencode({"access_token": access_token, "scope": "read:user,user:email"}),
        content_type="application/x-www-form-urlencoded; charset=utf-8",
        match=[
            matchers.urlencoded_params_matcher(
                {
                    "client_id": GITHUB_CLIENT_ID,
                    "client_secret": GITHUB_CLIENT_SECRET,
                    "code": code,
                    "grant_type": "authorization_code",
                    "redirect_uri": CALLBACK_URL,
                }
            )
        ],
    )
    token_header = matchers.header_matcher({"Authorization": f"token {access_token}"})
    rsps.get(USER_URL, json=user, match=[token_header])
    rsps.get(EMAILS_URL, json=emails, match=[token_header])


def start_sign_in(client) -> str:
    """Press the "Sign in with GitHub" button; check the redirect to GitHub and return its state."""
    response = client.post("/accounts/github/login/")

    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == AUTHORIZE_URL
    query = {key: values[0] for key, values in parse_qs(location.query).items()}
    assert {key: query[key] for key in ("client_id", "redirect_uri", "response_type")} == {
        "client_id": GITHUB_CLIENT_ID,
        "redirect_uri": CALLBACK_URL,
        "response_type": "code",
    }
    assert set(query["scope"].split()) == {"read:user", "user:email"}
    assert query["state"]
    return query["state"]


def sign_in_with_github(client, *, code: str, user: dict = OCTOCAT, emails=OCTOCAT_EMAILS):
    """The whole round trip: button, GitHub's redirect back, allauth's three calls to GitHub."""
    with responses.RequestsMock() as rsps:  # fails on exit unless every endpoint was called
        fake_github(rsps, code=code, access_token=f"gho_{code}", user=user, emails=emails)
        state = start_sign_in(client)
        response = client.get(CALLBACK_PATH, {"code": code, "state": state})
        calls = [(call.request.method, call.request.url) for call in rsps.calls]
    assert calls == [("POST", TOKEN_URL), ("GET", USER_URL), ("GET", EMAILS_URL)]
    return response


def signed_in_user_id(client) -> int | None:
    user_id = client.session.get("_auth_user_id")
    return int(user_id) if user_id is not None else None


@pytest.mark.usefixtures("github_configured")
@pytest.mark.parametrize("local_accounts", [True, False])
def test_a_first_github_sign_in_creates_the_user_and_signs_them_in(
    client, settings, local_accounts
):
    settings.PODIUM_LOCAL_ACCOUNTS = local_accounts

    response = sign_in_with_github(client, code="first-code")

    assert (response.status_code, response["Location"]) == (302, "/")
    account = SocialAccount.objects.get()
    user = account.user
    assert (account.provider, account.uid, account.extra_data["login"]) == (
        "github",
        "583231",
        "octocat",
    )
    assert (user.username, user.email, user.first_name, user.last_name) == (
        "octocat",
        "octocat@example.org",
        "The",
        "Octocat",
    )
    assert user.has_usable_password() is False
    assert sorted(
        EmailAddress.objects.filter(user=user).values_list("email", "primary", "verified")
    ) == [("octocat@example.org", True, True), ("old@example.org", False, False)]
    assert signed_in_user_id(client) == user.pk


@pytest.mark.usefixtures("github_configured")
def test_signing_in_again_with_the_same_github_id_reuses_the_user(client):
    sign_in_with_github(client, code="first-code")
    first_user = User.objects.get()
    client.post("/accounts/logout/")
    assert signed_in_user_id(client) is None

    response = sign_in_with_github(
        client, code="second-code", user={**OCTOCAT, "login": "octocat-renamed"}
    )

    assert (response.status_code, response["Location"]) == (302, "/")
    assert list(User.objects.all()) == [first_user]
    account = SocialAccount.objects.get()
    assert (account.user_id, account.extra_data["login"]) == (first_user.pk, "octocat-renamed")
    assert signed_in_user_id(client) == first_user.pk


@pytest.mark.usefixtures("github_configured")
def test_the_github_login_stays_recognisable_when_a_local_account_holds_it(client):
    local = UserFactory(username="octocat", email="someone-else@example.org")

    sign_in_with_github(client, code="first-code")

    github_user = SocialAccount.objects.get().user
    assert github_user != local
    assert github_user.username.startswith("octocat")
    assert github_user.username != "octocat"
    assert signed_in_user_id(client) == github_user.pk


@pytest.mark.usefixtures("github_configured")
def test_a_github_email_held_by_a_local_account_is_not_linked_to_it(client):
    # Linking by email would hand the local account to whoever controls that GitHub account;
    # allauth asks for another address on its signup form instead.
    local = UserFactory(username="ada", email="octocat@example.org")

    response = sign_in_with_github(client, code="first-code")

    assert (response.status_code, response["Location"]) == (302, "/accounts/3rdparty/signup/")
    assert list(User.objects.all()) == [local]
    assert list(SocialAccount.objects.all()) == []
    assert signed_in_user_id(client) is None


@pytest.mark.usefixtures("github_configured")
def test_a_callback_with_a_forged_state_calls_github_never_and_signs_in_nobody(client):
    with responses.RequestsMock() as rsps:
        start_sign_in(client)
        response = client.get(CALLBACK_PATH, {"code": "stolen-code", "state": "forged"})
        calls = list(rsps.calls)

    assert calls == []
    assert response.status_code == 401
    assert response.templates[0].name == "socialaccount/authentication_error.html"
    assert list(User.objects.all()) == []
    assert signed_in_user_id(client) is None


@pytest.mark.usefixtures("github_unconfigured")
def test_without_credentials_the_github_login_url_does_not_redirect_to_github(client):
    with responses.RequestsMock() as rsps:
        response = client.post("/accounts/github/login/")
        calls = list(rsps.calls)

    assert calls == []
    assert response.status_code == 404
