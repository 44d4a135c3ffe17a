"""The demo's whole verify path in headless Chromium, as `make run` sets it up: `load_demo`
(the demo files, small here, with their frames), the stand-in model (`manage.py standin_model`,
its own process, on loopback) registered for the demo entries, a real worker (`manage.py
qcluster`) and the live server.

A submitter signs up and uploads the demo's `predictions_new.json` under a new name. A
maintainer nominates it, records the contact and the access in the admin, clicks "Verify" too
early and follows the refusal's link to register the model's endpoint (the form has the entry
picked, by name), points it at the stand-in's `standin-new`, starts the re-run, waits on the
job's page for the worker to finish it, reads the discrepancy report (within the tolerance),
clicks "Verify this entry", and finds the entry on the Official board with the same global rank
in the HTML page and in the API.
"""

import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from accounts.roles import ensure_maintainers_group
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import small_ground_truth
from tests.e2e.browser import E2E_MARKS, chromium, playwright_api, run_action
from tests.submissions.test_demo import demo_dir  # noqa: F401  (a fixture)
from tests.verifying.conftest import with_frames

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_COPY = Path("/tmp/e2e_demo_path.png")
REPORT_COPY = Path("/tmp/e2e_demo_report.png")
PASSWORD = "a-long-maintainer-password-1"
MODEL_NAME = "E2E Demo Model"
WORKER_TIMEOUT_S = 120

pytestmark = E2E_MARKS


@pytest.fixture
def records():
    """The small test set, each record with its own clip's frame paths (as the demo's have)."""
    return with_frames(small_ground_truth())


@pytest.fixture
def standin_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def demo(demo_dir, benchmark, standin_port, settings):  # noqa: F811
    """`load_demo` as `make run` calls it, and a maintainer (staff, in the Maintainers group)."""
    call_command(
        "load_demo",
        demo_dir=demo_dir,
        standin_model_url=f"http://127.0.0.1:{standin_port}/v1",
        verbosity=0,
    )
    maintainer = UserFactory(username="maria", is_staff=True)
    maintainer.set_password(PASSWORD)
    maintainer.save()
    maintainer.groups.add(ensure_maintainers_group())
    return demo_dir


@pytest.fixture
def standin_model(demo, standin_port, settings):
    """`manage.py standin_model` in its own process, as scripts/run.sh starts it."""
    process = subprocess.Popen(
        [
            *(sys.executable, "manage.py", "standin_model", "--port", str(standin_port)),
            *(
                "--demo-dir",
                str(demo),
                "--frames-dir",
                str(Path(settings.PODIUM_PRIVATE_DIR) / "frames"),
            ),
            *("--max-frames", "8"),
        ],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert "listening on" in process.stdout.readline()
        yield f"http://127.0.0.1:{standin_port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture
def browser(live_server, cluster, demo, standin_model):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


def upload(page, live_server, benchmark, predictions):
    page.goto(f"{live_server.url}/accounts/signup/")
    page.fill("#id_username", "submitter")
    page.fill("#id_email", "submitter@example.org")
    page.fill("#id_password1", "a-long-e2e-password-1")
    page.fill("#id_password2", "a-long-e2e-password-1")
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(re.compile(r"^(?!.*/accounts/signup/).*$"))
    page.goto(f"{live_server.url}/b/{benchmark.slug}/submit/")
    page.fill("#id_model_name", MODEL_NAME)
    page.fill("#id_institution", "Podium E2E Lab")
    page.fill("#id_contact_email", "submitter@example.org")
    page.fill("#id_model_url", "https://example.org/e2e-demo-model")
    page.set_input_files("#id_predictions", str(predictions))
    page.get_by_role("button", name="Check and submit").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    playwright_api.expect(page.locator("#status .state")).to_have_class(
        re.compile(r"state-(scored|judging|complete)"), timeout=WORKER_TIMEOUT_S * 1000
    )


def test_a_new_maintainer_walks_the_demo_from_upload_to_the_official_board(
    live_server, cluster, demo, standin_model, browser, benchmark, tmp_path
):
    expect = playwright_api.expect
    admin = f"{live_server.url}/admin"
    changelist = f"{admin}/submissions/submission/"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(30_000)
    try:
        upload(page, live_server, benchmark, demo / "predictions_new.json")
        page.context.clear_cookies()

        page.goto(f"{admin}/login/?next=/admin/")
        page.fill("#id_username", "maria")
        page.fill("#id_password", PASSWORD)
        page.locator("input[type=submit]").click()
        expect(page.locator("#site-name")).to_be_visible()
        for label in (
            "Nominate for the Official board",
            "Record that the authors were contacted",
            "Record that model access was granted",
        ):
            run_action(page, changelist, MODEL_NAME, label)
            expect(page.locator("ul.messagelist .success")).to_contain_text(MODEL_NAME)

        # "Verify" before the re-run: refused, with the missing step as a link.
        run_action(page, changelist, MODEL_NAME, "Verify (put on the Official board)")
        error = page.locator("ul.messagelist .error")
        expect(error).to_contain_text("Next step: register the model's endpoint.")
        error.get_by_role("link", name="register the model's endpoint").click()

        # The endpoint form, with the entry picked by its name.
        expect(page.locator("#id_submission option:checked")).to_have_text(
            f"{MODEL_NAME} — Podium E2E Lab · MedVidBench · Model access granted"
        )
        page.fill("#id_base_url", standin_model)
        page.fill("#id_model", "standin-new")
        page.locator("input[name=_save]").click()
        expect(page.locator("ul.messagelist .success")).to_be_visible()

        # Start the re-run from the entry's endpoint; the message links to the job's page.
        run_action(
            page,
            f"{admin}/verifying/modelendpoint/",
            f"{MODEL_NAME} ({benchmark.slug})",
            "Start a re-run with this endpoint",
        )
        queued = page.locator("ul.messagelist .success")
        expect(queued).to_contain_text("queued: 5 questions")
        queued.locator("a").click()

        # The worker runs it; the job's page shows the report once it is done.
        deadline = time.monotonic() + WORKER_TIMEOUT_S
        while not page.get_by_text("Discrepancy report").count():
            assert time.monotonic() < deadline, "the worker did not finish the re-run"
            time.sleep(1)
            page.reload()
        expect(page.locator("fieldset.module", has_text="Discrepancy report")).to_contain_text(
            "Every compared metric is within the tolerance."
        )
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        shutil.copyfile(tmp_path / "report.png", REPORT_COPY)
        page.get_by_role("button", name="Verify this entry").click()
        expect(page.locator("ul.messagelist .success")).to_contain_text(
            "is verified: it is on the Official board."
        )

        # On the Official board, with the same global rank in the page and in the API.
        page.goto(f"{live_server.url}/b/{benchmark.slug}/")
        row = page.locator(
            "table.board tbody tr", has=page.locator("th.model", has_text=MODEL_NAME)
        )
        expect(row).to_have_count(1)
        html_rank = int(row.locator(".rank-number").inner_text())
        response = page.request.get(
            f"{live_server.url}/api/v1/benchmarks/{benchmark.slug}/rankings/?board=official"
        )
        assert response.ok
        rows = [
            item for item in json.loads(response.body())["results"] if item["model"] == MODEL_NAME
        ]
        assert [(item["board"], item["verified"], item["rank"]) for item in rows] == [
            ("official", True, html_rank)
        ]
        page.screenshot(path=str(tmp_path / "board.png"), full_page=True)
    finally:
        screenshot = tmp_path / "last.png"
        with contextlib.suppress(playwright_api.Error):
            page.screenshot(path=str(screenshot), full_page=True)
            shutil.copyfile(screenshot, SCREENSHOT_COPY)
        page.close()
