"""Accessibility (WCAG 2.2 AA, issue 13 point 12) in headless Chromium: every page that matters,
signed out and signed in, at a laptop's width (1,400 px) and a phone's (390 px), in the light
and the dark colour scheme, checked by axe-core (vendored, tests/e2e/browser.py runs it); any
serious or critical violation fails the test, all of them listed. Then the points axe cannot
see by itself: the skip link, the medals' text, the tags' size, the phone's header, the board's
model column staying put while the table scrolls, no sideways scrolling on a phone, and the
confirmation before "Cancel the judge".

Screenshots: /tmp/e2e_a11y_<page>_<width>_<scheme>.png.
"""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from judging.services import configure_endpoint, start_judge
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardSnapshot
from submissions.services import import_published_result
from tests.accounts.factories import PASSWORD, UserFactory
from tests.e2e.browser import (
    E2E_MARKS,
    assert_no_csp_violations,
    axe_report,
    axe_violations,
    chromium,
    playwright_api,
)
from tests.submissions import intervals_data

pytestmark = E2E_MARKS

interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry

WIDTHS = [1400, 390]
SCHEMES = ["light", "dark"]
SCREENSHOTS = Path("/tmp")

# The only violations let through, each for a reason and as narrowly as it can be said: (page,
# axe rule, the start of the element's selector). Anything else fails the test.
ALLOWED = {
    # Swagger UI (a vendored bundle) puts its copy button inside each operation's summary
    # button; its React markup is not ours to change.
    ("api-docs", "nested-interactive", "#operations-"),
}


@pytest.fixture
def site(interval_benchmark, scored_entry):
    """Sam's two published entries (one of them being judged: its page offers "Cancel the
    judge"), two more, a verified imported baseline on the Official board, rank intervals
    computed."""
    sam = UserFactory(username="sam")
    judged = scored_entry("Sam Noisy", "noisy", 1, owner=sam)
    perfect = scored_entry("Sam Perfect", "perfect", 0, owner=sam)
    scored_entry("Prose Model", "prose", 2)
    scored_entry("Noisy Two with a rather long model name", "noisy", 3)
    compute_rank_intervals(interval_benchmark)  # the boards' first snapshot (issue 33)
    import_published_result(
        interval_benchmark,
        model_name="GPT-4.1",
        values={"CVS_acc": 0.018, "NAP_acc": 0.25, "DVC_llm": 2.438},
        verified_at=datetime(2026, 4, 15, 12, tzinfo=UTC),
        is_baseline=True,
    )
    compute_rank_intervals(interval_benchmark, force=True)
    configure_endpoint(
        interval_benchmark,
        name="stand-in",
        base_url="http://127.0.0.1:9/v1",  # never called: no worker runs here
        model="standin-judge",
        api_key_env="",
    )
    job = start_judge(judged, actor=sam, enqueue=False)
    slug = interval_benchmark.slug
    # The boards' snapshots (issue 33): the first one, then the import's.
    snapshots = list(
        BoardSnapshot.objects.filter(sealed_at__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    assert len(snapshots) >= 2, snapshots
    return {
        "slug": slug,
        "judged": judged.submission_id,
        "job": job.pk,
        "public": [
            ("home", "/"),
            ("official", f"/b/{slug}/"),
            ("community", f"/b/{slug}/community/"),
            ("about", f"/b/{slug}/about/"),
            ("entry", f"/b/{slug}/entries/{perfect.submission_id}/"),
            ("compare", f"/b/{slug}/compare/?a={perfect.submission_id}&b={judged.submission_id}"),
            ("history", f"/b/{slug}/history/"),
            ("snapshot", f"/b/{slug}/history/{snapshots[-1]}/"),
            ("snapshot-diff", f"/b/{slug}/history/diff/?from={snapshots[0]}&to={snapshots[-1]}"),
            ("api-guide", "/api-guide/"),
            ("api-docs", "/api/docs/"),
            ("sign-in", "/accounts/login/"),
            ("sign-up", "/accounts/signup/"),
        ],
        "signed_in": [
            ("community-signed-in", f"/b/{slug}/community/"),
            ("submit", f"/b/{slug}/submit/"),
            ("status", f"/submissions/{judged.submission_id}/"),
            ("status-scored", f"/submissions/{perfect.submission_id}/"),
            ("my-submissions", "/submissions/"),
            ("tokens", "/account/tokens/"),
        ],
    }


@pytest.fixture
def browser(live_server, site):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


def sign_in(page, base):
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_login", "sam")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def allowed(name, rule, target) -> bool:
    return any(
        (name, rule) == (page, allowed_rule) and target.startswith(start)
        for page, allowed_rule, start in ALLOWED
    )


def check_pages(browser, page, base, pages, width, scheme) -> list[str]:
    """axe on each page; the serious and critical violations, as report lines."""
    problems = []
    for name, path in pages:
        response = page.goto(base + path)
        assert response is not None
        assert response.ok, f"{path}: HTTP {response.status}"
        if name == "api-docs":  # Swagger UI draws its operations with its own script
            page.locator(".opblock-summary").first.wait_for()
        violations = [
            {
                **violation,
                "nodes": [
                    node
                    for node in violation["nodes"]
                    if not allowed(name, violation["id"], node["target"])
                ],
            }
            for violation in axe_violations(page)
        ]
        problems += axe_report(f"{name} {path} [{width} px, {scheme}]", violations)
        assert_no_sideways_scrolling(page, width)
        page.screenshot(
            path=str(SCREENSHOTS / f"e2e_a11y_{name}_{width}_{scheme}.png"), full_page=True
        )
        assert_no_csp_violations(browser, page)
    return problems


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_axe_finds_no_serious_or_critical_violation_on_any_page(
    live_server, site, browser, width, scheme
):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        problems = check_pages(browser, page, live_server.url, site["public"], width, scheme)
        sign_in(page, live_server.url)
        problems += check_pages(browser, page, live_server.url, site["signed_in"], width, scheme)
        assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(
            problems
        )
    finally:
        context.close()


# The outermost elements that reach past the window's right edge (for the failure message).
OVERFLOWING = """
(width) => {
  const out = [];
  for (const element of document.body.querySelectorAll("*")) {
    const box = element.getBoundingClientRect();
    if (box.right > width + 0.5 && !out.some((parent) => parent.contains(element))) {
      out.push(element);
    }
  }
  return out.map((element) =>
    `${element.tagName.toLowerCase()}.${[...element.classList].join(".")} ends at ${
      Math.round(element.getBoundingClientRect().right)} px: ${element.outerHTML.slice(0, 120)}`);
}
"""


def assert_no_sideways_scrolling(page, width):
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, (scroll_width, page.evaluate(OVERFLOWING, width))


# The distinct rows (rounded tops) the header's links and buttons sit on.
HEADER_ROWS = """
() => new Set([...document.querySelectorAll(".site-header a:not(.skip-link), .site-header button")]
  .filter((element) => element.getClientRects().length)
  .map((element) => Math.round(element.getBoundingClientRect().top / 8))).size
"""


def test_on_a_phone_the_page_reads_and_works_as_axe_cannot_tell(live_server, site, browser):
    expect = playwright_api.expect
    page = browser.new_page(viewport={"width": 390, "height": 900})
    page.set_default_timeout(20_000)
    slug = site["slug"]
    try:
        sign_in(page, live_server.url)
        page.goto(f"{live_server.url}/b/{slug}/community/")
        # The keyboard's first stop skips to the content.
        page.keyboard.press("Tab")
        skip = page.locator(":focus")
        expect(skip).to_have_text("Skip to the content")
        expect(skip).to_be_in_viewport()
        skip.press("Enter")
        expect(page.locator("main")).to_be_focused()
        # The header: two rows on a phone, with all its links.
        assert page.evaluate(HEADER_ROWS) == 2
        expect(page.get_by_role("link", name="My submissions")).to_be_visible()
        expect(page.get_by_role("button", name="Sign out")).to_be_visible()
        # Medals are text with a name; tags are at least 12 px.
        first = page.locator("table.board tbody tr").first
        expect(first.get_by_role("img", name="Gold medal, 1st place")).to_have_text("1st")
        for tag in page.locator(".tag").all():
            assert float(tag.evaluate("tag => getComputedStyle(tag).fontSize")[:-2]) >= 12
        # The model column stays put while the table scrolls sideways.
        model = first.locator("th.model")
        before = model.bounding_box()["x"]
        scroller = page.locator(".table-scroll").first
        scroller.evaluate("box => { box.scrollLeft = 300; }")
        assert scroller.evaluate("box => box.scrollLeft") == 300
        assert model.bounding_box()["x"] == pytest.approx(0 + 12.8, abs=1.5)  # main's padding
        assert before > 12.8 + 50  # it started right of the rank column
        page.screenshot(path=str(SCREENSHOTS / "e2e_a11y_board_scrolled_390.png"))

        # "Cancel the judge" asks first; "No" changes nothing, "Yes" cancels.
        page.goto(f"{live_server.url}/submissions/{site['judged']}/")
        page.get_by_role("button", name="Cancel the judge…").click()
        expect(page.locator("h1")).to_have_text("Cancel the judge on Sam Noisy?")
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / "e2e_a11y_cancel_confirm_390.png"), full_page=True)
        page.get_by_role("link", name="No, keep it running").click()
        expect(page.get_by_role("button", name="Cancel the judge…")).to_be_visible()
        page.get_by_role("button", name="Cancel the judge…").click()
        page.get_by_role("button", name="Yes, cancel the judge").click()
        expect(page.locator(".messages")).to_contain_text("The judge job is cancelled")
        expect(page.get_by_text("The last judge job was cancelled.")).to_be_visible()
        assert_no_sideways_scrolling(page, 390)
        assert_no_csp_violations(browser, page)
    finally:
        page.close()
