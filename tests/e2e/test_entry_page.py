"""The public entry page (issue 12) in headless Chromium at a laptop's and a phone's width:
the metric bars and the heatmap draw (server-rendered SVG, no script), the page does not
overflow a phone's screen (the heatmap scrolls in its own box), and nothing violates the
Content-Security-Policy (tests/e2e/conftest.py fails the test on any violation).

The screenshots land in /tmp/e2e_entry_wide.png and /tmp/e2e_entry_narrow.png, for a look.
"""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from submissions.intervals import compute_rank_intervals
from submissions.models import BoardEntry
from submissions.services import import_published_result
from tests.e2e.browser import E2E_MARKS, assert_no_csp_violations, chromium, playwright_api
from tests.submissions import intervals_data

SCREENSHOTS = {1400: Path("/tmp/e2e_entry_wide.png"), 390: Path("/tmp/e2e_entry_narrow.png")}

pytestmark = E2E_MARKS

interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry


@pytest.fixture
def entries(interval_benchmark, scored_entry):
    """Three scored uploads and an imported row, the rank intervals computed; the noisy
    entry's details filled in as a submitter would."""
    noisy = scored_entry("Noisy Model", kind="noisy", seed=2).submission
    scored_entry("Perfect Model", kind="perfect", seed=1)
    scored_entry("Prose Model", kind="prose", seed=3)
    import_published_result(
        interval_benchmark,
        model_name="GPT-4.1",
        values={"CVS_acc": 0.018, "NAP_acc": 0.25, "DVC_llm": 2.438},
        verified_at=datetime(2026, 4, 15, 12, tzinfo=UTC),
        is_baseline=True,
    )
    noisy.team_name = "Team Noise"
    noisy.authors = "A. Author, B. Author"
    noisy.institution = "Noise Lab"
    noisy.paper_url = "https://example.org/paper"
    noisy.save(update_fields=["team_name", "authors", "institution", "paper_url"])
    compute_rank_intervals(interval_benchmark, force=True)
    entry = BoardEntry.objects.get(submission=noisy)
    return {
        "path": f"/b/{interval_benchmark.slug}/entries/{noisy.pk}/",
        "rank": entry.rank,
        "best": entry.rank_best,
        "worst": entry.rank_worst,
    }


@pytest.fixture
def browser(live_server, entries):
    """After every fixture that touches the database (tests/e2e/browser.py says why)."""
    with chromium() as browser:
        yield browser


@pytest.mark.parametrize("width", [1400, 390])
def test_the_entry_page_draws_its_charts_and_fits_the_screen(live_server, entries, browser, width):
    expect = playwright_api.expect
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(15_000)
    try:
        response = page.goto(live_server.url + entries["path"])
        assert response is not None
        assert response.status == 200
        expect(page.locator("h1")).to_contain_text("Noisy Model")
        expect(page.locator(".rank-line")).to_contain_text(
            f"Rank {entries['rank']} (95% interval {entries['best']}\N{EN DASH}{entries['worst']})"
        )
        bars = page.get_by_role("img", name="Each metric with its 95% interval")
        heatmap = page.get_by_role("img", name="Each metric on each dataset")
        expect(bars).to_be_visible()
        expect(heatmap).to_be_visible()
        # Ten metric rows with a bar each but the three pending judge metrics.
        assert bars.locator("g > text[font-weight='600']").count() == 10
        box = bars.bounding_box()
        assert box is not None
        assert 300 <= box["width"] <= width
        page.screenshot(path=str(SCREENSHOTS[width]), full_page=True)
        # The page itself never scrolls sideways; the heatmap scrolls in its own box.
        scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
        assert scroll_width <= width
        # The fallback table opens.
        page.get_by_text("The per-dataset values as a table").click()
        expect(page.locator("table.per-dataset")).to_be_visible()
        assert_no_csp_violations(browser, page)
    finally:
        page.close()
