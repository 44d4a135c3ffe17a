"""The whole submitter path in headless Chromium, against the live server and a real worker.

Sign up a local account, submit a predictions file through the form, watch the status page
(htmx polling) until the background worker (`manage.py qcluster` in a child process, on this
test's PostgreSQL database) has scored it, then find the entry on the Community board.

Needs Debian's ``chromium`` (``/usr/bin/chromium``; ``.ci/run`` installs it) and Playwright for
Python driving it; ``playwright install`` is never used.
"""

import contextlib
import re
import shutil
from pathlib import Path

import pytest

from tests.e2e.browser import E2E_MARKS, chromium, playwright_api

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCORING_TIMEOUT_MS = 120_000
SCREENSHOT_COPY = Path("/tmp/e2e_board.png")

pytestmark = E2E_MARKS


@pytest.fixture
def browser(live_server, cluster, perfect_predictions):
    """Headless Chromium. Playwright's sync API keeps an event loop running in this thread, and
    Django then refuses ORM calls here, so this fixture comes after every fixture that touches
    the database (hence its arguments) and the test itself makes none."""
    with chromium() as browser:
        yield browser


def test_sign_up_submit_and_find_the_entry_on_the_community_board(
    live_server, cluster, browser, benchmark, perfect_predictions, tmp_path
):
    expect = playwright_api.expect
    assert benchmark.is_public
    predictions = tmp_path / "predictions.json"
    predictions.write_bytes(perfect_predictions)
    model_name = "E2E Browser Model"

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    try:
        # The benchmark is reachable.
        response = page.goto(f"{live_server.url}/b/{benchmark.slug}/")
        assert response is not None
        assert response.ok
        expect(page.locator("h1")).to_contain_text(benchmark.name)

        # Sign up a local account.
        page.goto(f"{live_server.url}/accounts/signup/")
        page.fill("#id_username", "e2e_submitter")
        page.fill("#id_email", "e2e@example.org")
        page.fill("#id_password1", "a-long-e2e-password-1")
        page.fill("#id_password2", "a-long-e2e-password-1")
        page.get_by_role("button", name="Create account").click()
        page.wait_for_url(re.compile(r"^(?!.*/accounts/signup/).*$"))
        expect(page.get_by_text("Signed in as e2e_submitter", exact=True)).to_be_visible()

        # Fill in the submission form and upload the file.
        page.goto(f"{live_server.url}/b/{benchmark.slug}/submit/")
        page.fill("#id_model_name", model_name)
        page.fill("#id_institution", "Podium E2E Lab")
        page.fill("#id_contact_email", "e2e@example.org")
        page.fill("#id_model_url", "https://example.org/e2e-model")
        page.set_input_files("#id_predictions", str(predictions))
        page.get_by_role("button", name="Check and submit").click()

        # The status page polls until the worker has scored the file.
        page.wait_for_url(re.compile(r"/submissions/\d+/$"))
        state = page.locator("#status .state")
        expect(state).to_have_class(
            re.compile(r"state-(scored|judging|complete)"), timeout=SCORING_TIMEOUT_MS
        )
        metric_row = page.locator(
            "table.result tr", has=page.locator("code", has_text="TAG_mIoU@0.3")
        )
        expect(metric_row.locator("td").first).to_have_text("1.000")  # perfect predictions
        expect(page.locator(".rank-note")).to_contain_text("Community board")
        page.screenshot(path=str(tmp_path / "status.png"), full_page=True)

        # The entry is on the Community board, with a rank.
        page.goto(f"{live_server.url}/b/{benchmark.slug}/community/")
        row = page.locator(
            "table.board tbody tr", has=page.locator("th.model", has_text=model_name)
        )
        expect(row).to_have_count(1)
        expect(row.locator(".rank-number")).to_have_text("1")  # the board's only entry
    finally:
        # The last page seen (the board, or wherever a failure stopped), for a look.
        screenshot = tmp_path / "board.png"
        with contextlib.suppress(playwright_api.Error):
            page.screenshot(path=str(screenshot), full_page=True)
            shutil.copyfile(screenshot, SCREENSHOT_COPY)
        page.close()
