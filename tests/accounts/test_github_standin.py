"""The stand-in for GitHub's OAuth endpoints (accounts/github_standin.py) over real HTTP: the
requests allauth's GitHub provider makes get the answers GitHub gives, and every malformed one is
refused without a code or a token."""

import json
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.core.management import CommandError, call_command

from accounts.github_standin import StandinGitHub, github_id

pytestmark = pytest.mark.integration

CLIENT_ID = "test-client"
SECRET = "test-secret"
CALLBACK = "http://127.0.0.1:8000/accounts/github/login/callback/"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(_NoRedirect)


def get(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with OPENER.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def exchange(github: StandinGitHub, **form: str) -> dict[str, str]:
    body = urlencode({"grant_type": "authorization_code", **form}).encode()
    with urllib.request.urlopen(f"{github.url}/login/oauth/access_token", body, timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8"
        return {key: values[0] for key, values in parse_qs(r.read().decode()).items()}


def authorize(github: StandinGitHub, login: str = "octo-demo", state: str = "s1") -> str:
    """Press "Authorize" as `login`; returns the code sent back to the callback."""
    query = urlencode(
        {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "state": state, "login": login}
    )
    status, headers, _ = get(f"{github.url}/login/oauth/authorize/confirm?{query}")
    assert status == 302
    location = urlsplit(headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
    back = {key: values[0] for key, values in parse_qs(location.query).items()}
    assert back["state"] == state
    return back["code"]


@pytest.fixture
def github():
    with StandinGitHub(client_id=CLIENT_ID, client_secret=SECRET) as server:
        yield server


def test_the_authorize_page_names_the_app_says_it_is_not_github_and_keeps_the_state(github):
    query = urlencode(
        {
            "client_id": CLIENT_ID,
            "redirect_uri": CALLBACK,
            "scope": "read:user user:email",
            "response_type": "code",
            "state": "abc<>",
        }
    )
    status, headers, body = get(f"{github.url}/login/oauth/authorize?{query}")
    page = body.decode()

    assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
    assert "<strong>This is not GitHub.</strong>" in page
    assert "The application <code>test-client</code> asks" in page
    assert '<input type="hidden" name="state" value="abc&lt;&gt;">' in page
    assert '<button type="submit">Authorize</button>' in page
    assert 'style="' not in page
    assert "<style" not in page


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"client_id": "other", "redirect_uri": CALLBACK}, "Unknown client_id"),
        ({"client_id": CLIENT_ID, "redirect_uri": "/relative/"}, "redirect_uri must be"),
        ({"client_id": CLIENT_ID, "redirect_uri": "javascript:alert(1)"}, "redirect_uri must"),
        ({"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "response_type": "token"}, "code."),
    ],
)
def test_a_bad_authorize_request_is_refused_without_a_code(github, query, message):
    for path in ("/login/oauth/authorize", "/login/oauth/authorize/confirm"):
        status, headers, body = get(f"{github.url}{path}?{urlencode({**query, 'login': 'x'})}")

        assert status == 400
        assert "Location" not in headers
        assert message in body.decode()


def test_a_login_github_would_refuse_gets_no_code(github):
    query = urlencode({"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "login": "-bad--name"})
    status, headers, body = get(f"{github.url}/login/oauth/authorize/confirm?{query}")

    assert (status, "Location" in headers) == (400, False)
    assert "is not a GitHub login" in body.decode()


def test_a_code_buys_one_token_whose_user_is_the_login_chosen(github):
    code = authorize(github, login="Ada-L")

    answer = exchange(
        github, code=code, client_id=CLIENT_ID, client_secret=SECRET, redirect_uri=CALLBACK
    )
    token = answer["access_token"]
    _, _, user = get(f"{github.url}/api/v3/user", {"Authorization": f"token {token}"})
    _, _, emails = get(f"{github.url}/api/v3/user/emails", {"Authorization": f"token {token}"})

    assert answer == {
        "access_token": token,
        "scope": "read:user,user:email",
        "token_type": "bearer",
    }
    assert {key: json.loads(user)[key] for key in ("id", "login", "email")} == {
        "id": github_id("Ada-L"),
        "login": "Ada-L",
        "email": None,
    }
    assert json.loads(emails) == [
        {
            "email": "ada-l@standin-github.invalid",
            "primary": True,
            "verified": True,
            "visibility": "private",
        }
    ]
    # Used once: GitHub's rule.
    again = exchange(
        github, code=code, client_id=CLIENT_ID, client_secret=SECRET, redirect_uri=CALLBACK
    )
    assert again == {"error": "bad_verification_code"}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"client_secret": "wrong"}, "incorrect_client_credentials"),
        ({"client_id": "other"}, "incorrect_client_credentials"),
        ({"redirect_uri": "http://elsewhere.example/cb"}, "redirect_uri_mismatch"),
    ],
)
def test_a_bad_exchange_gets_an_error_and_burns_the_code(github, change, error):
    form = {
        "code": authorize(github),
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "redirect_uri": CALLBACK,
    }

    assert exchange(github, **{**form, **change}) == {"error": error}
    assert exchange(github, **form) == {"error": "bad_verification_code"}


def test_a_code_the_stand_in_never_issued_buys_nothing(github):
    form = {"client_id": CLIENT_ID, "client_secret": SECRET, "redirect_uri": CALLBACK}

    assert exchange(github, code="made-up", **form) == {"error": "bad_verification_code"}
    assert exchange(github, **form) == {"error": "bad_verification_code"}


@pytest.mark.parametrize("header", [{}, {"Authorization": "token gho_made_up"}, {"X": "y"}])
def test_the_api_refuses_a_missing_or_unknown_token(github, header):
    for path in ("/api/v3/user", "/api/v3/user/emails"):
        status, _, body = get(f"{github.url}{path}", header)

        assert (status, json.loads(body)) == (401, {"message": "Bad credentials"})


def test_the_same_login_is_the_same_github_user_whatever_its_case():
    assert github_id("Octo-Demo") == github_id("octo-demo") != github_id("octo-demo2")
    assert 10_000_000 <= github_id("octo-demo") < 100_000_000


def test_the_command_refuses_an_app_without_a_secret():
    with pytest.raises(CommandError, match="needs the OAuth app's client id and secret"):
        call_command("standin_github", "--port", "0", "--client-secret", "")
