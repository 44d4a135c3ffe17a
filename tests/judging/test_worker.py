"""The judge in a real django-q2 cluster, killed mid-run: the job is reaped, picked up by a new
cluster, continues from the persisted items and finishes; nothing is judged twice beyond the
items in flight at the kill, and no job is left running."""

import os
import signal
import time

import pytest
from django.db import connection

from benchmark.selectors import load_scoring_testset
from core import private_files
from judging import services
from judging.enums import ItemState, JobStatus
from judging.models import JudgeEndpoint, JudgeJob, VerdictClaim
from judging.standin import Faults, StandinJudge, deterministic_verdict
from plugins.medvidbench.scoring import load_predictions
from plugins.medvidbench.scoring.judge import aggregate, build_items
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


def long_job_submission(benchmark, upload, name, owner=None):
    predictions = [
        *CAPTION_PREDICTIONS,
        "\n".join(f"{10 * n}.0-{10 * n + 10}.0 seconds: step {n} done." for n in range(EVENTS)),
    ]
    submission = create_submission(
        benchmark,
        owner=owner or UserFactory(),
        details=SubmissionDetails(model_name=name),
        predictions=upload(predictions),
    )
    return score_evaluation(submission.evaluations.get())


def uninterrupted_metrics(evaluation):
    """What judging every item once with the stand-in's verdicts publishes (the aggregation of
    an uninterrupted judgement, computed apart from any job)."""
    test_set = load_scoring_testset(evaluation.test_set)
    predictions = load_predictions(
        private_files.read(evaluation.submission.predictions_file), test_set
    )
    rubric = evaluation.submission.benchmark.rubric()
    items = build_items(test_set, predictions)
    verdicts = {item.key: deterministic_verdict(item.prompt(rubric)) for item in items}
    return aggregate(test_set, items, verdicts, rubric).metrics


def test_a_ten_second_judge_outage_mid_job_changes_no_published_number(
    judged_benchmark, upload, standin, monkeypatch
):
    monkeypatch.setenv("PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS", "120")  # for the cluster
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    JudgeEndpoint.objects.update(concurrency=CONCURRENCY, max_attempts=2)
    standin.faults = Faults(latency=0.1)
    evaluation = long_job_submission(judged_benchmark, upload, "Outage")
    job = services.start_judge(evaluation)
    port = standin.port

    cluster = start_cluster()
    back = StandinJudge(port=port, faults=Faults(latency=0.1))
    try:
        wait_for(
            lambda: job.items.filter(state=ItemState.DONE).count() >= 20,
            60,
            "the cluster judged nothing",
        )
        standin.stop()  # connections refused from now on
        wait_for(
            lambda: JudgeJob.objects.get(pk=job.pk).unreachable_since is not None,
            10,
            "the job never said the judge was unreachable",
        )
        time.sleep(10)
        job.refresh_from_db()
        assert job.state == JobStatus.RUNNING
        assert job.items_failed == 0
        back.start()  # the same address again
        wait_for(
            lambda: JudgeJob.objects.get(pk=job.pk).state == JobStatus.DONE,
            60,
            "the job did not finish once the judge was back",
        )
    finally:
        stop_cluster(cluster)
        back.stop()

    job.refresh_from_db()
    evaluation.refresh_from_db()
    assert evaluation.state == EvaluationStatus.COMPLETE
    assert job.items_failed == 0
    assert (job.unreachable_since, job.next_try_at) == (None, None)
    expected = uninterrupted_metrics(evaluation)
    published = {name: evaluation.metrics[name] for name in ("DVC_llm", "VS_llm", "RC_llm")}
    assert published == {name: expected[name] for name in published}  # bit for bit
    assert evaluation.result["counts"]["DVC_llm"] == {
        "scored": job.items.filter(metric="DVC_llm").count(),
        "total": job.items.filter(metric="DVC_llm").count(),
    }


def test_two_concurrent_jobs_over_the_same_captions_pay_each_prompt_once(
    judged_benchmark, upload, standin
):
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    JudgeEndpoint.objects.update(concurrency=CONCURRENCY)
    standin.faults = Faults(latency=0.05)
    # One person's two entries: the same file from another account would be refused as a copy.
    owner = UserFactory()
    first = long_job_submission(judged_benchmark, upload, "First", owner)
    second = long_job_submission(judged_benchmark, upload, "Second", owner)
    jobs = [services.start_judge(first), services.start_judge(second)]
    prompts = jobs[0].items.values("prompt_sha256").distinct().count()

    cluster = start_cluster(workers=2)  # one job each, at the same time
    try:
        wait_for(
            lambda: all(JudgeJob.objects.get(pk=job.pk).state == JobStatus.DONE for job in jobs),
            90,
            "the two jobs did not finish",
        )
    finally:
        stop_cluster(cluster)

    for job in jobs:
        job.refresh_from_db()
    first.refresh_from_db()
    second.refresh_from_db()
    assert min(job.started_at for job in jobs) < min(job.finished_at for job in jobs)  # overlap
    assert prompts <= standin.calls <= prompts + CONCURRENCY
    assert sum(job.calls for job in jobs) == standin.calls
    assert all(job.items_cached > 0 for job in jobs)  # each took the other's verdicts
    names = ("DVC_llm", "VS_llm", "RC_llm")
    assert [first.metrics[name] for name in names] == [second.metrics[name] for name in names]
    assert not VerdictClaim.objects.exists()
