"""What the browser tests share: Debian's Chromium driven by Playwright (``playwright install``
is never used; ``.ci/run`` installs ``chromium``), the marks that skip them where they cannot
run, the browser itself, and the admin's "select a row, pick an action, Go"."""

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

# Every browser test: the worker and the live server share the test's PostgreSQL database.
E2E_MARKS = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="the worker process must share the test database (PostgreSQL)",
    ),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"no system Chromium at {CHROMIUM} (apt-get install chromium)"
    ),
]


@contextlib.contextmanager
def chromium() -> Iterator:
    """Headless Chromium. Playwright's sync API keeps an event loop running in its thread, and
    Django then refuses ORM calls there, so a test's browser fixture comes after every fixture
    that touches the database (its arguments) and the test itself makes none."""
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


def run_action(page, changelist, row_text, label):
    """On the admin list `changelist`, select the row showing `row_text` and run `label`."""
    page.goto(changelist)
    row = page.locator("#result_list tbody tr", has=page.get_by_text(row_text, exact=True))
    row.locator("input.action-select").check()
    page.select_option("select[name=action]", label=label)
    page.locator("button[name=index]").click()
