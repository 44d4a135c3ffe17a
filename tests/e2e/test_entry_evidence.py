"""A verified upload's entry page with its verification evidence (issue 33, point 4) in headless
Chromium at a laptop's and a phone's width, light and dark: the re-run's facts and its report
table (a forced verify, so its note shows too), no sideways scroll of the page (the table
scrolls in its own box), no endpoint address on it, axe-core and the Content-Security-Policy
clean. Screenshots: /tmp/e2e_entry_evidence_<width>_<scheme>.png (and `_section.png`, the
section alone), for a look."""

import pytest
from django.utils import timezone

from plugins.medvidbench.scoring import SCORER_VERSION
from submissions.enums import VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.services import set_verification_status
from tests.accounts.factories import maintainer_user
from tests.e2e.browser import (
    E2E_MARKS,
    assert_no_csp_violations,
    axe_report,
    axe_violations,
    chromium,
    playwright_api,
)
from tests.submissions import intervals_data
from tests.verifying.factories import RerunJobFactory
from verifying.enums import RerunStatus
from verifying.report import build_report

pytestmark = E2E_MARKS

interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry

NOTE = (
    "The authors' server resized frames to 336 px after the upload; the 0.02 on CVS_acc is "
    "that, checked on 40 clips by hand."
)


@pytest.fixture
def verified(interval_benchmark, scored_entry, django_capture_on_commit_callbacks):
    """A scored upload verified, forced, from a re-run whose CVS_acc came out 0.02 lower (its
    report built by the re-run's own `build_report`), beside two community entries."""
    entry = scored_entry("Noisy Model", kind="noisy", seed=2).submission
    scored_entry("Perfect Model", kind="perfect", seed=1)
    maintainer = maintainer_user()
    for status in (
        VerificationStatus.NOMINATED,
        VerificationStatus.CONTACTED,
        VerificationStatus.ACCESS_GRANTED,
        VerificationStatus.VERIFYING,
    ):
        set_verification_status(entry, status, actor=maintainer)
    own = entry.evaluations.get().metrics
    rerun_metrics = {**own, "CVS_acc": own["CVS_acc"] - 0.02}
    RerunJobFactory(
        submission=entry,
        status=RerunStatus.DONE,
        items_done=5,
        finished_at=timezone.now(),
        report=build_report(entry, rerun_metrics),
        result={"scorer_version": SCORER_VERSION},
    )
    with django_capture_on_commit_callbacks(execute=True):
        set_verification_status(
            entry, VerificationStatus.VERIFIED, actor=maintainer, force=True, note=NOTE
        )
    compute_rank_intervals(interval_benchmark, force=True)
    return f"/b/{interval_benchmark.slug}/entries/{entry.pk}/"


@pytest.fixture
def browser(live_server, verified):
    """After every fixture that touches the database (tests/e2e/browser.py says why)."""
    with chromium() as browser:
        yield browser


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390])
def test_the_entry_page_shows_the_reruns_evidence(live_server, verified, browser, width, scheme):
    expect = playwright_api.expect
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        response = page.goto(live_server.url + verified)
        assert response is not None
        assert response.status == 200
        section = page.locator("section.entry-evidence")
        expect(section.get_by_role("heading", name="Verification evidence")).to_be_visible()
        expect(section.locator(".forced-note")).to_have_text(NOTE)
        expect(section.locator("dl.evidence-facts")).to_contain_text("version 1")
        expect(section.locator("dl.evidence-facts")).to_contain_text(SCORER_VERSION)
        # CVS_acc's row: within, submitted, re-run, difference, tolerance.
        cells = section.locator("table.evidence-metrics tbody tr").first.locator("td")
        texts = cells.all_inner_texts()
        assert (texts[0], *texts[3:]) == ("no, outside", "-0.0200", "±0.01")
        # A phone has the tolerance once, above the table, and not in each row.
        assert cells.last.is_visible() is (width > 640)
        expect(section.locator("dl.evidence-facts")).to_contain_text("±0.01 on each metric")
        # Its verdict is on the screen without scrolling the table sideways.
        verdict = cells.first.bounding_box()
        assert verdict is not None
        assert verdict["x"] + verdict["width"] <= width, verdict
        assert "127.0.0.1:9" not in page.content()
        section.scroll_into_view_if_needed()
        page.screenshot(path=f"/tmp/e2e_entry_evidence_{width}_{scheme}.png", full_page=True)
        # The section alone, readable at a phone's width.
        section.screenshot(path=f"/tmp/e2e_entry_evidence_{width}_{scheme}_section.png")
        # The page never scrolls sideways; a wide report scrolls in its own box.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert axe_report(f"entry evidence [{width}, {scheme}]", axe_violations(page)) == []
        assert_no_csp_violations(browser, page)
    finally:
        context.close()
