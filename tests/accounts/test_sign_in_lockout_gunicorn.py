"""Wrong passwords sent to four real gunicorn workers, to /admin/login/ and to the site's sign-in:
the failures are counted in the database every worker shares, so after the limit every worker
refuses, the right password included. Before: the admin had no limit at all (30 wrong passwords,
then the right one signed in), and the site's limit counted per process (12 failures got through
4 workers against a limit of 5)."""

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from axes.models import AccessAttempt
from django.db import connection

from tests.accounts.factories import PASSWORD, UserFactory
from tests.live_gunicorn import database_env_for_test, gunicorn_server

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="separate processes need a shared PostgreSQL database",
    ),
]

LIMIT = 5
WORKERS = 4
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """A successful sign-in is a 302: report it rather than follow it."""

    def redirect_request(self, *args, **kwargs):
        return None


def attempt(base_url: str, path: str, login: str, password: str) -> str:
    """One person's sign-in as a browser does it: the form (for its CSRF token and cookie), then
    the POST, on new connections. Returns "wrong", "locked" or "signed in"."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    with opener.open(base_url + path, timeout=60) as page:
        token = CSRF_INPUT.search(page.read().decode()).group(1)
    field = "username" if path.startswith("/admin/") else "login"
    form = urllib.parse.urlencode(
        {field: login, "password": password, "csrfmiddlewaretoken": token}
    ).encode()
    try:
        with opener.open(base_url + path, data=form, timeout=60) as response:
            body, status = response.read().decode(), response.status
    except urllib.error.HTTPError as refused:
        body, status = refused.read().decode(), refused.code
    if status == 302:
        return "signed in"
    if status == 429 and "<h1>Too many failed sign-ins</h1>" in body:
        return "locked"
    assert status == 200, (status, body[:500])
    assert (
        "password you specified are not correct" in body or "correct username and password" in body
    )
    return "wrong"


def in_parallel(count: int, send) -> list[str]:
    """`count` attempts, a worker's worth at a time, so that each batch is spread over the
    workers (one idle worker would otherwise take every sequential request)."""
    outcomes: list[str] = []
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for start in range(0, count, WORKERS):
            outcomes += pool.map(lambda _: send(), range(start, min(count, start + WORKERS)))
    return outcomes


@pytest.mark.parametrize("path", ["/admin/login/", "/accounts/login/"])
def test_the_failure_count_holds_across_four_gunicorn_workers(path):
    UserFactory(username="maria", is_staff=True)
    with gunicorn_server(workers=WORKERS, env=database_env_for_test()) as server:
        probes = len(server.answers(path))  # the readiness probes' GETs (logged: they waited)
        guesses = in_parallel(2 * WORKERS, lambda: attempt(server.url, path, "maria", "guess"))
        right = in_parallel(2 * WORKERS, lambda: attempt(server.url, path, "maria", PASSWORD))
        # Each attempt is a GET of the form and a POST.
        answers = server.answers(path, at_least=probes + 2 * 4 * WORKERS)
        posts = [(pid, status) for pid, method, _, status in answers if method == "POST"]

    # The 5th failure locks. Attempts already past the check when it was recorded may still be
    # told "wrong": at most one per other worker.
    wrong = guesses.count("wrong")
    assert LIMIT - 1 <= wrong <= LIMIT - 1 + WORKERS - 1, guesses
    assert guesses.count("locked") == 2 * WORKERS - wrong
    assert right == ["locked"] * (2 * WORKERS)
    # One shared count of the passwords that were checked: the limit, plus at most one per other
    # worker that was already checking when the limit was reached (those are answered "locked").
    assert LIMIT <= AccessAttempt.objects.get().failures_since_start <= LIMIT + WORKERS - 1
    # The sign-ins went to several worker processes, which is what a per-process count misses.
    assert len(posts) == 4 * WORKERS
    assert len({pid for pid, _ in posts}) >= 2
