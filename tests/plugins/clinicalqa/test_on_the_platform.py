"""The demo clinical QA benchmark on the platform, registered for the test only: set up from
its definition, its demo test set imported, a file refused row by row on the Submit form with
nothing stored, the demo entries scored with intervals on their accuracy, and the command
line's report. Real PostgreSQL, Django's test client, no mocks. (The category tabs, ratings
and hosted evaluation are the platform's, issue 15; they are tested there.)"""

import json
import re
from html import unescape
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from benchmark.models import Benchmark
from benchmark.plugins import registered
from benchmark.selectors import clear_parsed_testsets
from benchmark.services import import_testset
from plugins.clinicalqa.plugin import plugin
from submissions import services
from submissions.enums import EvaluationStatus
from submissions.models import RunReplicates, Submission
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SLUG = "clinicalqa"
FORM = {
    "institution": "Podium demo data",
    "contact_email": "demo@example.org",
    "model_url": "https://example.org/demo",
}
FACTS = {
    "type": "fine-tuned",
    "parameters": "7",
    "licence": "apache-2.0",
    "precision": "bfloat16",
    "domain_specific": "yes",
}
EXPECTED_ACCURACY = {"demo-strong": 0.9, "demo-good": 0.75, "demo-fair": 0.55, "demo-weak": 0.3}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def private_dir(settings, tmp_path):
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    clear_parsed_testsets()
    yield settings.PODIUM_PRIVATE_DIR
    clear_parsed_testsets()


@pytest.fixture
def files(tmp_path):
    return plugin.write_demo(tmp_path / "demo")


@pytest.fixture
def benchmark(private_dir, files):
    with registered(plugin):
        call_command("setup_benchmarks", verbosity=0)
        benchmark = Benchmark.objects.get(slug=SLUG)
        import_testset(benchmark, files.test_set)
        yield benchmark


@pytest.fixture
def submitter(client):
    user = UserFactory()
    client.force_login(user)
    return user


def post(client, predictions: bytes, model_name: str, facts=None):
    upload = SimpleUploadedFile("predictions.json", predictions, content_type="application/json")
    facts = facts or FACTS
    return client.post(
        f"/b/{SLUG}/submit/",
        {**FORM, **facts, "model_name": model_name, "predictions": upload},
    )


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_benchmark_and_its_metrics_come_from_the_definition(benchmark):
    assert benchmark.name == "Demo clinical QA"
    assert benchmark.plugin == "clinicalqa"
    assert list(benchmark.metrics.order_by("position").values_list("key", flat=True)) == [
        "accuracy",
        "open_ended_rating",
    ]
    test_set = benchmark.test_sets.get()
    assert (test_set.record_count, test_set.task_counts, test_set.scorer_version) == (
        56,
        {"multiple_choice": 40, "open_ended": 16},
        "clinicalqa-1",
    )


def test_a_bad_file_is_refused_on_the_form_and_nothing_is_stored(
    benchmark, client, submitter, files
):
    rows = json.loads(files.hosted[0].predictions.read_text(encoding="utf-8"))
    rows[3]["answer"] = 3
    rows[5]["reference"] = "mine"
    rows[7]["id"] = "mc-999"
    del rows[-1]

    response = post(client, json.dumps(rows).encode(), "Bad")

    assert response.status_code == 200
    assert not Submission.objects.exists()
    errors = re.search(
        r'<ul class="errorlist" id="id_predictions_error">(.*?)</ul>',
        response.content.decode(),
        re.S,
    )
    assert errors
    assert [text(item) for item in re.findall(r"<li>(.*?)</li>", errors.group(1), re.S)] == [
        "row 4, field 'answer': expected the model's answer as text (a string; for a "
        'multiple-choice item, e.g. "B" or "Answer: B"), got a number (3) (the row of id '
        "'mc-004')",
        "row 6, field 'reference': is a test-set field; a predictions row holds exactly id and "
        "answer (Podium never accepts test-set content from a submitter); remove it (the row "
        "of id 'mc-006')",
        "row 8, field 'id': no test item has the id 'mc-999'",
        "no row answers 2 of the 56 test items (the file has 55 rows): 'mc-008', 'oe-016'; the "
        "file needs one row per test item, every id exactly once (an empty answer is allowed)",
    ]


def test_the_demo_entries_are_scored_with_intervals_on_their_accuracy(
    benchmark, client, submitter, files
):
    for entry in files.hosted:
        response = post(client, entry.predictions.read_bytes(), entry.model_name, entry.facts)
        assert response.status_code == 302, entry.model_name
    runs = {
        submission.model_name: services.score_evaluation(submission.evaluations.get())
        for submission in Submission.objects.order_by("pk")
    }

    assert {name: run.status for name, run in runs.items()} == dict.fromkeys(
        EXPECTED_ACCURACY, EvaluationStatus.COMPLETE
    )
    assert {name: run.metrics for name, run in runs.items()} == {
        name: {"accuracy": accuracy} for name, accuracy in EXPECTED_ACCURACY.items()
    }
    weak = runs["demo-weak"]
    assert weak.result["parsed"] == {"multiple_choice": {"parsed": 35, "total": 40}}
    assert weak.result["summary"]["multiple_choice"] == {
        "items": 40,
        "correct": 12,
        "unreadable": 5,
    }
    for name, run in runs.items():
        stored = RunReplicates.objects.get(evaluation=run)
        assert stored.metric_keys == ["accuracy"]
        low, high = stored.intervals["accuracy"]
        assert low < EXPECTED_ACCURACY[name] < high, name
    status = text(client.get(f"/submissions/{weak.submission_id}/status/").content.decode())
    assert "accuracy Accuracy (multiple choice) 0.300 0.163\u20130.450 40 / 40 questions" in status
    assert "multiple_choice 35 40 87.5%" in status  # the format report
    assert "Row 1 ( mc-002 ): It depends on the case." in status


def test_the_cli_prints_the_report(private_dir, files):
    out = StringIO()
    with registered(plugin):
        call_command(
            "score",
            str(files.hosted[2].predictions),
            "--benchmark",
            SLUG,
            "--ground-truth",
            str(files.test_set),
            "--format",
            "json",
            stdout=out,
        )
    assert json.loads(out.getvalue()) == {
        "metrics": {"accuracy": 0.55},
        "multiple_choice": {"items": 40, "correct": 22, "unreadable": 2},
        "open_ended": {"items": 16, "empty": 0},
    }


def test_the_upload_field_states_this_benchmarks_matching_rule(benchmark, client, submitter):
    """The help under the file field said "matched to the test set by position, so keep the
    test set's order" on every benchmark, while this one's "Your file" says "By id ... in any
    order" (issue 32's second walk)."""
    page = text(client.get(f"/b/{SLUG}/submit/").content.decode())

    assert "Rows are matched to the test set by id, in any order." in page
    assert "by position" not in page
