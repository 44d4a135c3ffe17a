"""A third benchmark with no other code (issue 14): the toy plugin, registered for the test
only, is set up, imported, listed on the home page, takes files on the form and by API (with
its own option), refuses bad ones row by row, scores them with intervals, ranks them, exports
them and scores from the command line. Real PostgreSQL, Django's test client, no mocks."""

import csv
import io
import json
import re
from html import unescape
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from benchmark.models import Benchmark
from benchmark.plugins import BenchmarkPlugin, Contributions, ScoredResult, registered
from benchmark.selectors import active_testset, clear_parsed_testsets
from benchmark.services import import_testset
from core.exceptions import InvalidTestSet
from submissions import services
from submissions.enums import EvaluationStatus
from submissions.models import Evaluation, RunReplicates, Submission
from tests.accounts.factories import UserFactory
from tests.benchmark.scoring.test_boundary import FORBIDDEN_ROOTS, imported_modules
from tests.submissions.pages import parse_table

from . import scoring
from .plugin import plugin as toy_plugin

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SLUG = "toy-classification"
# The test set: 4 cats (rows 0, 3, 5, 8), 3 dogs (1, 4, 7), 3 birds (2, 6, 9).
LABELS = ["cat", "dog", "bird", "cat", "dog", "cat", "bird", "dog", "cat", "bird"]
# Sharp misses rows 1 (a dog) and 2 (a bird); Blunt misses rows 0, 3 (cats), 6 and 9 (birds).
SHARP = ["cat", "cat", "cat", "cat", "dog", "cat", "bird", "dog", "cat", "bird"]
BLUNT = ["dog", "dog", "bird", "dog", "dog", "cat", "dog", "dog", "cat", "dog"]
# Hand-computed: accuracy = right / 10; per class = right in the class / its items; macro =
# the per-class values added left to right in the order bird, cat, dog, divided by 3.
SHARP_METRICS = {
    "accuracy": 8 / 10,
    "macro_accuracy": (2 / 3 + 4 / 4 + 2 / 3) / 3,
    "accuracy_bird": 2 / 3,
    "accuracy_cat": 4 / 4,
    "accuracy_dog": 2 / 3,
}
BLUNT_METRICS = {
    "accuracy": 6 / 10,
    "macro_accuracy": (1 / 3 + 2 / 4 + 3 / 3) / 3,
    "accuracy_bird": 1 / 3,
    "accuracy_cat": 2 / 4,
    "accuracy_dog": 3 / 3,
}
FORM = {
    "institution": "Toy Lab",
    "contact_email": "toy@example.org",
    "model_url": "https://example.org/toy",
}


def rows(labels):
    return [{"row": index, "label": label} for index, label in enumerate(labels)]


def as_bytes(value) -> bytes:
    return json.dumps(value).encode()


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
def toy():
    with registered(toy_plugin) as plugin:
        yield plugin


@pytest.fixture
def ground_truth(tmp_path) -> Path:
    path = tmp_path / "toy-testset.json"
    path.write_text(json.dumps([{"label": label} for label in LABELS]), encoding="utf-8")
    return path


@pytest.fixture
def benchmark(toy, private_dir, ground_truth):
    """Every installed benchmark as `setup_benchmarks` makes them, the toy's test set active."""
    call_command("setup_benchmarks", verbosity=0)
    benchmark = Benchmark.objects.get(slug=SLUG)
    import_testset(benchmark, ground_truth)
    return benchmark


@pytest.fixture
def submitter(client):
    user = UserFactory()
    client.force_login(user)
    return user


def post(client, predictions: bytes, **fields):
    upload = SimpleUploadedFile("predictions.json", predictions, content_type="application/json")
    return client.post(f"/b/{SLUG}/submit/", {**FORM, **fields, "predictions": upload})


def submit_and_score(client, labels, *, model_name, label_case="exact") -> Evaluation:
    response = post(client, as_bytes(rows(labels)), model_name=model_name, label_case=label_case)
    submission = Submission.objects.get(model_name=model_name)
    assert response.status_code == 302
    assert response["Location"] == submission.get_absolute_url()
    return services.score_evaluation(submission.evaluations.get())


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


# --- the plugin and its benchmark ---------------------------------------------------------------


def test_the_toy_implements_the_protocol():
    assert isinstance(toy_plugin, BenchmarkPlugin)
    test_set = scoring.read_test_set(as_bytes([{"label": label} for label in LABELS]))
    result, contributions = toy_plugin.score(
        test_set, tuple(SHARP), options={"label_case": "exact"}
    )
    assert isinstance(result, ScoredResult)
    assert isinstance(contributions, Contributions)


def test_the_toy_scoring_imports_no_django_and_no_app():
    path = Path(scoring.__file__)
    modules = [
        module for _, module in imported_modules(path.read_text(), "tests.plugins.toy.scoring")
    ]
    allowed = ("benchmark.scoring.errors",)
    forbidden = [
        module
        for module in modules
        if module.split(".")[0] in FORBIDDEN_ROOTS | {"benchmark", "tests", "plugins"}
        and not module.startswith(allowed)
    ]
    assert "numpy" in modules
    assert forbidden == []


def test_setup_benchmarks_lists_the_toy_and_the_home_page_shows_it(toy, client):
    out = StringIO()
    call_command("setup_benchmarks", stdout=out)

    assert (
        "Toy classification (toy-classification): accuracy, macro_accuracy, accuracy_bird, "
        "accuracy_cat, accuracy_dog\n"
    ) in out.getvalue()
    benchmark = Benchmark.objects.get(slug=SLUG)
    assert benchmark.plugin == "toy-classification"
    assert benchmark.ranking_order == ["accuracy", "macro_accuracy"]
    home = client.get("/").content.decode()
    assert f'<h2><a href="/b/{SLUG}/">Toy classification</a></h2>' in home
    assert "<p>Ten pictures, three classes: the smallest benchmark a plugin can serve.</p>" in home
    assert f'<a href="/b/{SLUG}/submit/">Submit</a>' in home


def test_the_test_set_is_imported_with_its_counts(benchmark):
    test_set = active_testset(benchmark)

    assert test_set.record_count == 10
    assert test_set.task_counts == {"bird": 3, "cat": 4, "dog": 3}
    assert test_set.scorer_version == "toy-1"


def test_a_bad_test_set_is_refused_with_its_rows(benchmark, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"label": "cat"}, {"label": "cow"}, {"label": "dog", "x": 1}]))

    with pytest.raises(InvalidTestSet) as raised:
        import_testset(benchmark, path)

    assert str(raised.value) == (
        "The ground-truth file was rejected (2 problem(s)):\n"
        "  - row 1, field 'label': expected one of bird, cat, dog, got str \"cow\"\n"
        "  - row 2, field 'x': unknown field; a row holds label only"
    )
    assert benchmark.test_sets.count() == 1


# --- submitting -------------------------------------------------------------------------------


def test_the_submit_page_asks_for_the_option_and_guides_the_file(benchmark, client, submitter):
    content = client.get(f"/b/{SLUG}/submit/").content.decode()

    assert '<select name="label_case"' in content
    assert (
        '<option value="casefold">casefold: any case (CAT, Cat and cat are one class)</option>'
        in content
    )
    page = text(content)
    assert (
        "each with exactly row (the item's position, from 0) and label: bird, cat or dog." in page
    )
    assert "each row's row must equal its position." in page
    # The guide's table, in the benchmark's class order.
    assert "The classes class Items bird 3 cat 4 dog 3" in page
    # The example rows: the template's, their empty field filled with an example answer.
    assert '{"row": 0, "label": "your model' in unescape(content)
    assert "qa_type" not in page


def test_the_template_holds_every_row_with_an_empty_label(benchmark, client):
    response = client.get(f"/b/{SLUG}/template.json")

    assert response.status_code == 200
    assert json.loads(b"".join(response.streaming_content)) == rows([""] * 10)


def test_a_bad_file_is_refused_row_by_row_and_nothing_is_stored(benchmark, client, submitter):
    bad = rows(SHARP)
    bad[1]["row"] = 7
    bad[4]["label"] = "DOG"  # exact case asked for
    bad[8]["colour"] = "grey"

    response = post(client, as_bytes(bad), model_name="Bad", label_case="exact")

    assert response.status_code == 200
    assert not Submission.objects.exists()
    errors = re.search(
        r'<ul class="errorlist" id="id_predictions_error">(.*?)</ul>',
        response.content.decode(),
        re.S,
    )
    assert errors
    assert [text(item) for item in re.findall(r"<li>(.*?)</li>", errors.group(1), re.S)] == [
        "row 2 (a dog), field 'row': expected 1 (the row's position), got int 7",
        "row 5 (a dog), field 'label': expected one of bird, cat, dog (exactly as written), got str \"DOG\"",
        "row 9 (a cat), field 'colour': unknown field; a row holds exactly row and label",
    ]


def test_the_option_is_required(benchmark, client, submitter):
    response = post(client, as_bytes(rows(SHARP)), model_name="No option")

    assert response.status_code == 200
    assert not Submission.objects.exists()
    content = response.content.decode()
    assert "This field is required." in content
    # The file is not read without it: the plugin reads it with the option.
    assert "Choose the label case: one of exact, casefold." in content


def test_a_file_on_the_form_is_scored_with_its_option_and_intervals(benchmark, client, submitter):
    # Upper case, accepted because the submitter declared casefold: the option reaches the
    # check on the form and the worker's check and score.
    run = submit_and_score(
        client, [label.upper() for label in SHARP], model_name="Sharp", label_case="casefold"
    )

    assert run.submission.options == {"label_case": "casefold"}
    assert run.status == EvaluationStatus.COMPLETE  # no judge step
    assert run.metrics == SHARP_METRICS
    assert run.result["label_case"] == "casefold"
    assert run.result["per_dataset"] == {"accuracy": {"bird": 2 / 3, "cat": 1.0, "dog": 2 / 3}}
    stored = RunReplicates.objects.get(evaluation=run)
    assert stored.replicates == 200
    assert stored.metric_keys == list(scoring.METRIC_KEYS)
    assert set(stored.intervals) == set(scoring.METRIC_KEYS)
    low, high = stored.intervals["accuracy"]
    assert 0 <= low <= 0.8 <= high <= 1
    # The status page: no judge step among the steps, the metrics, the per-class breakdown.
    status = client.get(f"/submissions/{run.submission_id}/status/").content.decode()
    steps = re.findall(r'<li class="step (\w+)"[^>]*>([^<]*)</li>', status)
    assert steps == [
        ("done", "Received"),
        ("done", "Queued"),
        ("done", "Scoring"),
        ("done", "Complete"),
    ]
    page = text(status)
    assert "accuracy Accuracy 0.800 0.600\u20131.000 10 / 10 samples" in page
    assert "Per class Class accuracy bird 0.667 cat 1.000 dog 0.667" in page
    assert "videos" not in page
    services.recompute_board(benchmark)
    entry = text(client.get(f"/b/{SLUG}/entries/{run.submission_id}/").content.decode())
    assert "Per class" in entry
    assert "Accuracy 0.800 [0.600, 1.000] 0.800" in entry


def test_the_api_takes_a_file_by_token_and_applies_the_option(benchmark):
    _, raw = create_api_token(UserFactory(), name="toy box")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    url = reverse("api:submit", args=[SLUG])

    def submit(labels, label_case, name):
        data = {**FORM, "model_name": name, "label_case": label_case}
        data["predictions"] = SimpleUploadedFile("p.json", as_bytes(rows(labels)))
        return api.post(url, data, format="multipart")

    refused = submit([label.upper() for label in BLUNT], "exact", "Blunt")
    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "invalid_predictions"
    assert body["total"] == 10
    assert body["problems"][0] == {
        "row": 0,
        "field": "label",
        "message": 'expected one of bird, cat, dog (exactly as written), got str "DOG"',
    }
    unknown = submit(BLUNT, "title", "Blunt")
    assert unknown.status_code == 400
    assert set(unknown.json()["errors"]) == {"label_case"}
    assert not Submission.objects.exists()

    created = submit(BLUNT, "exact", "Blunt")
    assert created.status_code == 201
    submission = Submission.objects.get()
    assert submission.options == {"label_case": "exact"}
    run = services.score_evaluation(submission.evaluations.get())
    assert run.metrics == BLUNT_METRICS
    assert api.get(created.json()["url"]).json()["evaluation"]["metrics"] == BLUNT_METRICS


# --- ranking and exporting --------------------------------------------------------------------


def test_two_entries_rank_by_accuracy_and_export(benchmark, client, submitter):
    # Blunt is submitted first and named first alphabetically: only its accuracy ranks it.
    blunt = submit_and_score(client, BLUNT, model_name="Alpha Blunt")
    sharp = submit_and_score(client, SHARP, model_name="Zeta Sharp")
    services.recompute_board(benchmark)

    board = client.get(f"/b/{SLUG}/community/").content.decode()
    table = parse_table(board, "board")
    names = [cells[1][1].removesuffix(" ↗") for cells in table.rows[1:]]
    assert names[:2] == ["Zeta Sharp", "Alpha Blunt"], names

    api = APIClient()
    rankings = api.get(reverse("api:rankings", args=[SLUG]), {"board": "all"}).json()
    assert rankings["metrics"] == list(scoring.METRIC_KEYS)
    results = rankings["results"]
    assert [(row["rank"], row["model"]) for row in results] == [
        (1, "Zeta Sharp"),
        (2, "Alpha Blunt"),
    ]
    assert {key: value["value"] for key, value in results[0]["metrics"].items()} == SHARP_METRICS
    exported = api.get(reverse("api:rankings", args=[SLUG]), {"board": "all", "format": "csv"})
    assert exported.status_code == 200
    lines = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert [line["model"] for line in lines] == ["Zeta Sharp", "Alpha Blunt"]
    for line, run in zip(lines, (sharp, blunt), strict=True):
        assert {key: float(line[key]) for key in scoring.METRIC_KEYS} == run.metrics


# --- the command line and the numbers ---------------------------------------------------------


def test_the_cli_scores_with_the_toy_and_its_option(toy, tmp_path, ground_truth):
    predictions = tmp_path / "p.json"
    predictions.write_text(json.dumps(rows([label.title() for label in BLUNT])))
    out = StringIO()

    call_command(
        "score",
        str(predictions),
        "--benchmark",
        SLUG,
        "--ground-truth",
        str(ground_truth),
        "--label-case",
        "casefold",
        "--format",
        "json",
        stdout=out,
    )

    assert json.loads(out.getvalue()) == {"metrics": BLUNT_METRICS, "label_case": "casefold"}
    with pytest.raises(CommandError, match=r"row 0, field 'label': expected one of bird"):
        call_command(
            "score",
            str(predictions),
            "--benchmark",
            SLUG,
            "--ground-truth",
            str(ground_truth),
            "--label-case",
            "exact",
        )


def test_the_identity_replicate_is_the_published_value_and_replicates_do_not_depend_on_the_batch():
    test_set = scoring.read_test_set(as_bytes([{"label": label} for label in LABELS]))
    result, contributions = toy_plugin.score(
        test_set, tuple(BLUNT), options={"label_case": "exact"}
    )
    rng = np.random.default_rng(7)
    weights = np.vstack([np.ones(10, dtype=np.int64), rng.integers(0, 3, size=(49, 10))])

    batch = contributions.replicate_values(weights)
    one_by_one = [contributions.replicate_values(weights[b : b + 1]) for b in range(50)]
    stored = toy_plugin.contributions_from_bytes(contributions.to_bytes())

    assert {key: float(values[0]) for key, values in batch.items()} == result.metrics
    for key, values in batch.items():
        np.testing.assert_array_equal(values, [row[key][0] for row in one_by_one])
        np.testing.assert_array_equal(values, stored.replicate_values(weights)[key])
    # A replicate that draws no bird has no bird accuracy; the macro mean is over cat and dog.
    no_birds = np.array([[1, 1, 0, 1, 1, 1, 0, 1, 1, 0]])
    values = contributions.replicate_values(no_birds)
    assert np.isnan(values["accuracy_bird"][0])
    assert values["macro_accuracy"][0] == (2 / 4 + 3 / 3) / 2
