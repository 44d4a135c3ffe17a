"""A scoring run's lifecycle, as the judge's jobs have it: the claim (one worker at a time, a
second delivery refused), the heartbeat while the metrics are computed, the reaper that hands
out again a run whose worker died (stale heartbeat, or its process on this host gone), bounded
attempts, and a database connection dropped mid-scoring (docs/workers.md)."""

import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from django_q.models import OrmQ
from django_q.tasks import async_task

from core import workers
from core.hooks import resolved
from core.models import AuditEvent
from submissions import services
from submissions.enums import EvaluationStatus, FailureCode
from submissions.models import Evaluation
from submissions.services import SubmissionDetails
from tests.accounts.factories import UserFactory

from .conftest import slow_answers, slow_next_action_records

pytestmark = pytest.mark.integration

ELSEWHERE = "another-host:4242"


def dead_local_worker() -> str:
    """The worker id of a process on this host that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{workers.worker_id().rpartition(':')[0]}:{child.pid}"


@pytest.fixture
def run(benchmark, perfect_predictions):
    submission = services.create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Lifecycle"),
        predictions=perfect_predictions,
    )
    return submission.evaluations.get()


def hold(evaluation, *, worker, beat_age=0.0, attempts=1):
    """Put the run in `scoring` as if `worker` had claimed it `beat_age` seconds ago."""
    services.set_evaluation_status(evaluation, EvaluationStatus.SCORING)
    Evaluation.objects.filter(pk=evaluation.pk).update(
        worker=worker,
        heartbeat_at=timezone.now() - timedelta(seconds=beat_age),
        attempts=attempts,
    )
    evaluation.refresh_from_db()
    return evaluation


def actions(evaluation):
    return list(
        AuditEvent.objects.filter(
            object_id=str(evaluation.pk), action__startswith="submissions.evaluation."
        )
        .order_by("pk")
        .values_list("action", "data__note")
    )


# --- the claim -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_claim_records_this_worker_and_a_heartbeat(run):
    before = timezone.now()
    services.score_evaluation(run)
    run.refresh_from_db()
    assert run.status == EvaluationStatus.SCORED
    assert run.worker == workers.worker_id()
    assert before <= run.heartbeat_at <= run.scored_at
    assert run.attempts == 1


@pytest.mark.django_db
def test_a_second_delivery_of_a_scored_run_is_refused(run):
    services.score_evaluation(run)
    events = AuditEvent.objects.count()
    assert services.score_evaluation(run).status == EvaluationStatus.SCORED
    run.refresh_from_db()
    assert (run.status, run.attempts) == (EvaluationStatus.SCORED, 1)
    assert AuditEvent.objects.count() == events


@pytest.mark.django_db
def test_a_run_another_live_worker_holds_is_refused(run):
    hold(run, worker=ELSEWHERE, beat_age=1)
    events = AuditEvent.objects.count()
    assert services.score_evaluation(run).status == EvaluationStatus.SCORING
    run.refresh_from_db()
    assert (run.status, run.worker, run.attempts) == (EvaluationStatus.SCORING, ELSEWHERE, 1)
    assert AuditEvent.objects.count() == events


@pytest.mark.django_db
@pytest.mark.parametrize("holder", ["stale", "gone"])
def test_a_run_whose_worker_died_is_taken_over_once(run, holder):
    if holder == "stale":
        hold(run, worker=ELSEWHERE, beat_age=5)  # test settings: stale after 4 s
    else:
        hold(run, worker=dead_local_worker(), beat_age=0)  # fresh, but its process is gone
    services.score_evaluation(run)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.worker) == (
        EvaluationStatus.SCORED,
        2,
        workers.worker_id(),
    )
    assert actions(run)[-3:] == [
        ("submissions.evaluation.queued", "picked up again: its worker stopped"),
        ("submissions.evaluation.scoring", ""),
        ("submissions.evaluation.scored", ""),
    ]


@pytest.mark.django_db
def test_the_claim_fails_a_run_after_its_last_attempt(run):
    hold(run, worker=ELSEWHERE, beat_age=60, attempts=services.MAX_SCORING_ATTEMPTS)
    services.score_evaluation(run)
    run.refresh_from_db()
    assert (run.status, run.error_code) == (EvaluationStatus.FAILED, FailureCode.TOO_MANY_ATTEMPTS)
    assert run.error_message == (
        "Scoring was interrupted too many times (its worker stopped 3 times); "
        "please contact the maintainers."
    )


# --- the reaper ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_reaper_requeues_a_run_with_a_stale_heartbeat(run, django_capture_on_commit_callbacks):
    hold(run, worker=ELSEWHERE, beat_age=5)
    with django_capture_on_commit_callbacks() as callbacks:
        assert services.reap_stale_evaluations() == 1
    assert len(callbacks) == 1  # enqueue_scoring(run.pk)
    run.refresh_from_db()
    assert run.status == EvaluationStatus.QUEUED
    assert actions(run)[-1] == (
        "submissions.evaluation.queued",
        "requeued: its worker stopped beating",
    )
    assert services.reap_stale_evaluations() == 0  # nothing left to do


@pytest.mark.django_db
def test_the_reaper_requeues_at_once_a_run_whose_local_worker_is_gone(run):
    hold(run, worker=dead_local_worker(), beat_age=0)
    assert services.reap_stale_evaluations() == 1
    run.refresh_from_db()
    assert run.status == EvaluationStatus.QUEUED
    assert actions(run)[-1] == ("submissions.evaluation.queued", "requeued: its worker is gone")


@pytest.mark.django_db
@pytest.mark.parametrize("worker", [ELSEWHERE, "this process"])
def test_the_reaper_leaves_live_workers_alone(run, worker):
    hold(run, worker=workers.worker_id() if worker == "this process" else worker, beat_age=1)
    assert services.reap_stale_evaluations() == 0
    run.refresh_from_db()
    assert run.status == EvaluationStatus.SCORING


@pytest.mark.django_db
def test_the_reaper_fails_a_run_after_its_last_attempt(run):
    hold(run, worker=ELSEWHERE, beat_age=60, attempts=services.MAX_SCORING_ATTEMPTS)
    assert services.reap_stale_evaluations() == 1
    run.refresh_from_db()
    assert (run.status, run.error_code) == (EvaluationStatus.FAILED, FailureCode.TOO_MANY_ATTEMPTS)


def scoring_tasks_held() -> list[int]:
    """The run of each scoring task the (ORM) broker holds, waiting or taken."""
    return [
        queued.task["args"][0] for queued in OrmQ.objects.all() if queued.task["group"] == "scoring"
    ]


def queued_ago(run, *, seconds, sent_after=None):
    """Make `run` queued `seconds` ago, its task sent `sent_after` seconds later (None: never
    sent)."""
    queued_at = timezone.now() - timedelta(seconds=seconds)
    sent_at = None if sent_after is None else queued_at + timedelta(seconds=sent_after)
    Evaluation.objects.filter(pk=run.pk).update(queued_at=queued_at, sent_at=sent_at)


def other_task(*, taken=False):
    """A task of some other kind in the broker, waiting or taken by a worker."""
    async_task("math.floor", 1.5, q_options={"group": "other"})
    if taken:
        OrmQ.objects.filter(lock__lte=timezone.now()).update(
            lock=timezone.now() + timedelta(minutes=10)
        )


@pytest.mark.django_db
def test_sending_a_run_to_the_broker_records_when(
    benchmark, perfect_predictions, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        submission = services.create_submission(
            benchmark,
            owner=UserFactory(),
            details=SubmissionDetails(model_name="Sent"),
            predictions=perfect_predictions,
        )
    run = submission.evaluations.get()
    assert run.status == EvaluationStatus.QUEUED
    assert run.sent_at is not None
    assert run.sent_at >= run.queued_at
    assert scoring_tasks_held() == [run.pk]


@pytest.mark.django_db
def test_the_schedule_sends_a_run_whose_task_never_reached_the_broker(run):
    queued_ago(run, seconds=120)  # its process died between the commit and the broker
    other_task()  # the broker is busy with other work
    assert services.reap_stale_evaluations() == 0  # the workers' own reaper leaves it
    assert services.reap_stale_evaluations(requeue_waiting=True) == 1
    run.refresh_from_db()
    assert run.status == EvaluationStatus.QUEUED
    assert run.sent_at > run.queued_at
    assert scoring_tasks_held() == [run.pk]
    # Sent since it was queued: the broker's to deliver, not sent a second time.
    assert services.reap_stale_evaluations(requeue_waiting=True) == 0
    assert scoring_tasks_held() == [run.pk]


@pytest.mark.django_db
def test_the_schedule_leaves_a_just_queued_run_to_its_sender(run, settings):
    queued_ago(run, seconds=settings.PODIUM_TASK_SEND_GRACE_SECONDS - 10)
    assert services.reap_stale_evaluations(requeue_waiting=True) == 0
    assert scoring_tasks_held() == []


@pytest.mark.django_db
@pytest.mark.parametrize("taken", [False, True])
def test_a_run_waiting_in_a_long_queue_is_never_sent_twice(run, taken):
    # Its task was sent and the broker holds tasks: it waits its turn, however long (each
    # pass once sent every run waiting longer than Q_RETRY again, doubling the backlog).
    queued_ago(run, seconds=3 * 3600, sent_after=0.01)
    other_task(taken=taken)
    for _ in range(3):
        assert services.reap_stale_evaluations(requeue_waiting=True) == 0
    assert scoring_tasks_held() == []


@pytest.mark.django_db
def test_once_the_broker_holds_no_task_every_waiting_run_is_sent_again(run):
    # The broker lost what it held (a Redis without persistence, restarted).
    queued_ago(run, seconds=120, sent_after=0.01)
    assert services.reap_stale_evaluations(requeue_waiting=True) == 1
    assert scoring_tasks_held() == [run.pk]
    assert services.reap_stale_evaluations(requeue_waiting=True) == 0  # it holds that one


@pytest.mark.django_db
@pytest.mark.parametrize(("tasks_taken", "sent"), [(1, 1), (2, 0)])
def test_the_schedule_does_not_count_its_own_task(run, tasks_taken, sent):
    # Running as the schedule's task, the backstop is itself a task the broker holds.
    queued_ago(run, seconds=120, sent_after=0.01)
    for _ in range(tasks_taken):
        other_task(taken=True)
    assert services.reap_stale_evaluations(requeue_waiting=True, as_task=True) == sent
    assert scoring_tasks_held() == [run.pk] * sent


def test_every_worker_process_runs_the_scoring_reaper():
    # submissions' AppConfig registers it with core's watchdog (started on django-q2's
    # post_spawn in each worker process).
    assert services.reap_stale_evaluations in [resolved(reaper) for reaper in workers._reapers]


# --- the heartbeat and a dropped connection (committed data, so other connections see it) ----


# Embedded answers enough for several heartbeats (1 s in tests) on a fast machine too: 30
# took 2.2 s here and 1.9 s on a faster CI machine, under the test's 2 s floor.
SLOW_ROWS = 60


@pytest.fixture
def records():
    return slow_next_action_records(SLOW_ROWS)


@pytest.fixture
def slow_run(benchmark, predictions_for):
    submission = services.create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Slow"),
        predictions=predictions_for(slow_answers(SLOW_ROWS)),
    )
    return submission.evaluations.get()


def wait_until_scoring(evaluation_id, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Evaluation.objects.filter(pk=evaluation_id, status=EvaluationStatus.SCORING).exists():
            return
        time.sleep(0.05)
    raise AssertionError("scoring never started")


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_beats_while_the_metrics_are_computed(slow_run):
    beats = []

    def watch():
        wait_until_scoring(slow_run.pk)
        while Evaluation.objects.filter(pk=slow_run.pk, status=EvaluationStatus.SCORING).exists():
            beats.append(
                Evaluation.objects.values_list("heartbeat_at", flat=True).get(pk=slow_run.pk)
            )
            time.sleep(0.2)
        connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    services.score_evaluation(slow_run)
    watcher.join()
    slow_run.refresh_from_db()
    assert slow_run.status == EvaluationStatus.SCORED
    took = (slow_run.scored_at - slow_run.scoring_started_at).total_seconds()
    assert took > 2, "scoring was too quick to observe a heartbeat"
    assert len(set(beats)) >= 2  # the heartbeat moved while the run was being scored
    # It beat through the run, not only at its start (a loaded machine may delay a beat, so the
    # bound is half the run rather than a period).
    assert slow_run.heartbeat_at > slow_run.scoring_started_at + timedelta(seconds=took / 2)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_terminate_backend")
def test_a_connection_dropped_mid_scoring_is_replaced_and_the_run_scored_once(slow_run):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()

    def terminate():
        wait_until_scoring(slow_run.pk)
        time.sleep(0.5)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [backend])
        connection.close()

    killer = threading.Thread(target=terminate)
    killer.start()
    services.score_evaluation(slow_run)
    killer.join()
    slow_run.refresh_from_db()
    assert (slow_run.status, slow_run.attempts) == (EvaluationStatus.SCORED, 2)
    assert [a for a, _ in actions(slow_run)].count("submissions.evaluation.scored") == 1
    assert not Evaluation.objects.filter(status=EvaluationStatus.SCORING).exists()
