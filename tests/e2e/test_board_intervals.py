"""The board's tiers and rank-interval chart, and the compare page, in headless Chromium at a
laptop's width (1,400 px) and a phone's (390 px), under the Content-Security-Policy (issue 12).

Six entries scored on the interval slice of the demo test set (B = 200), rank intervals
computed: the references alone in tier 1, three fine-tuned-like runs sharing places, two
chat-model runs at the bottom. Screenshots: /tmp/e2e_board12_<width>_<scheme>.png (the chart
alone: /tmp/e2e_board12_chart_<width>_<scheme>.png, light and dark) and
/tmp/e2e_compare_<width>.png.
"""

import re
from pathlib import Path

import pytest

from submissions.intervals import compute_rank_intervals
from tests.accounts.factories import PASSWORD, UserFactory
from tests.e2e.browser import E2E_MARKS, assert_no_csp_violations, chromium, playwright_api
from tests.submissions import intervals_data

pytestmark = E2E_MARKS

interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry

WIDTHS = [1400, 390]


@pytest.fixture
def entries(interval_benchmark, scored_entry):
    owner = UserFactory(username="olga")
    runs = {
        "Perfect": scored_entry("Perfect", "perfect", 0),
        "Noisy one": scored_entry("Noisy one", "noisy", 1),
        "Noisy two": scored_entry("Noisy two", "noisy", 2),
        "Noisy three with a rather long model name": scored_entry(
            "Noisy three with a rather long model name", "noisy", 3
        ),
        "Prose one": scored_entry("Prose one", "prose", 1),
        "Prose two": scored_entry("Prose two", "prose", 2),
        "Olga Private": scored_entry("Olga Private", "noisy", 4, owner=owner, publish=False),
    }
    compute_rank_intervals(interval_benchmark)
    return {name: run.submission_id for name, run in runs.items()}


@pytest.fixture
def browser(live_server, entries):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


def no_page_overflow(page, width):
    """The page itself never scrolls sideways: wide tables and the chart scroll in their box."""
    assert page.evaluate("document.documentElement.scrollWidth") <= width


# The rank chart's drawing in the page's colours (issue 32, point 10: it was a white panel in
# the dark scheme): the plain bands are the page's background, the lines and dots its colours.
CHART_COLOURS = """
(chart) => {
  const style = (element, property) => getComputedStyle(element).getPropertyValue(property);
  const bands = chart.querySelectorAll("rect.tier-band");  // tier 1 shaded, then alternating
  return {
    page: getComputedStyle(document.body).backgroundColor,
    svg: getComputedStyle(chart).backgroundColor,
    band: style(bands[1], "fill"),
    shaded: style(bands[0], "fill"),
    label: style(chart.querySelector("a text"), "fill"),
    axis: style(chart.querySelector("text:not(a text)"), "fill"),
    dot: style(chart.querySelector("circle"), "fill"),
  };
}
"""
COLOURS = {
    "light": {"page": "rgb(255, 255, 255)", "shaded": "rgb(238, 243, 249)"},
    "dark": {"page": "rgb(20, 24, 29)", "shaded": "rgb(31, 41, 53)"},
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", WIDTHS)
def test_the_board_shows_tiers_and_the_rank_interval_chart(live_server, browser, width, scheme):
    expect = playwright_api.expect
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page.set_default_timeout(20_000)
    try:
        response = page.goto(f"{live_server.url}/b/medvidbench/community/")
        assert response is not None
        assert response.ok
        rows = page.locator("table.board tbody tr")
        expect(rows).to_have_count(6)  # the evaluate-only entry is not on the board
        expect(rows.first.locator(".rank-interval")).to_have_text("1\N{EN DASH}1")
        expect(rows.first.locator("td.tier")).to_have_text("1")
        tiers = rows.locator("td.tier").all_inner_texts()
        assert tiers[0] == "1"
        assert tiers == sorted(tiers, key=int)  # in rank order, tiers only go down the board
        # A line above each tier's leader, and only there.
        starts = [index for index, tier in enumerate(tiers) if index and tier != tiers[index - 1]]
        expect(page.locator("table.board tbody tr.tier-start")).to_have_count(len(starts))
        border = (
            rows.nth(starts[0])
            .locator("td.rank")
            .evaluate("cell => getComputedStyle(cell).borderTopWidth")
        )
        assert border == "2px"
        expect(page.locator(".tiers-legend")).to_contain_text(
            "Tier: entries whose 95% rank intervals overlap the tier leader's"
        )
        # Hover a value for its interval.
        assert (
            rows.first.locator("td.num").nth(2).get_attribute("title").startswith("95% interval ")
        )

        # The wide drawing on a laptop, the narrow one on a phone: one of them shows.
        shown, hidden = ("wide", "narrow") if width > 640 else ("narrow", "wide")
        expect(page.locator(f"svg.rank-chart-svg.{hidden}")).to_be_hidden()
        chart = page.locator(f"svg.rank-chart-svg.{shown}")
        chart.scroll_into_view_if_needed()
        expect(chart).to_be_visible()
        expect(chart.locator("circle")).to_have_count(6)
        expect(chart.locator("rect.tier-band")).to_have_count(len(starts) + 1)
        box = chart.bounding_box()
        # Drawn at least at about its own size: 12-unit text stays >= 11 px.
        assert box["width"] >= (700 if shown == "wide" else 340)
        assert box["x"] + box["width"] <= width  # no sideways scrolling needed
        assert chart.get_attribute("role") == "group"  # it holds links: not an img
        colours = chart.evaluate(CHART_COLOURS)
        expected = COLOURS[scheme]
        assert colours["svg"] in {"rgba(0, 0, 0, 0)", expected["page"]}  # no card of its own
        assert (colours["page"], colours["band"], colours["shaded"]) == (
            expected["page"],
            expected["page"],
            expected["shaded"],
        )
        assert len({colours["label"], colours["axis"], colours["dot"], expected["page"]}) == 4
        # The long name is shortened in the drawing, whole in its tooltip and the table.
        short = "Noisy three with a rather lon…" if shown == "wide" else "Noisy three wit…"
        expect(chart).to_contain_text(short)
        page.locator(".chart-table summary").click()
        expect(page.locator(".chart-table table tbody tr")).to_have_count(6)
        expect(page.locator(".chart-table table")).to_contain_text(
            "Noisy three with a rather long model name"
        )
        no_page_overflow(page, width)
        assert_no_csp_violations(browser, page)
        page.screenshot(path=f"/tmp/e2e_board12_{width}_{scheme}.png", full_page=True)
        # The chart alone, for a closer look.
        page.locator("section.rank-chart").screenshot(
            path=f"/tmp/e2e_board12_chart_{width}_{scheme}.png"
        )
    finally:
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_compare_page_compares_two_picked_entries(live_server, browser, entries, width):
    expect = playwright_api.expect
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(20_000)
    try:
        page.goto(f"{live_server.url}/b/medvidbench/community/")
        page.get_by_role("link", name="Compare two entries").first.click()
        page.wait_for_url("**/b/medvidbench/compare/")
        expect(page.locator("select#id_a option")).to_have_count(7)  # 6 and the prompt
        page.select_option("#id_a", str(entries["Noisy one"]))
        page.select_option("#id_b", str(entries["Prose one"]))
        page.get_by_role("button", name="Compare").click()
        page.wait_for_url(f"**/compare/?a={entries['Noisy one']}&b={entries['Prose one']}")

        expect(page.locator(".compare-summary")).to_contain_text("Noisy one is better on")
        rows = page.locator("table.compare:not(.compare-datasets) tbody tr")
        expect(rows).to_have_count(10)
        expect(rows.first.locator("td.verdict")).to_contain_text("Noisy one is better")
        expect(page.locator("table.compare-datasets tbody tr").first).to_be_visible()
        no_page_overflow(page, width)
        assert_no_csp_violations(browser, page)
        page.screenshot(path=f"/tmp/e2e_compare_{width}.png", full_page=True)
        page.locator("section.comparison .table-scroll").first.screenshot(
            path=f"/tmp/e2e_compare_table_{width}.png"
        )

        # A hidden entry's id is refused with a message, not an error page.
        private = entries["Olga Private"]
        response = page.goto(
            f"{live_server.url}/b/medvidbench/compare/?a={entries['Perfect']}&b={private}"
        )
        assert response.status == 400
        expect(page.locator(".errorlist")).to_have_text(
            f"There is no entry #{private} on this benchmark that you can compare. "
            "Pick one from the list."
        )
        expect(page.locator(".comparison")).to_have_count(0)
        assert_no_csp_violations(browser, page)
        page.screenshot(path=f"/tmp/e2e_compare_error_{width}.png", full_page=True)
    finally:
        page.close()


def test_the_owner_compares_their_evaluate_only_entry(live_server, browser, entries):
    expect = playwright_api.expect
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(20_000)
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_login", "olga")
        page.fill("#id_password", PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        page.goto(
            f"{live_server.url}/b/medvidbench/compare/"
            f"?a={entries['Olga Private']}&b={entries['Noisy one']}"
        )
        expect(page.locator("#comparison-heading")).to_contain_text("Olga Private")
        expect(page.locator(".compare-summary")).to_be_visible()
        assert_no_csp_violations(browser, page)
        page.screenshot(path=str(Path("/tmp/e2e_compare_owner.png")), full_page=True)
    finally:
        page.close()


@pytest.fixture
def official(interval_benchmark, entries):
    """The Official board: "Perfect" and "Noisy one" verified, beside two imported results
    published without per-sample data; rank intervals computed."""
    from datetime import UTC, datetime

    from submissions.models import Submission
    from submissions.services import import_published_result, recompute_board

    Submission.objects.filter(pk__in=[entries["Perfect"], entries["Noisy one"]]).update(
        verification_status="verified", verified_at=datetime(2026, 4, 15, tzinfo=UTC)
    )
    for name, value in (("Imported Strong", 0.95), ("Imported Weak", 0.05)):
        import_published_result(
            interval_benchmark,
            model_name=name,
            values={"CVS_acc": value, "NAP_acc": value, "SA_acc": value},
            verified_at=datetime(2026, 4, 15, tzinfo=UTC),
        )
    recompute_board(interval_benchmark)
    compute_rank_intervals(interval_benchmark)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", WIDTHS)
def test_an_imported_rows_rank_interval_says_what_it_means(
    live_server, official, browser, width, scheme
):
    """Issue 32, point 5: an imported row read "no interval (imported)" beside a rank interval
    and a tier, with no word on what that interval is."""
    expect = playwright_api.expect
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page.set_default_timeout(20_000)
    try:
        page.goto(f"{live_server.url}/b/medvidbench/")
        imported = page.locator("table.board tbody tr", has_text="Imported Strong")
        expect(imported.locator(".rank-interval")).to_contain_text("*")
        expect(imported.locator(".rank-interval")).to_have_attribute(
            "title", re.compile(r"^Imported: its published values are held fixed")
        )
        expect(imported.locator(".no-interval")).to_have_text(
            "no interval (imported); rank interval* with its values held fixed"
        )
        verified = page.locator("table.board tbody tr", has_text="Perfect")
        expect(verified.locator(".rank-interval")).not_to_contain_text("*")
        expect(page.locator(".tiers-legend")).to_contain_text(
            "an imported row's: published without per-sample data, its values are held fixed"
        )
        no_page_overflow(page, width)
        assert_no_csp_violations(browser, page)
        page.screenshot(path=f"/tmp/e2e_board_imported_{width}_{scheme}.png", full_page=True)
    finally:
        page.close()
