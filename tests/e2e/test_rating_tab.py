"""The Open-ended tab of the demo clinical QA board in headless Chromium (issue 15, point 3), at
a laptop's width and a phone's, under the Content-Security-Policy: the four demo entries
uploaded and scored, their battles judged by the loopback stand-in judge (`manage.py
run_battles --sync`), the tab ranked by rating with each rating's interval and battles, the
judge note, what the battles were and the download, and an entry's battles per opponent.
Screenshots: /tmp/e2e_rating_tab_<width>.png and /tmp/e2e_entry_battles_1400.png."""

import json

import pytest
from django.core.management import call_command

from arena.models import Battle, CategoryFit
from submissions.models import CategoryRating
from tests.arena.conftest import clinicalqa, demo_files, enter, private_dir, standin  # noqa: F401
from tests.e2e.browser import E2E_MARKS, assert_no_csp_violations, chromium, playwright_api

pytestmark = E2E_MARKS

WIDTHS = [1400, 390]
NAMES = ["demo-strong", "demo-good", "demo-fair", "demo-weak"]


@pytest.fixture
def rated(enter, clinicalqa):  # noqa: F811
    for name in NAMES:
        enter(name, name.removeprefix("demo-"))
    call_command("run_battles", "--benchmark", "clinicalqa", "--sync", verbosity=0)
    # Every pair on every open-ended question (4 entries, 5 opponents allowed).
    assert CategoryFit.objects.get().battles == Battle.objects.count() == 96
    return {
        rating.submission.model_name: rating
        for rating in CategoryRating.objects.select_related("submission")
    }


@pytest.fixture
def browser(live_server, rated):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


@pytest.mark.parametrize("width", WIDTHS)
def test_the_open_ended_tab_shows_ratings_with_intervals_and_the_judge(
    live_server, browser, rated, width
):
    expect = playwright_api.expect
    assert list(rated) == NAMES  # the demo models' quality order
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(20_000)
    try:
        response = page.goto(f"{live_server.url}/b/clinicalqa/community/")
        assert response is not None
        assert response.ok
        # The overview's facts are table cells like the others (the entry page's grid of
        # facts styled them once: each cell drew its own bottom line, out of line with the row).
        facts = page.locator("table.board tbody td.facts").first
        expect(facts).to_be_visible()
        assert facts.evaluate("(cell) => getComputedStyle(cell).display") == "table-cell"
        page.screenshot(path=f"/tmp/e2e_facts_overview_{width}.png")
        page.get_by_role("link", name="Open-ended").click()
        expect(page.locator(".category-intro h2")).to_have_text("Open-ended")
        expect(page.locator(".judge-note")).to_have_text(
            "The demo's stand-in judge is the judge here (a deterministic program, not an LLM)."
        )
        expect(page.locator(".rating-tab")).to_contain_text(
            "96 battles between 4 entries, judged by standin-judge"
        )
        rows = page.locator("table.board tbody tr")
        expect(rows).to_have_count(4)
        for index, name in enumerate(NAMES):
            rating = rated[name]
            row = rows.nth(index)
            expect(row).to_contain_text(name)
            cell = row.locator("td.rating")
            high, low = rating.ci_high - rating.rating, rating.rating - rating.ci_low
            expect(cell).to_contain_text(f"{rating.rating:.0f}")
            expect(cell.locator(".rating-spread")).to_have_text(f"+{high:.0f}/-{low:.0f}")
            expect(cell.locator(".battles")).to_have_text("48 battles")
            assert cell.get_attribute("title") == (
                f"95% interval {rating.ci_low:.0f}\N{EN DASH}{rating.ci_high:.0f}"
            )
        link = page.get_by_role("link", name="Download the battles")
        expect(link).to_be_visible()
        body = page.request.get(live_server.url + link.get_attribute("href")).text()
        lines = [json.loads(line) for line in body.splitlines()]
        assert len(lines) == 96
        assert {line["winner"] for line in lines} == {"model_a", "model_b", "tie"}
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert_no_csp_violations(browser, page)
        page.screenshot(path=f"/tmp/e2e_rating_tab_{width}.png", full_page=True)

        if width > 640:
            rows.first.get_by_role("link", name="demo-strong").click()
            section = page.locator("section.entry-battles")
            expect(section.locator("h2")).to_have_text("Battles: Open-ended")
            expect(section.locator("tbody tr")).to_have_count(3)
            expect(section).to_contain_text("each battle judged twice with the answers' positions")
            assert_no_csp_violations(browser, page)
            page.screenshot(path="/tmp/e2e_entry_battles_1400.png", full_page=True)
    finally:
        page.close()
