"""The submitter's status page in headless Chromium at 1,400 and 390 px, light and dark (issue 32,
point 10): the four steps to the Official board are a list whose steps stand apart (each on its
own line, a gap between them, a marker before each), and the metric table fits the phone's
width: no column cut off at the edge of its scrolling box.

Screenshots: /tmp/e2e_status_<width>_<scheme>.png (the page), /tmp/e2e_status_metrics_<width>_
<scheme>.png and /tmp/e2e_status_verification_<width>_<scheme>.png (the two parts, closer).
"""

import itertools
from pathlib import Path

import pytest

from submissions.enums import VerificationStatus
from submissions.services import set_verification_status
from tests.accounts.factories import PASSWORD, UserFactory
from tests.e2e.browser import E2E_MARKS, assert_no_csp_violations, chromium, playwright_api
from tests.e2e.test_accessibility import assert_no_sideways_scrolling
from tests.submissions import intervals_data

pytestmark = E2E_MARKS

interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry

SCREENSHOTS = Path("/tmp")

# Each step's box and marker, top to bottom.
STEP_BOXES = """
(list) => [...list.querySelectorAll(":scope > li")].map((step) => {
  const box = step.getBoundingClientRect();
  const style = getComputedStyle(step);
  return {top: box.top, bottom: box.bottom, display: style.display,
          marker: getComputedStyle(step, "::marker").content};
})
"""


@pytest.fixture
def entry(interval_benchmark, scored_entry, django_capture_on_commit_callbacks):
    """Sam's scored entry, nominated (the first step done, the second next)."""
    run = scored_entry("Sam Perfect", "perfect", 0, owner=UserFactory(username="sam"))
    with django_capture_on_commit_callbacks(execute=True):
        set_verification_status(run.submission, VerificationStatus.NOMINATED, actor=None)
    return run.submission


@pytest.fixture
def browser(live_server, entry):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390])
def test_the_steps_stand_apart_and_the_metrics_fit(live_server, browser, entry, width, scheme):
    expect = playwright_api.expect
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_login", "sam")
        page.fill("#id_password", PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        page.goto(f"{live_server.url}/submissions/{entry.pk}/")

        # The way to the Official board: four steps, one below the other, apart, numbered.
        steps = page.locator("section.verification ol")
        expect(steps.locator(":scope > li")).to_have_count(4)
        boxes = steps.evaluate(STEP_BOXES)
        assert [box["display"] for box in boxes] == ["list-item"] * 4
        assert all(box["marker"] not in {"", "none"} for box in boxes)
        gaps = [below["top"] - above["bottom"] for above, below in itertools.pairwise(boxes)]
        assert min(gaps) >= 6, gaps  # a visible gap between steps, never touching
        expect(steps.locator(":scope > li").nth(1)).to_have_attribute("aria-current", "step")

        # The metric table: all of it inside its box, nothing to scroll to.
        region = page.locator("#status .table-scroll").first
        expect(region.locator("table.result tbody tr")).to_have_count(10)
        sizes = region.evaluate("(box) => [box.scrollWidth, box.clientWidth]")
        assert sizes[0] <= sizes[1], sizes
        header = region.locator("thead th").all_inner_texts()
        assert header == ["Metric", "Value", "95% interval", "Scored"]
        region_box = region.bounding_box()
        for cell in region.locator("thead th").all():
            cell_box = cell.bounding_box()
            assert cell_box["x"] + cell_box["width"] <= region_box["x"] + region_box["width"] + 0.5

        assert_no_sideways_scrolling(page, width)
        assert_no_csp_violations(browser, page)
        name = f"{width}_{scheme}"
        page.screenshot(path=str(SCREENSHOTS / f"e2e_status_{name}.png"), full_page=True)
        region.screenshot(path=str(SCREENSHOTS / f"e2e_status_metrics_{name}.png"))
        page.locator("section.verification").screenshot(
            path=str(SCREENSHOTS / f"e2e_status_verification_{name}.png")
        )
    finally:
        context.close()
