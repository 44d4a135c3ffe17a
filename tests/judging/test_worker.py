"""The judge in a real django-q2 cluster, killed mid-run: the job is reaped, picked up by a new
cluster, continues from the persisted items and finishes; nothing is judged twice beyond the
items in flight at the kill, and no job is left running."""

import os
import signal
import time

import pytest
from django.db import connection

from judging import services
from judging.enums import ItemState, JobStatus
from judging.models import JudgeEndpoint, JudgeJob
from judging.standin import Faults
from submissions.enums import EvaluationStatus
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory
from tests.benchmark.scoring.factories import gt_record
from tests.submissions.conftest import start_cluster, stop_cluster

from .conftest import CAPTION_PREDICTIONS, DVC, caption_ground_truth

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the cluster needs a shared PostgreSQL database"
    ),
]

EVENTS = 60
CONCURRENCY = 3


def long_dense_caption():
    segments = [
        {"start": 10 * n, "end": 10 * n + 10, "caption": f"Step {n} of the procedure."}
        for n in range(EVENTS)
    ]
    answer = "\n".join(f"{10 * n}-{10 * n + 10} seconds: step {n}." for n in range(EVENTS))
    return gt_record(DVC, answer, [segments])


@pytest.fixture
def records():
    return [*caption_ground_truth(), long_dense_caption()]


def wait_for(condition, timeout, message):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(message)


def test_a_job_survives_its_worker_being_killed(judged_benchmark, upload, standin, settings):
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    JudgeEndpoint.objects.update(concurrency=CONCURRENCY)
    standin.faults = Faults(latency=0.1)
    predictions = [
        *CAPTION_PREDICTIONS,
        "\n".join(f"{10 * n}.0-{10 * n + 10}.0 seconds: step {n} done." for n in range(EVENTS)),
    ]
    submission = create_submission(
        judged_benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Survivor"),
        predictions=upload(predictions),
    )
    evaluation = score_evaluation(submission.evaluations.get())
    job = services.start_judge(evaluation)  # queued for the cluster on commit
    prompts = job.items.values("prompt_sha256").distinct().count()
    assert prompts == 6 + EVENTS

    first = start_cluster()
    try:
        wait_for(
            lambda: job.items.filter(state=ItemState.DONE).count() >= 30,
            60,
            "the first cluster judged nothing",
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the whole cluster dies mid-run
        first.wait()
    job.refresh_from_db()
    assert job.state == JobStatus.RUNNING
    assert job.items.filter(state=ItemState.PENDING).exists()

    settings.PODIUM_JUDGE_STALE_SECONDS = 2
    wait_for(lambda: services.reap_stale_jobs() == 1, 10, "the reaper never saw the dead worker")
    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED

    second = start_cluster()
    try:
        wait_for(
            lambda: JudgeJob.objects.get(pk=job.pk).state == JobStatus.DONE,
            60,
            "the second cluster did not finish the job",
        )
    finally:
        stop_cluster(second)

    job.refresh_from_db()
    evaluation.refresh_from_db()
    assert evaluation.state == EvaluationStatus.COMPLETE
    assert job.items_failed == 0
    assert job.runs == 2
    assert standin.calls <= prompts + CONCURRENCY
    judged_twice = [count for count in standin.prompt_calls.values() if count > 1]
    assert len(judged_twice) <= CONCURRENCY
    assert len(standin.prompt_calls) == prompts
    assert not JudgeJob.objects.filter(status=JobStatus.RUNNING).exists()
