"""Battle jobs in a real django-q2 cluster against the loopback stand-in judge: the scored hook
queues them and the cluster judges, stores and rates; a judge outage mid-job is waited out and
the job resumes, storing exactly the battles an uninterrupted run stores; a cluster killed
mid-job is reaped and a new one continues from the persisted judge calls, paying again at most
the calls in flight."""

import os
import signal
import time

import pytest
from django.db import connection

from arena.enums import ItemState, JobStatus
from arena.models import Battle, BattleJob, CategoryFit
from arena.services import reap_stale_jobs
from benchmark.scoring.battles import battle_winner
from judging.models import JudgeEndpoint
from judging.standin import Faults, StandinJudge
from judging.standin_pairwise import pairwise_reply
from plugins.clinicalqa.pairwise import pairwise
from submissions.models import CategoryRating
from tests.submissions.conftest import start_cluster, stop_cluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the cluster needs a shared PostgreSQL database"
    ),
]

CONCURRENCY = 2


def wait_for(condition, timeout, message):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(message)


def expected_winners() -> dict[tuple[int, int, str], str]:
    """What the stand-in's pure rule makes of every scheduled battle, computed apart from any
    job: (model A, model B, question) -> winner."""
    winners = {}
    for job in BattleJob.objects.all():
        for question in set(job.items.values_list("question", flat=True)):
            for opponent in {item.opponent_id for item in job.items.filter(question=question)}:
                rounds = {
                    item.shown_first: pairwise.read_verdict(pairwise_reply(item.prompt))
                    for item in job.items.filter(question=question, opponent_id=opponent)
                }
                winners[(job.submission_id, opponent, question)] = battle_winner(
                    rounds["model_a"], rounds["model_b"]
                )
    return winners


def stored_winners() -> dict[tuple[int, int, str], str]:
    return {
        (a, b, question): winner
        for a, b, question, winner in Battle.objects.values_list(
            "model_a_id", "model_b_id", "question", "winner"
        )
    }


@pytest.fixture
def three_entries(enter, clinicalqa, standin):
    JudgeEndpoint.objects.update(concurrency=CONCURRENCY)
    standin.faults = Faults(latency=0.1)
    return [
        enter(name, kind)
        for name, kind in (("strong", "strong"), ("good", "good"), ("weak", "weak"))
    ]


def test_the_cluster_judges_stores_and_rates_the_battles_the_scored_hook_queued(three_entries):
    jobs = BattleJob.objects.order_by("id")
    assert [job.status for job in jobs] == [JobStatus.DONE, JobStatus.QUEUED, JobStatus.QUEUED]

    cluster = start_cluster()
    try:
        wait_for(
            lambda: not BattleJob.objects.filter(status__in=["queued", "running"]).exists(),
            90,
            "the cluster did not finish the battle jobs",
        )
        wait_for(
            lambda: CategoryFit.objects.filter(battles=48).exists(),
            30,
            "the category was not rated",
        )
    finally:
        stop_cluster(cluster)

    assert stored_winners() == expected_winners()
    assert len(stored_winners()) == 48
    assert CategoryRating.objects.count() == 3
    assert [job.status for job in BattleJob.objects.order_by("id")] == [JobStatus.DONE] * 3


def test_a_judge_outage_mid_job_is_waited_out_and_the_job_resumes(
    three_entries, standin, monkeypatch
):
    monkeypatch.setenv("PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS", "120")  # for the cluster
    port = standin.port
    longest = BattleJob.objects.get(submission=three_entries[-1])
    assert longest.items_total == 64

    cluster = start_cluster()
    back = StandinJudge(port=port, faults=Faults(latency=0.1))
    try:
        wait_for(
            lambda: longest.items.filter(state=ItemState.DONE).count() >= 10,
            60,
            "the cluster judged nothing",
        )
        standin.stop()  # connections refused from now on
        wait_for(
            lambda: BattleJob.objects.filter(unreachable_since__isnull=False).exists(),
            15,
            "no job said the judge was unreachable",
        )
        time.sleep(3)
        assert not BattleJob.objects.filter(status=JobStatus.FAILED).exists()
        assert not Battle.objects.filter(job=longest).exists()
        back.start()  # the same address again
        wait_for(
            lambda: not BattleJob.objects.filter(status__in=["queued", "running"]).exists(),
            90,
            "the jobs did not finish once the judge was back",
        )
    finally:
        stop_cluster(cluster)
        back.stop()

    longest.refresh_from_db()
    assert longest.status == JobStatus.DONE
    assert (longest.items_failed, longest.battles_dropped) == (0, 0)
    assert (longest.unreachable_since, longest.next_try_at) == (None, None)
    assert stored_winners() == expected_winners()


def test_a_killed_cluster_is_reaped_and_a_new_one_continues_from_the_judged_calls(
    three_entries, standin, settings
):
    standin.faults = Faults(latency=0.2)
    longest = BattleJob.objects.get(submission=three_entries[-1])
    prompts = len(
        set(BattleJob.objects.exclude(items_total=0).values_list("items__prompt_sha256", flat=True))
    )

    first = start_cluster()
    try:
        wait_for(
            lambda: longest.items.filter(state=ItemState.DONE).count() >= 10,
            60,
            "the first cluster judged nothing",
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the whole cluster dies mid-job
        first.wait()
    running = BattleJob.objects.filter(status=JobStatus.RUNNING)
    assert running.exists()

    settings.PODIUM_JUDGE_STALE_SECONDS = 2
    wait_for(lambda: reap_stale_jobs() >= 1, 10, "the reaper never saw the dead worker")
    assert not BattleJob.objects.filter(status=JobStatus.RUNNING).exists()

    second = start_cluster()
    try:
        wait_for(
            lambda: not BattleJob.objects.filter(status__in=["queued", "running"]).exists(),
            90,
            "the second cluster did not finish the jobs",
        )
    finally:
        stop_cluster(second)

    assert stored_winners() == expected_winners()
    assert len(stored_winners()) == 48
    assert standin.calls <= prompts + CONCURRENCY
    assert sum(1 for count in standin.prompt_calls.values() if count > 1) <= CONCURRENCY
