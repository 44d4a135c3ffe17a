"""MedSG-Bench through the pages in headless Chromium, at 1400 and 390 px (issue 14, part 2),
against the live server and a real worker: a signed-in submitter uploads a box file on the
0-1000 scale, choosing the box convention and ticking the zero-shot declaration; the status
page follows the run to Complete (no judge step); the entry is on the Community board in its
place among the paper's baselines; its page opens; the board's CSV holds its row with the IoU
the pure scorer gives the same file. Before that, the form refuses a file without a box
convention (a field error) and a file with a bad row (the row named at the top of the page).

Every page is checked with axe-core (no serious or critical violation) and watched for
Content-Security-Policy violations; screenshots land in /tmp/e2e_medsg_<width>_<page>.png.
"""

import contextlib
import csv
import io
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmark.services import ensure_benchmark, import_testset
from plugins.medsg import demo
from plugins.medsg.definition import MEDSG
from plugins.medsg.plugin import plugin as medsg_plugin
from plugins.medsg.scoring import load_predictions, load_testset, score
from submissions.services import import_published_result
from tests.accounts.factories import UserFactory
from tests.e2e.browser import E2E_MARKS, axe_report, axe_violations, chromium, playwright_api

SCORING_TIMEOUT_MS = 120_000
PASSWORD = "a-long-e2e-password-medsg"
MODEL_NAME = "E2E Grounder (0-1000)"

pytestmark = E2E_MARKS


@pytest.fixture
def demo_files(tmp_path):
    """The plugin's synthetic test set (80 items, 10 per task) and its example files."""
    return demo.write_demo(tmp_path / "medsg")


@pytest.fixture
def benchmark(private_dir, demo_files):
    """MedSG-Bench as defined, public, with the synthetic test set active and the paper's 22
    baselines imported (so the entry's rank is a place among them). Overrides the e2e
    conftest's MedVidBench, so `cluster` runs the worker for this benchmark's database."""
    benchmark = ensure_benchmark(MEDSG)
    import_testset(benchmark, demo_files["testset"])
    for row in medsg_plugin.published_rows():
        import_published_result(
            benchmark,
            model_name=row.model_name,
            values=dict(row.values),
            verified_at=datetime(2025, 5, 1, 12, tzinfo=UTC),
            is_baseline=True,
        )
    return benchmark


@pytest.fixture
def person():
    return UserFactory(username="medsg_e2e", password=PASSWORD)


@pytest.fixture
def browser(live_server, cluster, benchmark, person):
    """After every fixture that touches the database (see test_submit_flow.py)."""
    with chromium() as browser:
        yield browser


def expected_scores(demo_files) -> dict:
    """The pure scorer's report on the file the browser uploads (what `manage.py score
    --benchmark medsg-bench --box-format norm1000 --format json` prints)."""
    test_set = load_testset(demo_files["testset"])
    predictions = load_predictions(demo_files["norm1000"], test_set)
    return score(test_set, predictions, "norm1000").as_json()


def fill_details(page, predictions: Path) -> None:
    page.fill("#id_model_name", MODEL_NAME)
    page.fill("#id_institution", "MedSG E2E Lab")
    page.fill("#id_contact_email", "medsg@example.org")
    page.fill("#id_model_url", "https://example.org/e2e-grounder")
    page.set_input_files("#id_predictions", str(predictions))


def check_page(page, where: str, width: int, shots: list[str]) -> None:
    """axe-core on the page as it is, and its screenshot for a look."""
    violations = axe_violations(page)
    assert not violations, "\n".join(axe_report(where, violations))
    path = f"/tmp/e2e_medsg_{width}_{where}.png"
    page.screenshot(path=path, full_page=True)
    shots.append(path)


@pytest.mark.parametrize("width", [1400, 390])
def test_upload_a_box_file_see_it_scored_ranked_and_exported(
    live_server, cluster, browser, benchmark, demo_files, tmp_path, width
):
    expect = playwright_api.expect
    base, slug = live_server.url, benchmark.slug
    expected = expected_scores(demo_files)
    iou = expected["metrics"]["IoU"]
    # Hand-checked place: of the baselines only MedSeq-Grounder-7B (72.55) is above this
    # file's mean IoU (about 0.700), so the entry ranks 2nd over both boards together.
    above = [row for row in medsg_plugin.published_rows() if row.values["IoU"] > iou]
    assert [row.model_name for row in above] == ["MedSeq-Grounder-7B"]

    # A file whose row 3 names the wrong task (the test set's third item is Registered_Diff).
    rows = json.loads(demo_files["norm1000"].read_text(encoding="utf-8"))
    rows[2]["task"] = "patch"
    bad_file = tmp_path / "bad_row.json"
    bad_file.write_text(json.dumps(rows), encoding="utf-8")

    shots: list[str] = []
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(30_000)
    try:
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_login", "medsg_e2e")
        page.fill("#id_password", PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(re.compile(r"^(?!.*/accounts/login/).*$"))

        # The form asks for the box convention ("Choose…" first) before the file, and for
        # the declaration after it.
        page.goto(f"{base}/b/{slug}/submit/")
        box = page.get_by_label("Box convention")
        expect(box.locator("option").first).to_have_text("Choose…")
        expect(box).to_have_value("")
        expect(page.locator("#id_predictions_helptext")).to_have_text(
            "JSON: one {index, task, prediction} object per test item, in test-set order."
        )
        order = page.locator(".submission-form .field").evaluate_all(
            "fields => fields.map(field => field.querySelector('input, select').name)"
        )
        assert order.index("box_format") < order.index("predictions") < order.index("zero_shot")
        check_page(page, "submit", width, shots)

        # No box convention: the field says so and the file is not taken.
        fill_details(page, demo_files["norm1000"])
        page.get_by_label("I declare these predictions were made zero-shot").check()
        page.get_by_role("button", name="Check and submit").click()
        expect(page.locator("#id_box_format_error")).to_have_text("This field is required.")
        expect(page).to_have_url(re.compile(r"/b/medsg-bench/submit/$"))
        check_page(page, "refused_no_box", width, shots)

        # A bad row: named at the top of the page, with its field and what was expected.
        fill_details(page, bad_file)
        page.get_by_label("Box convention").select_option("norm1000")
        page.get_by_label("I declare these predictions were made zero-shot").check()
        page.get_by_role("button", name="Check and submit").click()
        summary = page.locator("#form-summary .summary-problems")
        expect(summary).to_contain_text("row 3")
        expect(summary).to_contain_text("'task'")
        expect(summary).to_contain_text("Registered_Diff")
        check_page(page, "refused_bad_row", width, shots)

        # The good file, norm1000, declared zero-shot.
        fill_details(page, demo_files["norm1000"])
        page.get_by_label("Box convention").select_option("norm1000")
        page.get_by_label("I declare these predictions were made zero-shot").check()
        page.get_by_role("button", name="Check and submit").click()
        page.wait_for_url(re.compile(r"/submissions/\d+/$"))
        status_url = page.url
        expect(page.locator("#live #status .state")).to_have_class(
            re.compile(r"state-complete"), timeout=SCORING_TIMEOUT_MS
        )
        # No judge step for a box benchmark: the steps go straight from Scoring to Complete.
        expect(page.locator("#status .steps .step")).to_have_text(
            ["Received", "Queued", "Scoring", "Complete"]
        )
        iou_row = page.locator(
            "table.result tr", has=page.locator("code", has_text=re.compile("^IoU$"))
        )
        expect(iou_row.locator("td").first).to_have_text(f"{iou:.3f}")
        expect(iou_row.locator("td").last).to_have_text("80 / 80 items")
        expect(page.get_by_role("heading", name="Per task")).to_be_visible()
        expect(page.locator(".facts")).to_contain_text("Box convention")
        expect(page.locator(".facts")).to_contain_text(
            "norm1000: [x1, y1, x2, y2] on a 0-1000 scale"
        )
        expect(page.locator(".facts")).to_contain_text("declared: I declare these predictions")
        expect(page.locator("#live .rank-note")).to_contain_text("Rank 2 of all published entries")
        check_page(page, "status", width, shots)

        # On the Community board, first of its rows and 2nd over both boards.
        page.goto(f"{base}/b/{slug}/community/")
        row = page.locator(
            "table.board tbody tr", has=page.locator("th.model", has_text=MODEL_NAME)
        )
        expect(row).to_have_count(1)
        expect(row.locator(".rank-number")).to_have_text("2")
        expect(page.locator("p.legend:not(.tiers-legend)")).not_to_contain_text("caption metric")
        check_page(page, "community", width, shots)

        # The board's CSV: the row, with the pure scorer's IoU at full precision.
        with page.expect_download() as download_info:
            page.get_by_role("link", name="CSV", exact=True).click()
        body = Path(download_info.value.path()).read_text(encoding="utf-8")
        mine = [line for line in csv.DictReader(io.StringIO(body)) if line["model"] == MODEL_NAME]
        assert len(mine) == 1
        assert mine[0]["rank"] == "2"
        assert float(mine[0]["IoU"]) == iou
        assert float(mine[0]["ACC@0.5"]) == expected["metrics"]["ACC@0.5"]
        assert float(mine[0]["IoU_patch"]) == expected["per_task"]["patch"]["IoU"]

        # The entry's own page.
        row.get_by_role("link", name=MODEL_NAME, exact=True).click()
        page.wait_for_url(re.compile(r"/b/medsg-bench/entries/\d+/$"))
        expect(page.locator("h1")).to_contain_text(MODEL_NAME)
        expect(page.get_by_role("heading", name="Per task")).to_be_visible()
        expect(page.get_by_role("heading", name="LLM judge")).to_have_count(0)
        check_page(page, "entry", width, shots)
        page.goto(status_url)
    finally:
        with contextlib.suppress(playwright_api.Error):
            page.screenshot(path=str(tmp_path / "last.png"), full_page=True)
            shutil.copyfile(tmp_path / "last.png", Path(f"/tmp/e2e_medsg_{width}_last.png"))
        page.close()
