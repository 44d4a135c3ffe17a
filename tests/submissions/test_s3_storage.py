"""The private store in S3 (docs/storage.md), against a real S3 server (moto in server mode,
tests/s3_server.py): a test set and an upload land in the bucket under the prefix and nowhere
on the local disk, a worker process scores the upload reading both from the bucket, a refused
upload leaves no object, a corrupt download is refused, and a store that goes down refuses an
upload with a clear error, leaving no row."""

import hashlib
import json
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from benchmark.selectors import (
    TestSetFileError,
    active_testset,
    clear_parsed_testsets,
    load_scoring_testset,
)
from benchmark.services import import_testset
from core.exceptions import QuotaExceeded
from submissions import services
from submissions.enums import EvaluationStatus, FailureCode
from submissions.models import Evaluation, Submission
from submissions.services import SubmissionDetails
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import BenchmarkFactory, write_ground_truth
from tests.s3_server import S3Server, new_bucket
from tests.submissions.conftest import start_cluster, stop_cluster

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

FIELDS = {
    "model_name": "BucketModel",
    "institution": "Lab",
    "contact_email": "a@example.org",
    "model_url": "https://example.org/model",
}


@pytest.fixture
def benchmark(s3_storage, private_dir, records, tmp_path):
    """The small test set imported with the private store in the test's bucket."""
    benchmark = BenchmarkFactory(slug="medvidbench", daily_submission_limit=2)
    import_testset(benchmark, write_ground_truth(tmp_path / "gt.json", records))
    return benchmark


def local_files() -> list[Path]:
    """Every file under the local private folder (there should be none)."""
    return sorted(path for path in Path(settings.PODIUM_PRIVATE_DIR).rglob("*") if path.is_file())


def cached_files() -> list[str]:
    return sorted(
        path.name for path in Path(settings.PODIUM_PRIVATE_CACHE_DIR).rglob("*") if path.is_file()
    )


def api_submit(user, benchmark, content):
    _, raw = create_api_token(user, name="gpu box")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    data = {**FIELDS, "predictions": SimpleUploadedFile("p.json", content)}
    return client.post(reverse("api:submit", args=[benchmark.slug]), data, format="multipart")


def test_the_test_set_lands_in_the_bucket_and_is_read_through_the_local_cache(
    benchmark, s3_storage
):
    test_set = active_testset(benchmark)

    assert test_set.file_name == f"testsets/medvidbench/v1-{test_set.checksum[:12]}.json"
    assert s3_storage.object_keys() == [f"private/{test_set.file_name}"]
    assert local_files() == []
    assert cached_files() == []

    assert load_scoring_testset(test_set).checksum == test_set.checksum

    assert cached_files() == [test_set.checksum]
    copy = Path(settings.PODIUM_PRIVATE_CACHE_DIR) / test_set.checksum[:2] / test_set.checksum
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == test_set.checksum


def test_a_test_set_altered_in_the_bucket_is_refused_and_not_cached(benchmark, s3_storage):
    test_set = active_testset(benchmark)
    key = f"private/{test_set.file_name}"
    altered = s3_storage.get(key).replace(b"tying", b"cutting")
    s3_storage.put(key, altered)
    for path in Path(settings.PODIUM_PRIVATE_CACHE_DIR).rglob("*"):
        if path.is_file():
            path.unlink()
    clear_parsed_testsets()

    with pytest.raises(TestSetFileError) as raised:
        load_scoring_testset(test_set)

    assert str(raised.value) == (
        f"Test set file {test_set.file_name} was altered: its sha256 is "
        f"{hashlib.sha256(altered).hexdigest()}, the imported file's was {test_set.checksum}."
    )
    assert cached_files() == []


def test_an_upload_is_stored_in_the_bucket_under_the_prefix_and_scored(
    benchmark, perfect_predictions, s3_storage, django_capture_on_commit_callbacks
):
    user = UserFactory()

    with django_capture_on_commit_callbacks(execute=False):
        response = api_submit(user, benchmark, perfect_predictions)

    assert response.status_code == 201, response.json()
    submission = Submission.objects.get()
    assert submission.predictions_file.startswith("predictions/medvidbench/")
    test_set = active_testset(benchmark)
    assert s3_storage.object_keys() == sorted(
        [f"private/{submission.predictions_file}", f"private/{test_set.file_name}"]
    )
    assert s3_storage.get(f"private/{submission.predictions_file}") == perfect_predictions
    evaluation = services.score_evaluation(submission.evaluations.get())
    assert evaluation.status == EvaluationStatus.SCORED, evaluation.error_message
    assert evaluation.metrics["TAG_mIoU@0.3"] == 1.0
    assert local_files() == []


def test_a_refused_upload_leaves_no_object_in_the_bucket(
    benchmark, perfect_predictions, predictions_for, s3_storage
):
    owner = UserFactory()
    for name in ("First", "Second"):
        services.create_submission(
            benchmark,
            owner=owner,
            details=SubmissionDetails(model_name=name),
            predictions=perfect_predictions,
        )
    stored = s3_storage.object_keys()

    with pytest.raises(QuotaExceeded):
        services.create_submission(
            benchmark,
            owner=owner,
            details=SubmissionDetails(model_name="Third"),
            predictions=predictions_for(["a", "b", "c", "d", "e"]),
        )

    assert len(stored) == 3  # the test set and two predictions files
    assert s3_storage.object_keys() == stored
    assert Submission.objects.count() == 2


@pytest.fixture
def failing_store(settings, monkeypatch, private_dir, records, tmp_path):
    """A benchmark whose test set is in a bucket on a moto_server of the test's own, and a
    function that stops that server."""
    server = S3Server().start()
    bucket = new_bucket(server.endpoint_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "podium-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "podium-test")
    settings.PODIUM_PRIVATE_CACHE_DIR = tmp_path / "cache"
    settings.STORAGES = {**settings.STORAGES, "private": bucket.storage()}
    benchmark = BenchmarkFactory(slug="medvidbench", daily_submission_limit=5)
    import_testset(benchmark, write_ground_truth(tmp_path / "gt.json", records))
    # Parsed while the store is up (as a running server has it): what fails is the write.
    parsed = load_scoring_testset(active_testset(benchmark))
    rows = [
        {
            "id": sample.id,
            "qa_type": sample.qa_type,
            "prediction": record["conversations"][-1]["value"],
        }
        for sample, record in zip(parsed.samples, records, strict=True)
    ]
    yield benchmark, json.dumps(rows).encode(), server.stop
    server.stop()


def test_an_upload_while_the_store_is_down_is_refused_with_503_and_leaves_no_row(
    failing_store,
):
    benchmark, predictions, stop_store = failing_store
    stop_store()

    response = api_submit(UserFactory(), benchmark, predictions)

    assert response.status_code == 503
    assert response.json() == {
        "detail": "The private file store cannot be reached just now; nothing was stored or "
        "changed. Try again in a few minutes.",
        "code": "storage_unavailable",
    }
    assert Submission.objects.count() == 0
    assert Evaluation.objects.count() == 0


def test_the_form_says_the_store_is_down_and_stores_nothing(failing_store, client):
    benchmark, predictions, stop_store = failing_store
    client.force_login(UserFactory())
    stop_store()

    response = client.post(
        f"/b/{benchmark.slug}/submit/",
        {**FIELDS, "predictions": SimpleUploadedFile("p.json", predictions)},
    )

    assert response.status_code == 200
    assert "The private file store cannot be reached just now" in response.content.decode()
    assert Submission.objects.count() == 0


def test_a_run_scored_while_the_store_is_down_fails_without_costing_the_quota(
    failing_store,
):
    benchmark, predictions, stop_store = failing_store
    owner = UserFactory()
    submission = services.create_submission(
        benchmark,
        owner=owner,
        details=SubmissionDetails(model_name="Unlucky"),
        predictions=predictions,
    )
    stop_store()

    evaluation = services.score_evaluation(submission.evaluations.get())

    assert (evaluation.status, evaluation.error_code) == (
        EvaluationStatus.FAILED,
        FailureCode.FILES_UNAVAILABLE,
    )
    assert evaluation.error_message == (
        "The server's file store could not be reached; the maintainers have been told. This "
        "run does not count towards your quota; please try again later."
    )
    assert services.evaluations_left_today(owner, benchmark) == 5


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="the worker process must share the test database (PostgreSQL)",
)
def test_a_worker_process_scores_an_upload_from_the_bucket(
    benchmark, perfect_predictions, s3_storage, tmp_path
):
    worker_cache = tmp_path / "worker-cache"
    cluster = start_cluster(**s3_storage.env(), PODIUM_PRIVATE_CACHE_DIR=str(worker_cache))
    try:
        response = api_submit(UserFactory(), benchmark, perfect_predictions)
        assert response.status_code == 201, response.json()
        evaluation = Submission.objects.get().evaluations.get()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            evaluation.refresh_from_db()
            if evaluation.state.has_scores or evaluation.state.is_terminal:
                break
            assert cluster.poll() is None
            time.sleep(0.5)
    finally:
        stop_cluster(cluster)

    assert evaluation.status == EvaluationStatus.SCORED, evaluation.error_message
    assert evaluation.metrics["TAG_mIoU@0.3"] == 1.0
    # The worker read the test set through a verified copy of its own.
    checksum = active_testset(benchmark).checksum
    assert [path.name for path in worker_cache.rglob("*") if path.is_file()] == [checksum]
    assert local_files() == []
