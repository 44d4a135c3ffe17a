"""A maintainer's console in headless Chromium: sign in to the admin, take a community entry
through nominate, contact and access granted with the bulk actions, reject another one with a
reason on the confirmation page, verify a third that is being verified, and find it on the
Official board; the entry's page shows the audit trail of every move, attributed."""

import contextlib
import re
import shutil
from pathlib import Path

import pytest

from accounts.roles import ensure_maintainers_group
from submissions.enums import VerificationStatus
from submissions.services import recompute_board
from tests.accounts.factories import UserFactory
from tests.e2e.browser import E2E_MARKS, chromium, playwright_api, run_action
from tests.submissions.factories import scored_entry
from tests.verifying.factories import rerun_report

SCREENSHOT_COPY = Path("/tmp/e2e_admin.png")
PASSWORD = "a-long-maintainer-password-1"

pytestmark = E2E_MARKS


@pytest.fixture
def entries(benchmark):
    """Three scored, published community entries, one of them already being verified (its
    re-run done and within the tolerance), and a maintainer (staff, in the Maintainers group)
    with a password."""
    values = {"CVS_acc": 0.9, "NAP_acc": 0.5}
    made = {
        "Promising": scored_entry(benchmark, "Promising", values),
        "Doubtful": scored_entry(benchmark, "Doubtful", values),
        "Reproduced": scored_entry(
            benchmark, "Reproduced", values, verification_status=VerificationStatus.VERIFYING
        ),
    }
    rerun_report(made["Reproduced"])
    recompute_board(benchmark)
    maintainer = UserFactory(username="maria", is_staff=True)
    maintainer.set_password(PASSWORD)
    maintainer.save()
    maintainer.groups.add(ensure_maintainers_group())
    return made


@pytest.fixture
def browser(live_server, entries):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


def test_a_maintainer_moves_entries_through_verification_in_the_admin(
    live_server, entries, browser, benchmark, tmp_path
):
    expect = playwright_api.expect
    changelist = f"{live_server.url}/admin/submissions/submission/"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(20_000)
    try:
        page.goto(f"{live_server.url}/admin/login/?next=/admin/")
        page.fill("#id_username", "maria")
        page.fill("#id_password", PASSWORD)
        page.locator("input[type=submit]").click()
        expect(page.locator("#site-name")).to_be_visible()

        for label in (
            "Nominate for the Official board",
            "Record that the authors were contacted",
            "Record that model access was granted",
        ):
            run_action(page, changelist, "Promising", label)
            expect(page.locator("ul.messagelist")).to_contain_text("Promising")

        run_action(page, changelist, "Doubtful", "Nominate for the Official board")
        run_action(page, changelist, "Doubtful", "Reject, with a reason…")
        page.fill("textarea[name=reason]", "The numbers could not be reproduced.")
        page.locator(".submit-row input[type=submit]").click()
        expect(page.locator("ul.messagelist")).to_contain_text("Doubtful")

        run_action(page, changelist, "Reproduced", "Verify (put on the Official board)")
        expect(page.locator("ul.messagelist")).to_contain_text("Reproduced")

        # The list shows each entry's verification state.
        page.goto(changelist)
        for name, state in (
            ("Promising", "Model access granted"),
            ("Doubtful", "Rejected"),
            ("Reproduced", "Verified"),
        ):
            row = page.locator("#result_list tbody tr", has=page.get_by_text(name, exact=True))
            expect(row).to_contain_text(state)
        # Issue 32: the date column was cut off; it is whole, inside the list.
        created = page.locator("#result_list tbody tr td.field-created").first
        expect(created).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d\s\d\d:\d\d$"))
        # A list wider than its box scrolls sideways inside it rather than clipping a column.
        results = page.locator("#changelist .results")
        assert results.evaluate("box => getComputedStyle(box).overflowX") == "auto"
        # The rank column is short ("#3 (1.00)"; the wins are on the change page).
        expect(page.locator("#result_list thead")).to_contain_text("Rank (mean)")
        results.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        box, shown = created.bounding_box(), results.bounding_box()
        assert box["x"] + box["width"] <= shown["x"] + shown["width"] + 1
        # Every admin page names the site's icon: no request for a missing /favicon.ico.
        assert page.locator('link[rel="icon"]').get_attribute("href").endswith("favicon.svg")
        page.screenshot(path="/tmp/e2e_admin_changelist.png", full_page=True)

        # The entry's page: the audit trail names the maintainer for every move.
        page.goto(changelist)
        page.get_by_role("link", name="Promising", exact=True).first.click()
        trail = page.locator("table", has=page.get_by_text("From → to"))
        expect(trail).to_contain_text("community → nominated")
        expect(trail).to_contain_text("contacted → access_granted")
        expect(trail).to_contain_text("maria")

        # The verified entry is on the Official board, the others are not.
        page.goto(f"{live_server.url}/b/{benchmark.slug}/")
        board = page.locator("table.board tbody")
        expect(board).to_contain_text("Reproduced")
        expect(board).not_to_contain_text("Promising")
        page.goto(f"{live_server.url}/b/{benchmark.slug}/community/")
        expect(page.locator("table.board tbody")).to_contain_text("Promising")
    finally:
        screenshot = tmp_path / "admin.png"
        with contextlib.suppress(playwright_api.Error):
            page.screenshot(path=str(screenshot), full_page=True)
            shutil.copyfile(screenshot, SCREENSHOT_COPY)
        page.close()
