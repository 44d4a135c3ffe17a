"""A board's history and a board as a snapshot held it, in headless Chromium (issue 33): the
history lists every snapshot; a snapshot's page is the board as it was, under its banner, sorted
and searched in place; `?as_of=` on the live board lands there; "Cite this board" gives the
snapshot's BibTeX. At 1,400 and 390 px, light and dark; axe-core and the CSP watch every page.
Screenshots: /tmp/e2e_snapshot_<page>_<width>_<scheme>.png."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from submissions import services
from submissions.enums import VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardSnapshot
from tests.accounts.factories import maintainer_user
from tests.e2e.browser import E2E_MARKS, axe_report, axe_violations, chromium, playwright_api
from tests.submissions.pages import METRIC_KEYS

pytestmark = E2E_MARKS

SCREENSHOTS = Path("/tmp")
SIZES = {1400: 900, 390: 844}


@pytest.fixture
def snapshots(benchmark):
    """Three imports, then the first withdrawn: four snapshots, the oldest with one row."""
    entries = []
    for number, name in enumerate(["GPT-4o", "Claude-3.5-Sonnet", "Qwen2.5-VL-72B"]):
        value = 0.4 + number / 10
        entries.append(
            services.import_published_result(
                benchmark,
                model_name=name,
                values={key: value * (10 if key.endswith("_llm") else 1) for key in METRIC_KEYS},
                verified_at=datetime(2026, 4, 15, tzinfo=UTC),
            )
        )
        compute_rank_intervals(benchmark)
    services.set_verification_status(
        entries[0], VerificationStatus.WITHDRAWN, actor=maintainer_user(), reason="re-checked"
    )
    compute_rank_intervals(benchmark)
    return list(BoardSnapshot.objects.order_by("pk"))


@pytest.fixture
def browser(live_server, snapshots):
    with chromium() as browser:
        yield browser


def fits(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390])
def test_the_history_and_a_snapshot_of_the_board(live_server, browser, snapshots, width, scheme):
    expect = playwright_api.expect
    context = browser.new_context(
        viewport={"width": width, "height": SIZES[width]}, color_scheme=scheme
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    oldest, newest = snapshots[0], snapshots[-1]
    try:
        page.goto(f"{live_server.url}/b/medvidbench/history/")
        rows = page.locator("#history tbody tr")
        expect(rows).to_have_count(len(snapshots))
        expect(rows.first).to_contain_text(f"#{newest.pk}")
        expect(rows.first).to_contain_text("An entry left the Official board")
        page.screenshot(
            path=str(SCREENSHOTS / f"e2e_snapshot_history_{width}_{scheme}.png"), full_page=True
        )
        fits(page, width)
        assert axe_report(f"history [{width} {scheme}]", axe_violations(page)) == []

        page.get_by_role("link", name=f"#{oldest.pk}", exact=True).click()
        expect(page).to_have_url(f"{live_server.url}/b/medvidbench/history/{oldest.pk}/")
        banner = page.locator("#snapshot-banner")
        expect(banner).to_contain_text(f"the boards as snapshot {oldest.pk} holds them")
        expect(banner).to_contain_text(oldest.sha256)
        expect(page.locator("table.board tbody tr")).to_have_count(1)
        expect(page.locator("#cite-board-text")).to_contain_text(
            f"@misc{{podium-medvidbench-snapshot-{oldest.pk},"
        )
        page.screenshot(path=str(SCREENSHOTS / f"e2e_snapshot_board_{width}_{scheme}.png"))
        fits(page, width)
        assert axe_report(f"snapshot [{width} {scheme}]", axe_violations(page)) == []

        # The newest snapshot sorted by model, in place: its Official board as it was.
        page.goto(f"{live_server.url}/b/medvidbench/history/{newest.pk}/?sort=model")
        names = page.locator("table.board tbody th.model > a:first-child").all_inner_texts()
        assert names == [
            "Claude-3.5-Sonnet",
            "Qwen2.5-VL-72B",
        ]
        # The header's Community tab stays in the snapshot.
        page.get_by_role("navigation", name="MedVidBench").get_by_role(
            "link", name="Community"
        ).click()
        expect(page).to_have_url(f"{live_server.url}/b/medvidbench/history/{newest.pk}/community/")
        expect(page.locator("table.board tbody tr")).to_contain_text("GPT-4o")

        # The live board as of the first snapshot's day: the newest snapshot of that day.
        day = oldest.taken_at.date().isoformat()
        page.goto(f"{live_server.url}/b/medvidbench/?as_of={day}")
        expect(page).to_have_url(f"{live_server.url}/b/medvidbench/history/{newest.pk}/")
        page.goto(f"{live_server.url}/b/medvidbench/?as_of=2020-01-01")
        expect(page.locator("#as-of-missing")).to_contain_text(f"the first was taken on {day}")
    finally:
        context.close()
