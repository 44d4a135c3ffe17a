"""Telling a submitter when the numbers are in, in headless Chromium at 1400 and 390 px (issue
13, point 7), against the live server, a real worker and the stand-in judge on loopback: the
upload is scored, the submitter starts the judge from the status page, and it completes.

Along the way: the header's unread count (its number, and its accessible name "N unread
notification(s)") after each notice and gone once they are marked read; My submissions
listing the "Scored" and "Results complete" notices; the status page giving the global rank
and the row on the board in words, counting the judge's metrics in items, and explaining the
nearest-class fallback beside next action's parse rate; and the two emails, as the worker sent
them over SMTP to a real server on loopback (tests/mail_server.py).

Screenshots: /tmp/e2e_notices_<width>_<step>.png.
"""

import contextlib
import re
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judging.services import configure_endpoint
from judging.standin import StandinJudge
from submissions.services import import_published_result
from tests.accounts.factories import PASSWORD, UserFactory
from tests.benchmark.scoring.factories import gt_record
from tests.e2e.browser import E2E_MARKS, axe_report, axe_violations, chromium, playwright_api
from tests.e2e.test_accessibility import assert_no_sideways_scrolling
from tests.judging.conftest import CAPTION_PREDICTIONS, caption_ground_truth
from tests.mail_server import MailServer
from tests.submissions.conftest import start_cluster, stop_cluster

pytestmark = E2E_MARKS

SCORING_TIMEOUT_MS = 120_000
MAIL_TIMEOUT_SECONDS = 30
MODEL = "Notices Model"
SCREENSHOTS = Path("/tmp")

# Next action on AVOS (classes cutting, tying, suturing): one answer is a class name, two are
# sentences, which do not parse and are scored as their nearest class (spec 3.4).
NEXT_ACTION = [
    ("tying", "tying"),
    ("cutting", "The surgeon will cut the thread next."),
    ("suturing", "Then the wound is sutured closed."),
]


@pytest.fixture
def records():
    """The judge tests' caption tasks (temporal grounding, three dense captions, two summaries,
    two region captions) and the three next-action questions."""
    return [
        *caption_ground_truth(),
        *(gt_record("next_action", label, dataset="AVOS") for label, _ in NEXT_ACTION),
    ]


@pytest.fixture
def standin():
    with StandinJudge() as judge:
        yield judge


@pytest.fixture
def benchmark(medvidbench, standin):
    """MedVidBench, public, judged by the stand-in, the judge started by the submitter (so the
    "Scored" notice is sent: a benchmark that starts it by itself reports completion only), and
    a verified baseline on the Official board better than any upload in every metric."""
    medvidbench.is_public = True
    medvidbench.judge_auto_start = False
    medvidbench.save(update_fields=["is_public", "judge_auto_start"])
    configure_endpoint(
        medvidbench,
        name="stand-in",
        base_url=standin.base_url,
        model="standin-judge",
        api_key_env="",
        concurrency=4,
        max_attempts=5,
        timeout_seconds=5.0,
    )
    best = dict.fromkeys(medvidbench.metrics.values_list("key", flat=True), 1.0)
    best |= {"DVC_llm": 5.0, "VS_llm": 5.0, "RC_llm": 5.0}  # the judge's 1-5 scale
    import_published_result(
        medvidbench,
        model_name="Baseline Ceiling",
        values=best,
        verified_at=datetime(2026, 4, 15, 12, tzinfo=UTC),
        is_baseline=True,
    )
    return medvidbench


@pytest.fixture
def mail():
    with MailServer() as server:
        yield server


@pytest.fixture
def cluster(private_dir, benchmark, mail):
    """The worker, its SMTP mailer pointed at `mail` (the e2e default sends nowhere)."""
    process = start_cluster(EMAIL_HOST="127.0.0.1", EMAIL_PORT=str(mail.port))
    try:
        yield process
    finally:
        stop_cluster(process)


@pytest.fixture
def person():
    return UserFactory(username="notices_e2e", email="notices@example.org")


@pytest.fixture
def predictions(predictions_for, tmp_path):
    path = tmp_path / "predictions.json"
    path.write_bytes(predictions_for([*CAPTION_PREDICTIONS, *(a for _, a in NEXT_ACTION)]))
    return path


@pytest.fixture
def browser(live_server, cluster, person, predictions):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


def reload_until_count(page, text: str | None, timeout: float = 30.0) -> None:
    """Reload until the header's unread count reads `text` (None: no count shown). The notice
    is written by the worker just after the state it reports, and the header is not part of
    the status page's live region, so a reload is what shows it."""
    count = page.locator(".site-header .unread-count")
    deadline = time.monotonic() + timeout
    while True:
        shown = count.evaluate("badge => badge.firstChild.textContent") if count.count() else None
        if shown == text:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the header's unread count reads {shown!r}, not {text!r}")
        time.sleep(0.5)
        page.reload()


def assert_account_links_fit(page) -> None:
    """The header's account links, the count among them, all in sight: on a phone they sit in
    one row that scrolls sideways when they do not fit, hiding "Sign out" behind the edge."""
    needed, shown = page.locator(".site-header .account").evaluate(
        "nav => [nav.scrollWidth, nav.clientWidth]"
    )
    assert needed <= shown, f"the account links need {needed} px, have {shown} px"


def assert_axe_clean(page, where: str) -> None:
    problems = axe_report(where, axe_violations(page))
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def metric_cells(page, key: str):
    row = page.locator("table.result tr", has=page.locator("code", has_text=re.compile(f"^{key}$")))
    return row.locator("td")


@pytest.mark.parametrize("width", [1400, 390])
def test_the_notices_of_a_scored_and_judged_upload_are_counted_listed_mailed_and_read(
    live_server, cluster, mail, browser, benchmark, person, predictions, width
):
    expect = playwright_api.expect
    base = live_server.url
    shot = str(SCREENSHOTS / f"e2e_notices_{width}_{{}}.png")
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(30_000)
    mine = page.get_by_role("link", name=re.compile(r"^My submissions"))
    try:
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_login", "notices_e2e")
        page.fill("#id_password", PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(re.compile(r"^(?!.*/accounts/login/).*$"))
        expect(mine).to_have_accessible_name("My submissions")  # nothing unread yet

        page.goto(f"{base}/b/{benchmark.slug}/submit/")
        page.fill("#id_model_name", MODEL)
        page.fill("#id_institution", "Notices Lab")
        page.fill("#id_contact_email", "contact@example.org")
        page.fill("#id_model_url", "https://example.org/notices-model")
        page.set_input_files("#id_predictions", str(predictions))
        page.get_by_role("button", name="Check and submit").click()
        page.wait_for_url(re.compile(r"/submissions/\d+/$"))
        status_url = page.url
        status_path = status_url.removeprefix(base)
        expect(page.locator("#live #status .state")).to_have_class(
            "state state-scored", timeout=SCORING_TIMEOUT_MS
        )

        # Scored: one notice, counted in the header.
        reload_until_count(page, "1")
        expect(mine).to_have_accessible_name("My submissions 1 unread notification")
        expect(page.locator(".unread-count")).to_be_visible()
        assert_account_links_fit(page)
        page.locator(".site-header").screenshot(path=(shot.format("header_1")))

        # The rank in words: the global rank (behind the Official board's baseline), then the
        # row on its own board, of which it is the only one.
        rank = page.locator("#status .rank-note")
        expect(rank).to_contain_text(
            re.compile(
                r"^Rank 2 of all published entries( \(95% interval [^)]*\))?: the ranks "
                r"compare both boards together\. It is row 1 of 1 on the Community board "
                r"\(mean rank \d\.\d\d\)\.$"
            )
        )
        expect(rank.get_by_role("link", name="Community board")).to_have_attribute(
            "href", f"/b/{benchmark.slug}/community/"
        )
        expect(metric_cells(page, "DVC_llm").first).to_have_text("pending")
        # Next action: 1 of the 3 answers parsed, all 3 scored, and why.
        formats = page.locator("table.formats tr", has=page.locator("th", has_text="next_action"))
        expect(formats.locator("td")).to_have_text(["1", "3", "33.3%"])
        expect(metric_cells(page, "NAP_acc").nth(2)).to_have_text("3 / 3 samples")
        expect(page.locator(".format-note", has_text="next_action")).to_have_text(
            "next_action: Parsed means the answer is exactly one of the question's class "
            "names. Any other answer is matched to the nearest class by meaning (the official "
            "MiniLM rule) and scored as that class, so unparsed answers still count towards "
            "NAP_acc."
        )
        unparsed = page.locator("details.unparsed", has_text="next_action")
        unparsed.locator("summary").click()
        expect(unparsed.locator("li")).to_have_count(2)
        expect(unparsed.locator("q")).to_have_text([a for _, a in NEXT_ACTION[1:]])
        assert_axe_clean(page, f"status, scored [{width} px]")
        assert_no_sideways_scrolling(page, width)
        page.screenshot(path=(shot.format("status_scored")), full_page=True)

        # Step 2: the judge, started from the page, completes the run.
        page.get_by_role("button", name="Start the judge").click()
        expect(page.locator("#live #status .state")).to_have_class(
            "state state-complete", timeout=SCORING_TIMEOUT_MS
        )
        # The judge's metrics count items: a dense caption gives one per matched event pair
        # and IoU threshold (0.3, 0.5, 0.7): 2 pairs x 3 + 1 pair x 2 (IoU 20/30) + none for
        # the empty answer = 8 for 3 samples; one summary answered, two region captions.
        expect(metric_cells(page, "DVC_llm").nth(2)).to_have_text("8 / 8 items")
        expect(metric_cells(page, "VS_llm").nth(2)).to_have_text("1 / 1 items")
        expect(metric_cells(page, "RC_llm").nth(2)).to_have_text("2 / 2 items")
        # DVC_F1 beside it counts samples: the empty answer is skipped, 2 of the 3.
        expect(metric_cells(page, "DVC_F1").nth(2)).to_have_text("2 / 3 samples")
        expect(metric_cells(page, "DVC_llm").first).to_have_text(re.compile(r"^\d\.\d+$"))

        # Complete: a second notice.
        reload_until_count(page, "2")
        expect(mine).to_have_accessible_name("My submissions 2 unread notifications")
        page.locator(".site-header").screenshot(path=(shot.format("header_2")))
        expect(rank).to_contain_text(re.compile(r"^Rank 2 of all published entries"))
        assert_axe_clean(page, f"status, complete [{width} px]")
        assert_no_sideways_scrolling(page, width)
        page.screenshot(path=(shot.format("status_complete")), full_page=True)

        # My submissions lists both notices, newest first, each linking to the entry.
        mine.click()
        notices = page.locator(".notification-list li")
        expect(notices).to_have_count(2)
        expect(notices.nth(0)).to_have_class("notification notification-complete")
        expect(notices.nth(0)).to_contain_text(
            f"Results complete: All metrics of {MODEL} on MedVidBench are in. It ranks 2 "
        )
        expect(notices.nth(1)).to_have_class("notification notification-scored")
        expect(notices.nth(1)).to_contain_text(f"Scored: {MODEL} on MedVidBench is scored")
        for notice in (notices.nth(0), notices.nth(1)):
            expect(notice.get_by_role("link")).to_have_attribute("href", status_path)
        assert_axe_clean(page, f"my submissions, 2 unread [{width} px]")
        assert_no_sideways_scrolling(page, width)
        page.screenshot(path=(shot.format("mine_unread")), full_page=True)

        # Marked read: the count and the list are gone, and stay gone.
        page.get_by_role("button", name="Mark all read").click()
        page.wait_for_url(f"{base}/submissions/")
        expect(page.locator(".unread-count")).to_have_count(0)
        expect(mine).to_have_accessible_name("My submissions")
        page.reload()
        expect(page.locator(".unread-count")).to_have_count(0)
        expect(page.locator(".notification-list")).to_have_count(0)
        page.goto(status_url)
        expect(page.locator(".unread-count")).to_have_count(0)
        page.goto(f"{base}/submissions/")
        page.screenshot(path=(shot.format("mine_read")), full_page=True)

        # The two emails, as the worker sent them, in the order of the notices.
        scored, complete = mail.wait_for(2, MAIL_TIMEOUT_SECONDS)
        assert [(m["To"], m["Subject"]) for m in (scored, complete)] == [
            ("notices@example.org", f"Scored: {MODEL} on MedVidBench"),
            ("notices@example.org", f"Results complete: {MODEL} on MedVidBench"),
        ]
        scored_body = scored.get_body().get_content()
        complete_body = complete.get_body().get_content()
        assert "Start the judge on your submission's page" in scored_body
        assert f"All metrics of {MODEL} on MedVidBench are in. It ranked 2 " in complete_body
        for body in (scored_body, complete_body):
            assert f"http://127.0.0.1:8000{status_path}" in body
        assert len(mail.messages) == 2  # nothing else was sent
    finally:
        with contextlib.suppress(playwright_api.Error):
            page.screenshot(path=(shot.format("last")), full_page=True)
        page.close()
