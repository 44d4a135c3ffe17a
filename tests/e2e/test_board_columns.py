"""What a board shows first, in headless Chromium (issue 32, point 6): at 1,400 px the whole
MedVidBench table fits beside its date, a column no row fills is hidden, and a visitor chooses
the columns (kept in the URL); at 390 px the search and the filters fold away and the first
screen shows the first row's first metric. Light and dark; axe-core and the CSP watch every
page. Screenshots: /tmp/e2e_board_columns_<width>_<scheme>[_chosen].png."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from submissions import services
from tests.e2e.browser import E2E_MARKS, axe_report, axe_violations, chromium, playwright_api
from tests.submissions.pages import METRIC_KEYS

pytestmark = E2E_MARKS

SCREENSHOTS = Path("/tmp")
PHONE_HEIGHT = 844  # a phone's screen at 390 px wide


@pytest.fixture
def board(benchmark):
    """Eight imported Official rows with every metric but STG_mIoU, no team, long names."""
    for number in range(8):
        value = 0.3 + number / 100
        services.import_published_result(
            benchmark,
            model_name=f"uAI-NEXUS-MedVLM-1.0{number}-4B-RL",
            values={key: value * (10 if key.endswith("_llm") else 1) for key in METRIC_KEYS}
            | {"STG_mIoU": None},
            verified_at=datetime(2026, 4, 15, tzinfo=UTC),
        )
    services.recompute_board(benchmark)


@pytest.fixture
def browser(live_server, board):
    with chromium() as browser:
        yield browser


def headers(page) -> list[str]:
    return [
        " ".join(text.split()).replace(" ▲", "")
        for text in page.locator("table.board thead th").all_inner_texts()
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_laptop_sees_the_whole_table_and_chooses_its_columns(live_server, browser, scheme):
    expect = playwright_api.expect
    context = browser.new_context(viewport={"width": 1400, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        page.goto(f"{live_server.url}/b/medvidbench/")
        shown = [key for key in METRIC_KEYS if key != "STG_mIoU"]
        assert headers(page) == ["Rank", "Model", *shown, "Date"]
        expect(page.locator("#columns-note")).to_contain_text("hidden: Team, STG_mIoU.")
        # The table fits: no column past its frame's right edge.
        frame = page.locator(".table-scroll")
        assert frame.evaluate("(element) => element.scrollWidth <= element.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        assert axe_report(f"board [{scheme}]", axe_violations(page)) == []
        page.screenshot(path=str(SCREENSHOTS / f"e2e_board_columns_1400_{scheme}.png"))

        page.get_by_text("Columns: 10 of 12 shown").click()
        chooser = page.get_by_role("form", name="Choose the columns of the Official board")
        for key in ["DVC_F1", "DVC_llm", "VS_llm", "RC_llm", "date"]:
            chooser.get_by_label(key if key != "date" else "Date").uncheck()
        chooser.get_by_role("button", name="Show these columns").click()
        expect(page).to_have_url(
            f"{live_server.url}/b/medvidbench/?columns=CVS_acc&columns=NAP_acc"
            "&columns=SA_acc&columns=TAG_mIoU%400.3&columns=TAG_mIoU%400.5"
        )
        assert headers(page) == ["Rank", "Model", "CVS_acc", "NAP_acc", "SA_acc",
                                 "TAG_mIoU@0.3", "TAG_mIoU@0.5"]  # fmt: skip
        # Sorting keeps the choice.
        page.get_by_role("link", name="NAP_acc", exact=True).click()
        assert headers(page) == ["Rank", "Model", "CVS_acc", "NAP_acc ▼", "SA_acc",
                                 "TAG_mIoU@0.3", "TAG_mIoU@0.5"]  # fmt: skip
        assert "columns=CVS_acc%2CNAP_acc%2CSA_acc" in page.url
        page.screenshot(path=str(SCREENSHOTS / f"e2e_board_columns_1400_{scheme}_chosen.png"))
        # Back to the default columns, still sorted.
        page.get_by_role("link", name="Default columns").click()
        by_nap = [f"{key} ▼" if key == "NAP_acc" else key for key in shown]
        assert headers(page) == ["Rank", "Model", *by_nap, "Date"]
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_sees_a_metric_on_its_first_screen(live_server, browser, scheme):
    expect = playwright_api.expect
    context = browser.new_context(
        viewport={"width": 390, "height": PHONE_HEIGHT}, color_scheme=scheme
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        page.goto(f"{live_server.url}/b/medvidbench/")
        first_metric = (
            page.locator("table.board tbody tr").first.locator("td.num:not(.rank):not(.tier)").first
        )
        expect(first_metric).to_have_text("0.370")
        box = first_metric.bounding_box()
        assert box["y"] + box["height"] <= PHONE_HEIGHT, box
        assert box["x"] + box["width"] <= 390, box
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # The search and the filters wait behind one line, the page's own scroll at 0.
        search = page.get_by_label("Search model or team")
        expect(search).to_be_hidden()
        assert axe_report(f"phone board [{scheme}]", axe_violations(page)) == []
        page.screenshot(path=str(SCREENSHOTS / f"e2e_board_columns_390_{scheme}.png"))
        page.get_by_text("Search, filter and columns").click()
        search.fill("1.03")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator("table.board tbody tr")).to_have_count(1)
        # In use, the filters stay open.
        expect(page.get_by_label("Search model or team")).to_be_visible()
        page.screenshot(path=str(SCREENSHOTS / f"e2e_board_columns_390_{scheme}_filtered.png"))
    finally:
        context.close()
