"""GitHub sign-in as `make run` offers it, in headless Chromium: scripts/run.sh starts the web
server, the worker and the stand-in for GitHub's OAuth endpoints (accounts/github_standin.py) on
loopback, with allauth's GitHub provider pointed at the stand-in by PODIUM_GITHUB_URL. The
browser presses "Sign in with GitHub", lands on the stand-in's authorize page, presses
"Authorize" and comes back signed in, with a new account; at 1400 px and at 390 px.

Nothing is faked inside Podium: the redirect, the state check, the code exchange and the profile
requests are allauth's own, over real HTTP, and the page's CSP (form-action names the stand-in)
is the browser's to enforce.
"""

import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount

from accounts.github_standin import github_id
from accounts.models import User
from tests.benchmark.factories import BenchmarkFactory
from tests.e2e.browser import E2E_MARKS, chromium, playwright_api
from tests.live_gunicorn import PROJECT_ROOT, database_env_for_test, free_port
from tests.processes import stop_process_group

pytestmark = E2E_MARKS

WIDTHS = (1400, 390)
SCREENSHOTS = Path("/tmp")


def _wait_until_up(url: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"scripts/run.sh exited with {process.returncode}:\n{log.read_text()}"
            )
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{log.read_text()}")


@pytest.fixture
def make_run(tmp_path):
    """scripts/run.sh as `make run` starts it (dev settings, the stand-in GitHub on a free port),
    on the test's database; stopped the way Ctrl-C stops it (TERM: its trap stops all)."""
    BenchmarkFactory(slug="medvidbench", name="MedVidBench", is_public=True)
    address = f"127.0.0.1:{free_port()}"
    github_port = free_port()
    log = tmp_path / "run.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "PODIUM_GITHUB_URL"}
    }
    env |= {
        **database_env_for_test(),
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "PODIUM_ADDRESS": address,
        "PODIUM_STANDIN_PORT": "0",
        "PODIUM_STANDIN_MODEL_PORT": "0",
        "PODIUM_STANDIN_GITHUB_PORT": str(github_port),
        "PODIUM_LOCAL_ACCOUNTS": "true",
        # The dev settings' files (media, private, cache) in this test's folder, not the
        # checkout's var/, which another test run (or pytest worker) may be using.
        "PODIUM_VAR_DIR": str(tmp_path / "var"),
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(PROJECT_ROOT / "scripts" / "run.sh")],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_until_up(f"http://{address}/accounts/login/", process, log)
            _wait_until_up(f"http://127.0.0.1:{github_port}/favicon.ico", process, log)
            yield {"url": f"http://{address}", "github": f"http://127.0.0.1:{github_port}"}
        finally:
            stop_process_group(process, timeout=30)


def sign_in_with_github(page, podium: str, github: str, login: str, width: int, *, shots: bool):
    expect = playwright_api.expect
    page.goto(f"{podium}/accounts/login/?next=/b/medvidbench/")
    if shots:
        page.screenshot(path=SCREENSHOTS / f"e2e_signin_login_{width}.png", full_page=True)
    page.get_by_role("button", name="Sign in with GitHub").click()
    expect(page).to_have_url(re.compile(re.escape(f"{github}/login/oauth/authorize?") + ".+"))
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Stand-in GitHub: authorize podium-standin-client"
    )
    page.get_by_label("Sign in as the GitHub user").fill(login)
    if shots:
        page.screenshot(path=SCREENSHOTS / f"e2e_signin_authorize_{width}.png", full_page=True)
    page.get_by_role("button", name="Authorize").click()
    expect(page).to_have_url(f"{podium}/b/medvidbench/")
    expect(page.locator("nav.account")).to_contain_text(f"Signed in as {login}")
    if shots:
        page.screenshot(path=SCREENSHOTS / f"e2e_signin_signed_in_{width}.png", full_page=True)


def drive_both_widths(browser, podium: str, github: str) -> None:
    """At each width: signup and password reset (screenshots), a GitHub sign-in cancelled on
    the authorize page, then GitHub sign-in as a new login, its connected accounts page, sign
    out, and GitHub sign-in again as the same login."""
    expect = playwright_api.expect
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        for name, path in (("signup", "/accounts/signup/"), ("reset", "/accounts/password/reset/")):
            page.goto(f"{podium}{path}")
            expect(page.locator("nav.tabs")).to_contain_text("MedVidBench")
            page.screenshot(path=SCREENSHOTS / f"e2e_signin_{name}_{width}.png", full_page=True)
        # Cancel on the authorize page: back on Podium, nobody signed in.
        page.goto(f"{podium}/accounts/login/")
        page.get_by_role("button", name="Sign in with GitHub").click()
        page.get_by_role("link", name="Cancel").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Login Cancelled")
        expect(page.locator("nav.account")).to_contain_text("Sign in")

        sign_in_with_github(page, podium, github, f"octo-{width}", width, shots=True)
        page.goto(f"{podium}/accounts/3rdparty/")
        expect(page.locator("main")).to_contain_text(f"GitHub: octo-{width}")
        page.screenshot(path=SCREENSHOTS / f"e2e_signin_connections_{width}.png", full_page=True)
        page.get_by_role("button", name="Sign out").click()
        expect(page.locator("nav.account")).to_contain_text("Sign in")
        sign_in_with_github(page, podium, github, f"octo-{width}", width, shots=False)
        page.context.close()


def test_sign_in_with_github_through_the_stand_in_creates_the_account_once(make_run):
    # The browser's event loop refuses ORM calls while it runs (tests/e2e/browser.py): the
    # database is read after it closed.
    with chromium() as browser:
        drive_both_widths(browser, make_run["url"], make_run["github"])

    users = {
        user.username: (
            SocialAccount.objects.get(user=user).uid,
            list(EmailAddress.objects.filter(user=user).values_list("email", "verified")),
        )
        for user in User.objects.order_by("username")
    }
    assert users == {
        "octo-1400": (str(github_id("octo-1400")), [("octo-1400@standin-github.invalid", True)]),
        "octo-390": (str(github_id("octo-390")), [("octo-390@standin-github.invalid", True)]),
    }
