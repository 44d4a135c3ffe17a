"""A submitter's own entries in headless Chromium, at 1400 and 390 px (issue 13, points 1, 4, 5
and 6), against the live server and a real worker: the quota line on Submit, an upload
followed by the status page's one live region until it is scored, the same file again
(accepted and flagged as a duplicate of the first), and the first entry taken off the boards
and published again from its status page.
"""

import contextlib
import re
import shutil
from pathlib import Path

import pytest

from tests.accounts.factories import UserFactory
from tests.e2e.browser import E2E_MARKS, chromium, playwright_api

SCORING_TIMEOUT_MS = 120_000
PASSWORD = "a-long-e2e-password-2"

pytestmark = E2E_MARKS


@pytest.fixture
def person():
    return UserFactory(username="owner_e2e", password=PASSWORD)


@pytest.fixture
def browser(live_server, cluster, perfect_predictions, person):
    """After every fixture that touches the database (see test_submit_flow.py)."""
    with chromium() as browser:
        yield browser


def submit(page, base, slug, path, name):
    page.goto(f"{base}/b/{slug}/submit/")
    page.fill("#id_model_name", name)
    page.fill("#id_institution", "Own Lab")
    page.fill("#id_contact_email", "own@example.org")
    page.fill("#id_model_url", "https://example.org/own-model")
    page.set_input_files("#id_predictions", str(path))
    page.get_by_role("button", name="Check and submit").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))


@pytest.mark.parametrize("width", [1400, 390])
def test_upload_watch_it_scored_upload_it_again_and_take_it_off_the_boards(
    live_server, cluster, browser, benchmark, perfect_predictions, tmp_path, width
):
    expect = playwright_api.expect
    predictions = tmp_path / "predictions.json"
    predictions.write_bytes(perfect_predictions)
    base, slug = live_server.url, benchmark.slug
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(30_000)
    try:
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_login", "owner_e2e")
        page.fill("#id_password", PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(re.compile(r"^(?!.*/accounts/login/).*$"))

        page.goto(f"{base}/b/{slug}/submit/")
        expect(page.locator(".quota")).to_contain_text("5 of 5 evaluations left today")

        # The one live region carries the run from Queued to Scored without a reload.
        submit(page, base, slug, predictions, "Own Model")
        first = page.url
        expect(page.locator("#live #status .state")).to_have_class(
            re.compile(r"state-(scored|judging|complete)"), timeout=SCORING_TIMEOUT_MS
        )
        expect(page.locator("#live .rank-note")).to_contain_text("of all published entries")

        # The same file again: accepted, said to score the same as the first, and kept off the
        # boards while the first lists these results (issue 32, point 9).
        submit(page, base, slug, predictions, "Own Model Again")
        expect(page.locator(".messages .warning")).to_contain_text(
            "This file is byte for byte the one of your entry “Own Model”"
        )
        expect(page.locator(".duplicate-file")).to_contain_text("“Own Model”")
        expect(page.locator(".duplicate-file")).to_contain_text("this entry is evaluate-only")

        # The first entry off the boards, then back on.
        page.goto(first)
        page.get_by_text("Take this entry off the boards…").click()
        page.get_by_role("button", name="Take it off the boards").click()
        expect(page.get_by_text("The entry is off the boards")).to_be_visible()
        page.goto(f"{base}/b/{slug}/community/")
        on_board = page.locator("table.board").get_by_role("link", name="Own Model", exact=True)
        expect(on_board).to_have_count(0)
        page.goto(first)
        page.get_by_role("button", name="Publish this entry").click()
        expect(page.get_by_text("The entry is published")).to_be_visible()
        page.goto(f"{base}/b/{slug}/community/")
        expect(on_board).to_have_count(1)
        page.goto(first)
        page.screenshot(path=str(tmp_path / "own.png"), full_page=True)
    finally:
        with contextlib.suppress(playwright_api.Error):
            page.screenshot(path=str(tmp_path / "last.png"), full_page=True)
            shutil.copyfile(tmp_path / "last.png", Path(f"/tmp/e2e_own_entry_{width}.png"))
        page.close()
