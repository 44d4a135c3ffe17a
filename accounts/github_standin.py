"""A stand-in for GitHub's OAuth endpoints, so "Sign in with GitHub" works on a laptop.

NOT GitHub: a tiny HTTP server on loopback that answers the four requests allauth's GitHub
provider makes, at the paths GitHub Enterprise uses (allauth's ``GITHUB_URL`` setting: the web
pages at ``<url>/login/oauth/...``, the API at ``<url>/api/v3/...``):

- ``GET /login/oauth/authorize``: a page naming the app's client id and the GitHub login to sign
  in as, with an "Authorize" button (a GET form) that sends the browser back to ``redirect_uri``
  with a one-time ``code`` and the ``state`` it was given;
- ``POST /login/oauth/access_token``: trades the code (with the client id and secret it was
  issued for, and the same ``redirect_uri``) for an access token, form-encoded as GitHub answers;
- ``GET /api/v3/user`` and ``GET /api/v3/user/emails`` (``Authorization: token <token>``): the
  profile and the addresses of the login chosen on the authorize page.

A login's numeric id is a hash of the login, so signing in again as the same login finds the same
Podium account. Every malformed request gets GitHub's own kind of refusal (a 400 page, an
``error=bad_verification_code`` answer, a 401), never a token.

The server is the stand-ins' shared one (`core.standin`). Stdlib only and no Django imports,
like every stand-in: it runs in a test thread or in the foreground through
``manage.py standin_github`` (started by ``make run``, scripts/run.sh).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

from core.standin import StandinHandler, StandinServer

# The client id and secret `make run` gives both Podium and the stand-in (public: demo only).
DEMO_CLIENT_ID = "podium-standin-client"
DEMO_CLIENT_SECRET = "podium-standin-secret-not-for-production"
DEFAULT_LOGIN = "octo-demo"
# GitHub's own rule for a login: letters, digits and single hyphens, at most 39 characters.
LOGIN_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")


def github_id(login: str) -> int:
    """The stand-in's numeric user id for `login`: the same every run (case-insensitive, as on
    GitHub), in GitHub's range of ids."""
    digest = hashlib.sha256(login.lower().encode()).digest()
    return 10_000_000 + int.from_bytes(digest[:4], "big") % 90_000_000


def profile(login: str) -> dict:
    """What ``/api/v3/user`` answers for `login` (the fields allauth and Podium read)."""
    return {
        "id": github_id(login),
        "login": login,
        "name": f"{login} (stand-in GitHub user)",
        # GitHub sends null for a private address; allauth then reads /user/emails.
        "email": None,
        "html_url": f"https://github.com/{login}",
        "avatar_url": "",
        "type": "User",
    }


def emails(login: str) -> list[dict]:
    """What ``/api/v3/user/emails`` answers: one primary, verified address."""
    return [
        {
            "email": f"{login.lower()}@standin-github.invalid",
            "primary": True,
            "verified": True,
            "visibility": "private",
        }
    ]


@dataclass(frozen=True)
class _Grant:
    login: str
    client_id: str
    redirect_uri: str


AUTHORIZE_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize {client_id} · stand-in GitHub</title>
<link rel="stylesheet" href="/standin.css"></head>
<body>
<main>
<h1>Stand-in GitHub: authorize {client_id}</h1>
<p class="warning"><strong>This is not GitHub.</strong> It is Podium's local stand-in for GitHub's sign-in
(<code>manage.py standin_github</code>), so the GitHub button can be tried without a GitHub
OAuth app. The real GitHub is one setting away: docs/accounts.md.</p>
<p>The application <code>{client_id}</code> asks to read your profile and email addresses
(scopes: <code>{scope}</code>).</p>
<form method="get" action="/login/oauth/authorize/confirm">
{hidden}
<p><label for="login">Sign in as the GitHub user</label><br>
<input id="login" name="login" value="{login}" required maxlength="39"
 pattern="[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){{0,38}}"></p>
<p><button type="submit">Authorize</button></p>
</form>
<p><a href="{cancel}">Cancel</a></p>
</main>
</body>
</html>
"""


# The authorize page's look: a file of its own, not inline (a page may sit under a strict CSP).
STYLESHEET = """body { font-family: system-ui, sans-serif; margin: 0; background: #f6f8fa; color: #1f2328; }
main { max-width: 30rem; margin: 2rem auto; padding: 1.5rem; background: #fff;
  border: 1px solid #d0d7de; border-radius: 6px; }
h1 { font-size: 1.3rem; margin-top: 0; }
.warning { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 0.6rem 0.8rem; }
label { font-weight: 600; }
input { width: 100%; padding: 0.45rem; font: inherit; margin-top: 0.3rem; box-sizing: border-box; }
@media (max-width: 32rem) { main { margin: 0.75rem; } }
button { background: #1f883d; color: #fff; border: 0; border-radius: 6px; padding: 0.55rem 1.2rem;
  font: inherit; font-weight: 600; cursor: pointer; width: 100%; }
"""


class _Handler(StandinHandler):
    # --- replies
    def _send(self, status: int, body: bytes, content_type: str, headers: dict | None = None):
        self.send_bytes(
            status, body, content_type, {"Cache-Control": "no-store", **(headers or {})}
        )

    def _json(self, status: int, payload: object) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

    def _page(self, status: int, text: str) -> None:
        self._send(status, text.encode(), "text/html; charset=utf-8")

    def _refuse(self, status: int, message: str) -> None:
        self._page(status, f"<!doctype html><title>Error</title><p>{html.escape(message)}</p>")

    def _redirect(self, location: str) -> None:
        self._send(302, b"", "text/plain", {"Location": location})

    # --- routes
    def do_GET(self) -> None:  # noqa: N802 (http.server calls do_<METHOD>)
        split = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(split.query).items()}
        routes = {
            "/login/oauth/authorize": self._authorize_page,
            "/login/oauth/authorize/confirm": self._authorize_confirm,
            "/api/v3/user": self._user,
            "/api/v3/user/emails": self._emails,
        }
        if split.path == "/standin.css":
            self._send(200, STYLESHEET.encode(), "text/css; charset=utf-8")
            return
        if split.path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
            return
        handler = routes.get(split.path)
        if handler is None:
            self._json(404, {"message": "Not Found"})
            return
        handler(query)

    def do_POST(self) -> None:  # noqa: N802
        if urlsplit(self.path).path != "/login/oauth/access_token":
            self._json(404, {"message": "Not Found"})
            return
        form = {
            key: values[0]
            for key, values in parse_qs(self.read_body().decode("utf-8", "replace")).items()
        }
        github = self.owner
        try:
            token = github.redeem_code(
                form.get("code", ""),
                client_id=form.get("client_id", ""),
                secret=form.get("client_secret", ""),
                redirect_uri=form.get("redirect_uri", ""),
            )
        except ValueError as error:
            # GitHub answers a bad exchange with 200 and an error field.
            body = urlencode({"error": str(error)})
        else:
            body = urlencode({"access_token": token, "scope": "read:user,user:email"})
            body += "&token_type=bearer"
        self._send(200, body.encode(), "application/x-www-form-urlencoded; charset=utf-8")

    def _check_authorize(self, query: dict[str, str]) -> str | None:
        """The error to show for an authorize request, or None."""
        if query.get("client_id") != self.owner.client_id:
            return "Unknown client_id: this stand-in serves only the app it was started for."
        redirect = urlsplit(query.get("redirect_uri", ""))
        if redirect.scheme not in ("http", "https") or not redirect.netloc:
            return "redirect_uri must be an absolute http(s) address."
        if query.get("response_type", "code") != "code":
            return "response_type must be code."
        return None

    def _authorize_page(self, query: dict[str, str]) -> None:
        if error := self._check_authorize(query):
            self._refuse(400, error)
            return
        kept = ("client_id", "redirect_uri", "state", "scope")
        hidden = "\n".join(
            f'<input type="hidden" name="{key}" value="{html.escape(query[key])}">'
            for key in kept
            if key in query
        )
        cancel = _with_query(
            query["redirect_uri"],
            {"error": "access_denied", **({"state": query["state"]} if "state" in query else {})},
        )
        self._page(
            200,
            AUTHORIZE_PAGE.format(
                client_id=html.escape(query["client_id"]),
                scope=html.escape(query.get("scope", "")),
                hidden=hidden,
                login=DEFAULT_LOGIN,
                cancel=html.escape(cancel),
            ),
        )

    def _authorize_confirm(self, query: dict[str, str]) -> None:
        if error := self._check_authorize(query):
            self._refuse(400, error)
            return
        login = query.get("login", "")
        if not LOGIN_PATTERN.match(login):
            self._refuse(
                400,
                f"{login!r} is not a GitHub login: letters, digits and single hyphens, "
                "at most 39 characters.",
            )
            return
        code = self.owner.issue_code(
            _Grant(login=login, client_id=query["client_id"], redirect_uri=query["redirect_uri"])
        )
        back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
        self._redirect(_with_query(query["redirect_uri"], back))

    def _login(self) -> str | None:
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        if scheme.lower() not in ("token", "bearer") or not token:
            return None
        return self.owner.login_for_token(token)

    def _user(self, query: dict[str, str]) -> None:
        if (login := self._login()) is None:
            self._json(401, {"message": "Bad credentials"})
            return
        self._json(200, profile(login))

    def _emails(self, query: dict[str, str]) -> None:
        if (login := self._login()) is None:
            self._json(401, {"message": "Bad credentials"})
            return
        self._json(200, emails(login))


class StandinGitHub(StandinServer):
    """``with StandinGitHub(client_id=..., client_secret=...) as github: github.url``."""

    handler = _Handler
    thread_name = "standin-github"
    server_version = "StandinGitHub/1.0"

    def __init__(
        self,
        *,
        client_id: str = DEMO_CLIENT_ID,
        client_secret: str = DEMO_CLIENT_SECRET,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if not client_id or not client_secret:
            raise ValueError("the stand-in needs the OAuth app's client id and secret")
        super().__init__(host=host, port=port)
        self.client_id = client_id
        self.client_secret = client_secret
        self._codes: dict[str, _Grant] = {}
        self._tokens: dict[str, str] = {}

    @property
    def url(self) -> str:
        """What Podium's ``PODIUM_GITHUB_URL`` is set to."""
        return self.address

    # --- the OAuth state, shared by the handler threads
    def issue_code(self, grant: _Grant) -> str:
        code = secrets.token_hex(10)
        with self._lock:
            self._codes[code] = grant
        return code

    def redeem_code(self, code: str, *, client_id: str, secret: str, redirect_uri: str) -> str:
        """An access token for `code`, or ValueError with GitHub's error code. A code is used
        once, whatever the outcome (GitHub's rule)."""
        with self._lock:
            grant = self._codes.pop(code, None)
        if client_id != self.client_id or not secrets.compare_digest(secret, self.client_secret):
            raise ValueError("incorrect_client_credentials")
        if grant is None or grant.client_id != client_id:
            raise ValueError("bad_verification_code")
        if redirect_uri and redirect_uri != grant.redirect_uri:
            raise ValueError("redirect_uri_mismatch")
        token = "gho_standin_" + secrets.token_hex(16)
        with self._lock:
            self._tokens[token] = grant.login
        return token

    def login_for_token(self, token: str) -> str | None:
        with self._lock:
            return self._tokens.get(token)


def _with_query(url: str, params: dict[str, str]) -> str:
    separator = "&" if urlsplit(url).query else "?"
    return f"{url}{separator}{urlencode(params)}"
