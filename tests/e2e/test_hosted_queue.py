"""Hosted evaluation through the pages in headless Chromium (issue 15, points 2 and 5), against
the live server, a real worker and the stand-in model on loopback: a signed-in submitter finds
"Submit a model endpoint" on the Submit page of the demo clinical QA benchmark, gives the
stand-in's address, model and a key; the request's page says it is queued; the public queue
shows it pending at position 1 in both categories; once a worker starts it (`manage.py
qcluster`), the queue (htmx polling) shows the multiple-choice category running n/40, then both
finished and a link to the entry, whose page says "evaluated by Podium".

Every page is checked with axe-core and watched for Content-Security-Policy violations;
screenshots land in /tmp/e2e_hosted_<step>.png.
"""

import re

import pytest

from benchmark.plugins import registered
from benchmark.selectors import active_testset, load_scoring_testset
from benchmark.services import ensure_plugin_benchmark, import_testset
from plugins.clinicalqa.plugin import plugin as clinicalqa
from tests.accounts.factories import UserFactory
from tests.e2e.browser import E2E_MARKS, axe_report, axe_violations, chromium, playwright_api
from tests.hosting.conftest import RulesPlugin
from tests.submissions.conftest import start_cluster, stop_cluster
from verifying.demo import answer_tables
from verifying.standin import StandinModel

PASSWORD = "a-long-e2e-password-hosted"
MODEL_NAME = "E2E Hosted Model"
# Slow enough for the queue to be seen running: 5 calls a second (the request copies it; the
# worker, another process, runs at the request's pace), 0.2 s an answer.
RULES = {"hosted_requests_per_minute": 300}
WORKER_TIMEOUT_MS = 120_000

pytestmark = E2E_MARKS


@pytest.fixture
def benchmark(private_dir, tmp_path):
    files = clinicalqa.write_demo(tmp_path / "clinicalqa")
    with registered(RulesPlugin(**RULES)):
        benchmark = ensure_plugin_benchmark("clinicalqa")
        import_testset(benchmark, files.test_set)
        test_set = load_scoring_testset(active_testset(benchmark))
        good = next(entry for entry in files.hosted if entry.model_name == "demo-good")
        tables = answer_tables(
            clinicalqa, test_set, {"good-7b": good.predictions.read_bytes()}, private_dir, 1
        )
        yield benchmark, tables


@pytest.fixture
def standin(benchmark):
    with StandinModel(models=benchmark[1], latency=0.2) as model:
        yield model


@pytest.fixture
def person():
    return UserFactory(username="hosted_e2e", password=PASSWORD)


@pytest.fixture
def browser(live_server, benchmark, standin, person):
    """After every fixture that touches the database (see test_submit_flow.py)."""
    with chromium() as browser:
        yield browser


def check_page(page, where: str, shots: list[str]) -> None:
    violations = axe_violations(page)
    assert not violations, "\n".join(axe_report(where, violations))
    path = f"/tmp/e2e_hosted_{where}.png"
    page.screenshot(path=path, full_page=True)
    shots.append(path)


def test_a_model_endpoint_goes_through_the_public_queue_into_an_entry(
    live_server, benchmark, standin, person, browser
):
    expect = playwright_api.expect
    base, slug = live_server.url, benchmark[0].slug
    shots: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    cluster = None
    try:
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_login", "hosted_e2e")
        page.fill("#id_password", PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(re.compile(r"^(?!.*/accounts/login/).*$"))

        # The Submit page offers the endpoint form.
        page.goto(f"{base}/b/{slug}/submit/")
        page.get_by_role("link", name="Submit a model endpoint").click()
        expect(page.locator("h1")).to_contain_text("Submit a model endpoint")
        expect(page.locator("#id_api_key")).to_have_attribute("type", "password")
        check_page(page, "form", shots)
        page.fill("#id_model_name", MODEL_NAME)
        page.fill("#id_institution", "Hosted E2E Lab")
        page.fill("#id_contact_email", "hosted@example.org")
        page.fill("#id_model_url", "https://example.org/hosted-e2e")
        page.select_option("#id_type", "fine-tuned")
        page.fill("#id_parameters", "13")
        page.fill("#id_licence", "mit")
        page.select_option("#id_precision", "float16")
        page.select_option("#id_domain_specific", "yes")
        page.fill("#id_base_url", standin.base_url)
        page.fill("#id_model", "good-7b")
        page.fill("#id_api_key", "sk-e2e-not-shown")
        page.get_by_role("button", name="Check and queue").click()

        # Its own page: queued, first in line; the key is never shown.
        page.wait_for_url(re.compile(r"/hosted/\d+/$"))
        expect(page.locator("#request-live h2")).to_contain_text("Status: Queued")
        expect(page.locator("#request-live h2")).to_contain_text("position 1 in the queue")
        assert "sk-e2e-not-shown" not in page.content()
        check_page(page, "request_queued", shots)

        # The public queue: pending in both categories, position 1, no address.
        page.goto(f"{base}/b/{slug}/queue/")
        row = page.locator("tr.queue-row", has=page.locator("th.model", has_text=MODEL_NAME))
        expect(row.locator("td.position")).to_have_text("1")
        expect(row.locator("td.queue-state")).to_have_text(["pending", "pending"])
        assert standin.base_url not in page.content()
        check_page(page, "queued", shots)

        # A worker takes it: the queue follows by itself.
        cluster = start_cluster()
        expect(row.locator("td.queue-state").first).to_have_text(
            re.compile(r"^running [1-9]\d*/40$"), timeout=WORKER_TIMEOUT_MS
        )
        check_page(page, "running", shots)
        expect(row.locator("td.queue-state")).to_have_text(
            ["finished", "finished"], timeout=WORKER_TIMEOUT_MS
        )
        entry_link = row.get_by_role("link", name="entry")
        expect(entry_link).to_be_visible(timeout=WORKER_TIMEOUT_MS)
        expect(page.locator("#queue")).not_to_have_attribute("hx-get", re.compile(".+"))
        check_page(page, "finished", shots)

        entry_link.click()
        expect(page.locator("h1")).to_contain_text(MODEL_NAME)
        expect(page.locator(".entry-tags .tag.hosted")).to_have_text("evaluated by Podium")
        check_page(page, "entry", shots)
        assert len(standin.received) == 56
    finally:
        if cluster is not None:
            stop_cluster(cluster)
        page.close()
