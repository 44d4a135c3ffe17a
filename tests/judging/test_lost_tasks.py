"""The minute's Schedule sends again the tasks of engine jobs that the broker does not hold
(`inference.lifecycle.requeue_lost`, docs/workers.md), shown on judge jobs (the other kinds
share the code): a job never handed to the broker, and every waiting job once the broker
holds no task; never a job that only waits its turn."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import OrmQ
from django_q.tasks import async_task

from inference import lifecycle
from judging import services
from judging.enums import JobStatus
from judging.models import JudgeJob

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def judge_tasks_held() -> list[int]:
    """The job of each judge task the (ORM) broker holds, waiting or taken."""
    return [
        queued.task["args"][0] for queued in OrmQ.objects.all() if queued.task["group"] == "judge"
    ]


def other_task(*, taken=False):
    """A task of some other kind in the broker, waiting or taken by a worker."""
    async_task("math.floor", 1.5, q_options={"group": "other"})
    if taken:
        OrmQ.objects.filter(lock__lte=timezone.now()).update(
            lock=timezone.now() + timedelta(minutes=10)
        )


@pytest.fixture
def job(scored_run):
    """A judge job created two minutes ago and never sent, the broker holding nothing."""
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=2))
    OrmQ.objects.all().delete()  # what the fixture's board refresh queued
    return job


def test_sending_a_job_records_when(job):
    before = timezone.now()
    services.enqueue_job(job.pk)
    job.refresh_from_db()
    assert job.sent_at >= before
    assert judge_tasks_held() == [job.pk]


def test_a_job_never_handed_to_the_broker_is_sent_once(job):
    other_task()  # the broker is busy with other work
    assert services.reap_dead_workers_jobs() == 0  # the workers' few-second round leaves it
    assert services.reap_stale_jobs() == 1
    assert judge_tasks_held() == [job.pk]
    assert services.reap_stale_jobs() == 0  # sent since it was queued: the broker's now
    assert judge_tasks_held() == [job.pk]


def test_a_job_handed_back_after_it_was_sent_is_sent_again(job, django_capture_on_commit_callbacks):
    # Sent, then running, then handed back at the end of its slice by a process that died
    # before its commit's callback reached the broker.
    JudgeJob.objects.filter(pk=job.pk).update(sent_at=timezone.now() - timedelta(minutes=2))
    lifecycle.claim(services.JUDGE_JOBS, job.pk)
    with django_capture_on_commit_callbacks(execute=False):
        lifecycle.end_slice(services.JUDGE_JOBS, job.pk)
    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED
    assert job.queued_at > job.sent_at
    other_task()
    assert services.reap_stale_jobs() == 0  # handed back just now: left to its sender
    JudgeJob.objects.filter(pk=job.pk).update(queued_at=timezone.now() - timedelta(minutes=2))
    assert services.reap_stale_jobs() == 1
    assert judge_tasks_held() == [job.pk]


@pytest.mark.parametrize("taken", [False, True])
def test_a_job_waiting_its_turn_is_never_sent_twice(job, taken):
    JudgeJob.objects.filter(pk=job.pk).update(
        created_at=timezone.now() - timedelta(hours=3),
        sent_at=timezone.now() - timedelta(hours=3) + timedelta(seconds=1),
    )
    other_task(taken=taken)
    for _ in range(3):
        assert services.reap_stale_jobs() == 0
    assert judge_tasks_held() == []


@pytest.mark.parametrize(("tasks_taken", "sent"), [(0, 1), (1, 1), (2, 0)])
def test_once_the_broker_holds_no_task_but_the_schedules_every_waiting_job_is_sent(
    job, tasks_taken, sent
):
    # The broker lost what it held; the Schedule runs as a task the broker holds itself.
    JudgeJob.objects.filter(pk=job.pk).update(sent_at=timezone.now() - timedelta(seconds=100))
    for _ in range(tasks_taken):
        other_task(taken=True)
    assert services.reap_stale_jobs(as_task=True) == sent
    assert judge_tasks_held() == [job.pk] * sent
