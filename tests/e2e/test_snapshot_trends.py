"""The changes between two snapshots and an entry's rank over them (issue 33, point 3) in
headless Chromium at a laptop's and a phone's width, light and dark: the diff page's summary
and tables, the entry page's rank chart (the wide drawing on a laptop, the narrow one on a
phone) with its table, no sideways scroll of the page, axe-core and the Content-Security-Policy
clean. Screenshots: /tmp/e2e_snapshot_diff_<width>_<scheme>.png and
/tmp/e2e_entry_trend_<width>_<scheme>.png (the section alone), for a look."""

import pytest
from django.utils import timezone

from submissions.enums import VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardSnapshot
from submissions.services import import_published_result, set_verification_status
from tests.accounts.factories import maintainer_user
from tests.e2e.browser import (
    E2E_MARKS,
    assert_no_csp_violations,
    axe_report,
    axe_violations,
    chromium,
    playwright_api,
)

pytestmark = E2E_MARKS


@pytest.fixture
def history(benchmark, django_capture_on_commit_callbacks):
    """Five snapshots: GPT-4o imported first, then three entries above or below it, then GPT-4o
    withdrawn to the Community board. Returns the diff's and GPT-4o's page URLs."""

    def change(action, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            result = action(*args, **kwargs)
        compute_rank_intervals(benchmark)
        return result

    def imported(name, value):
        return import_published_result(
            benchmark, model_name=name, values={"CVS_acc": value}, verified_at=timezone.now()
        )

    gpt = change(imported, "GPT-4o", 0.6)
    change(imported, "Claude 3.5 Sonnet", 0.7)
    change(imported, "Gemini 1.5 Pro", 0.65)
    change(imported, "LLaVA-NeXT-Video", 0.5)
    change(
        set_verification_status,
        gpt,
        VerificationStatus.WITHDRAWN,
        actor=maintainer_user(),
        reason="re-checked",
    )
    snapshots = list(BoardSnapshot.objects.filter(sealed_at__isnull=False).order_by("pk"))
    assert len(snapshots) == 5
    slug = benchmark.slug
    return {
        "diff": f"/b/{slug}/history/diff/?from={snapshots[0].pk}&to={snapshots[-1].pk}",
        "entry": f"/b/{slug}/entries/{gpt.pk}/",
    }


@pytest.fixture
def browser(live_server, history):
    """After every fixture that touches the database (tests/e2e/browser.py says why)."""
    with chromium() as browser:
        yield browser


def _open(browser, url, width, scheme):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(15_000)
    response = page.goto(url)
    assert response is not None
    assert response.status == 200
    return context, page


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390])
def test_the_diff_page(live_server, history, browser, width, scheme):
    expect = playwright_api.expect
    context, page = _open(browser, live_server.url + history["diff"], width, scheme)
    try:
        expect(page.locator("#diff-span")).to_contain_text("the older")
        expect(page.locator("#diff-summary")).to_contain_text("3 added")
        expect(page.locator("#diff-summary")).to_contain_text("1 changed board")
        row = page.locator("#diff-changed tbody tr").first
        expect(row.locator("th")).to_have_text("GPT-4o")
        expect(row.locator("td").first).to_have_text("Official → Community")
        expect(page.locator("#diff-added tbody tr")).to_have_count(3)
        page.screenshot(path=f"/tmp/e2e_snapshot_diff_{width}_{scheme}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert axe_report(f"snapshot diff [{width}, {scheme}]", axe_violations(page)) == []
        assert_no_csp_violations(browser, page)
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390])
def test_the_entry_trend(live_server, history, browser, width, scheme):
    expect = playwright_api.expect
    context, page = _open(browser, live_server.url + history["entry"], width, scheme)
    try:
        section = page.locator("section.entry-trend")
        expect(section.get_by_role("heading", name="Rank over time")).to_be_visible()
        shown = "wide" if width > 640 else "narrow"
        hidden = "narrow" if shown == "wide" else "wide"
        chart = section.locator(f"svg.rank-history.{shown}")
        expect(chart).to_be_visible()
        expect(section.locator(f"svg.rank-history.{hidden}")).to_be_hidden()
        expect(chart.locator("circle.point.official")).to_have_count(4 + 1)  # and the legend's
        expect(chart.locator("circle.point.community")).to_have_count(1 + 1)
        box = chart.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= width, box
        section.locator("summary").click()
        expect(section.locator("table.rank-history-table tbody tr")).to_have_count(5)
        expect(section.locator("table.rank-history-table tbody tr").last).to_contain_text(
            "Community"
        )
        section.scroll_into_view_if_needed()
        section.screenshot(path=f"/tmp/e2e_entry_trend_{width}_{scheme}.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert axe_report(f"entry trend [{width}, {scheme}]", axe_violations(page)) == []
        assert_no_csp_violations(browser, page)
    finally:
        context.close()
