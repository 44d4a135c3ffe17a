"""The board's tools in headless Chromium at 1,400 and 390 px (issue 13, point 11): pages of
rows, a search by team, the tag filter, the CSV and JSON downloads of what is shown, the paper
and code links, and the citation copied to the clipboard; axe-core and the
Content-Security-Policy watch every page. Screenshots: /tmp/e2e_board_tools_<width>_*.png.
"""

import csv
import io
import json
import re
from pathlib import Path

import pytest

from submissions import services
from tests.e2e.browser import (
    E2E_MARKS,
    assert_no_csp_violations,
    axe_report,
    axe_violations,
    chromium,
    playwright_api,
)
from tests.submissions.factories import scored_entry
from tests.submissions.pages import values

pytestmark = E2E_MARKS

SCREENSHOTS = Path("/tmp")
ENTRIES = 45
PAGE_SIZE = 20


@pytest.fixture
def board(benchmark, settings):
    """45 community rows: every third from "Ärzte Lab", every fifth with a paper and code."""
    settings.PODIUM_BOARD_PAGE_SIZE = PAGE_SIZE
    for number in range(ENTRIES):
        links = {}
        if number % 5 == 0:
            links = {
                "paper_url": f"https://example.org/paper-{number}.pdf",
                "code_url": f"https://example.org/code-{number}",
            }
        scored_entry(
            benchmark,
            f"Model {number:02d}",
            values(CVS_acc=number / 100),
            team_name="Ärzte Lab" if number % 3 == 0 else f"Group {number % 7}",
            institution="",
            **links,
        )
    services.recompute_board(benchmark)
    return {"citation": benchmark.citation}


@pytest.fixture
def browser(live_server, board):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


def check_page(page, width, where, problems):
    problems += axe_report(f"{where} [{width} px]", axe_violations(page))
    assert page.evaluate("document.documentElement.scrollWidth") <= width, where


@pytest.mark.parametrize("width", [1400, 390])
def test_page_search_filter_download_and_copy_the_citation(live_server, browser, board, width):
    expect = playwright_api.expect
    context = browser.new_context(
        viewport={"width": width, "height": 900},
        accept_downloads=True,
        permissions=["clipboard-read", "clipboard-write"],
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems = []
    try:
        page.goto(f"{live_server.url}/b/medvidbench/community/")
        rows = page.locator("table.board tbody tr")
        expect(rows).to_have_count(PAGE_SIZE)
        expect(page.locator("#board-count")).to_have_text("Showing 1\N{EN DASH}20 of 45 entries.")
        expect(rows.first.locator("th.model a").first).to_have_text("Model 44")
        check_page(page, width, "board page 1", problems)
        page.screenshot(path=str(SCREENSHOTS / f"e2e_board_tools_{width}_page1.png"))

        pages = page.get_by_role("navigation", name="Pages of the board")
        pages.get_by_role("link", name="Page 3").click()
        expect(page).to_have_url(re.compile(r"\?page=3$"))
        expect(rows).to_have_count(ENTRIES - 2 * PAGE_SIZE)
        expect(page.locator("#board-count")).to_have_text("Showing 41\N{EN DASH}45 of 45 entries.")
        pages.get_by_role("link", name="Previous").click()
        expect(page).to_have_url(re.compile(r"\?page=2$"))
        expect(rows.first.locator("th.model a").first).to_have_text("Model 24")

        # A search by team keeps to the rows it finds, from the first page. On a phone the
        # search waits behind one line (issue 32).
        controls = page.locator("#board-controls")
        assert controls.evaluate("(details) => details.open") == (width > 640)
        if width <= 640:
            page.get_by_text("Search, filter and columns").click()
        page.get_by_label("Search model or team").fill("ärzte")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator("#board-count")).to_have_text(
            "Showing 1\N{EN DASH}15 of 15 matching entries for “ärzte”."
        )
        expect(rows).to_have_count(15)
        for team in rows.locator("td.team").all_inner_texts():
            assert team == "Ärzte Lab"
        expect(page.get_by_label("Search model or team")).to_have_value("ärzte")

        # And a tag on top: the entries of that team that link a paper.
        page.get_by_label("Show").select_option(label="With a paper")
        page.get_by_role("button", name="Filter").click()
        expect(rows).to_have_count(3)  # 0, 15 and 30
        expect(page.get_by_role("link", name="Model 30: paper")).to_have_attribute(
            "href", "https://example.org/paper-30.pdf"
        )
        expect(page.get_by_role("link", name="Model 30: code")).to_be_visible()
        check_page(page, width, "board filtered", problems)
        page.screenshot(path=str(SCREENSHOTS / f"e2e_board_tools_{width}_filtered.png"))

        # The downloads hold the rows shown, whole.
        downloads = page.get_by_role("group", name="Download this board")
        with page.expect_download() as info:
            downloads.get_by_role("link", name="CSV").click()
        download = info.value
        assert re.fullmatch(
            r"medvidbench-community-rankings-\d{4}-\d\d-\d\d\.csv", download.suggested_filename
        )
        header, *lines = list(csv.reader(io.StringIO(Path(download.path()).read_text())))
        assert [line[header.index("model")] for line in lines] == [
            "Model 30",
            "Model 15",
            "Model 00",
        ]
        with page.expect_download() as info:
            downloads.get_by_role("link", name="JSON").click()
        payload = json.loads(Path(info.value.path()).read_text())
        assert [row["model"] for row in payload["results"]] == ["Model 30", "Model 15", "Model 00"]
        assert payload["count"] == 3

        # Nothing matches: said so, with the way back.
        page.get_by_label("Search model or team").fill("nobody at all")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator("#board-count")).to_contain_text("No entry on this board matches")
        page.get_by_role("link", name="Show the whole board").click()
        expect(rows).to_have_count(PAGE_SIZE)

        # The citation, copied.
        citation = page.locator("#citation-text")
        citation.scroll_into_view_if_needed()
        page.get_by_role("button", name="Copy the BibTeX").click()
        expect(page.locator(".copy-status")).to_have_text("Copied to the clipboard.")
        assert page.evaluate("navigator.clipboard.readText()") == board["citation"]
        page.screenshot(path=str(SCREENSHOTS / f"e2e_board_tools_{width}_citation.png"))

        page.goto(f"{live_server.url}/b/medvidbench/about/")
        page.get_by_role("button", name="Copy the BibTeX").click()
        expect(page.locator(".copy-status")).to_have_text("Copied to the clipboard.")
        check_page(page, width, "about", problems)
        assert_no_csp_violations(browser, page)
    finally:
        context.close()
    assert not problems, "\n".join(problems)
