"""Verification with the private store in S3 (docs/storage.md), against a real S3 server (moto
in server mode): the demo's media are uploaded to the bucket, a re-run reads them from it and
writes its answers there, and the entry goes to the Official board from the report; media
missing from the bucket fail the job before anything is sent."""

from pathlib import Path

import pytest
from django.conf import settings

from benchmark.plugins import get_plugin
from benchmark.selectors import active_testset, load_scoring_testset
from core import private_files
from submissions.demo import load_plugin_demo
from submissions.enums import VerificationStatus
from submissions.models import Submission
from submissions.services import set_verification_status
from tests.accounts.factories import UserFactory
from verifying import services
from verifying.demo import demo_answer_tables
from verifying.enums import RerunStatus
from verifying.models import ModelEndpoint
from verifying.standin import StandinModel

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def maintainer():
    return UserFactory(is_staff=True, is_superuser=True)


@pytest.fixture
def demo(s3_storage, private_dir, tmp_path, django_capture_on_commit_callbacks):
    """MedSG-Bench's demo loaded with the store in the test's bucket (its images uploaded)."""
    with django_capture_on_commit_callbacks(execute=True):
        loaded = load_plugin_demo(
            get_plugin("medsg-bench"),
            tmp_path / "demo" / "medsg-bench",
            user=UserFactory(),
            log=lambda message: None,
            standin_model_url="http://127.0.0.1:8766/v1",
        )
    return loaded.benchmark


def grant_and_rerun(submission, maintainer, capture, base_url, model):
    with capture(execute=True):
        for status in (
            VerificationStatus.NOMINATED,
            VerificationStatus.CONTACTED,
            VerificationStatus.ACCESS_GRANTED,
        ):
            set_verification_status(submission, status, actor=maintainer)
    services.register_endpoint(submission, actor=maintainer, base_url=base_url, model=model)
    with capture(execute=True):
        job = services.start_rerun(submission, actor=maintainer, enqueue=False)
    with capture(execute=True):
        services.run_job(job.pk)
    job.refresh_from_db()
    return job


def test_a_rerun_reads_its_media_from_the_bucket_and_verifies_the_entry(
    demo, s3_storage, maintainer, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    plugin = get_plugin("medsg-bench")
    test_set = load_scoring_testset(active_testset(demo))
    images = plugin.rerun.media_paths(test_set, 8)
    keys = s3_storage.object_keys()
    assert {f"private/frames/medsg-bench/{name}" for name in images} <= set(keys)
    entry = Submission.objects.get(benchmark=demo, model_name="GroundDemo-7B (synthetic)")
    assert f"private/{entry.predictions_file}" in keys
    # Nothing private on this machine but its verified copies and the demo's staging folder.
    assert not any(path.is_file() for path in Path(settings.PODIUM_PRIVATE_DIR).rglob("*"))
    model_name = ModelEndpoint.objects.get(submission=entry).model

    # The stand-in reads the media from the bucket too (frames_root None: the store).
    with StandinModel(
        models=demo_answer_tables(None, lambda plugin: 8, only="medsg-bench")
    ) as model:
        job = grant_and_rerun(entry, maintainer, capture, model.base_url, model_name)

    assert (job.state, job.items_done) == (RerunStatus.DONE, len(test_set))
    assert job.metrics == entry.evaluations.get().metrics
    assert job.predictions_file.startswith(f"reruns/medsg-bench/rerun-{job.pk}-")
    assert f"private/{job.predictions_file}" in s3_storage.object_keys()
    assert private_files.read(job.predictions_file).startswith(b"[")
    with capture(execute=True):
        services.verify_from_report(job, actor=maintainer)
    entry.refresh_from_db()
    assert entry.verification_status == VerificationStatus.VERIFIED


def test_media_missing_from_the_bucket_fail_the_job_before_anything_is_sent(
    demo, s3_storage, maintainer, django_capture_on_commit_callbacks
):
    plugin = get_plugin("medsg-bench")
    test_set = load_scoring_testset(active_testset(demo))
    first, *_ = plugin.rerun.media_paths(test_set, 8)
    private_files.delete(f"frames/medsg-bench/{first}")
    entry = Submission.objects.get(benchmark=demo, model_name="GroundDemo-7B (synthetic)")

    with StandinModel(models={}) as model:
        job = grant_and_rerun(
            entry, maintainer, django_capture_on_commit_callbacks, model.base_url, "any"
        )
        received = model.received

    assert job.state == RerunStatus.FAILED
    assert job.message == (
        f"1 image files are missing under the images folder (the private store's "
        f"frames/medsg-bench/): {first}. Nothing was sent to the model."
    )
    assert received == []
