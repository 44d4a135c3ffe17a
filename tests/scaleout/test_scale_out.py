"""Scale-out (issue 16, point 4): one web process, two qcluster workers on the Redis broker in
process groups of their own (standing in for two hosts), PostgreSQL, the private files in the
storage the settings name. 20 users upload 200 predictions files at once through the HTTP API;
one worker is killed (SIGKILL to its whole group) while it scores; the other scores the rest.
Every file is scored exactly once and the board is the ranking of the published entries.

How the killed worker's work comes back (docs/workers.md): the run it was scoring is handed
out again by the other worker's reaper (its worker's process is gone); the tasks it had taken
from Redis but not started are handed out again by the broker `Q_RETRY` seconds after it took
them (core/task_broker.py); a copy that arrives after its run was scored is refused by the
claim. The harness is tests/scaleout/harness.py; bench/scaleout.py measures the throughput.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid

import pytest
from django.db import connection
from django_q.models import Schedule

from accounts.services import create_api_token
from benchmark.models import Benchmark
from benchmark.scoring.ranking import rank_entries
from benchmark.selectors import active_testset, load_scoring_testset
from core.models import AuditEvent
from submissions.boards import board_built, board_changes, recompute_board
from submissions.enums import BoardKind, EvaluationStatus
from submissions.models import BoardEntry, Evaluation, Submission
from submissions.selectors import metric_specs, ranking_entry, ranking_policy
from tests.accounts.factories import UserFactory
from tests.live_gunicorn import database_env_for_test, gunicorn_server

from .harness import (
    Upload,
    delete_redis_queue,
    in_background,
    predictions_file,
    start_cluster,
    upload_all,
    wait_for,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="the web and worker processes must share the test database (PostgreSQL)",
    ),
    pytest.mark.skipif(
        not os.environ.get("PODIUM_TEST_REDIS_URL") and shutil.which("redis-server") is None,
        reason="needs Redis: install redis-server or set PODIUM_TEST_REDIS_URL (.ci/run does)",
    ),
]

USERS = 20
FILES_PER_USER = 10
FILES = USERS * FILES_PER_USER
# The kill comes once this many files are scored, while the worker holds a run.
KILL_AFTER_SCORED = 40
# Test-sized broker timings: a task runs for at most Q_TIMEOUT seconds, and one taken by the
# killed worker is handed out again Q_RETRY seconds after it was taken.
Q_TIMEOUT = 10
Q_RETRY = 12
# Not a throughput target (bench/scaleout.py measures and reports that): how long the run may
# take on a machine busy with other tests (the suite runs on every core) before the test calls
# it stuck. Every file scored once, by the two workers, is what the test asserts.
FINISH_SECONDS = 600


def host_folders(folder) -> dict[str, str]:
    """A process's own local folders, as on a machine of its own: nothing private is shared
    through them (the store is the bucket), and the test checks nothing private lands there."""
    return {
        "PODIUM_PRIVATE_DIR": str(folder / "private"),
        "PODIUM_PRIVATE_CACHE_DIR": str(folder / "cache"),
        "PODIUM_VAR_DIR": str(folder / "var"),
    }


def files_under(folder) -> list[str]:
    return sorted(path.name for path in folder.rglob("*") if path.is_file())


def worker_pid(evaluation_worker: str) -> int:
    return int(evaluation_worker.rpartition(":")[2])


def scored_count(benchmark) -> int:
    return Evaluation.objects.filter(
        submission__benchmark=benchmark, status=EvaluationStatus.SCORED
    ).count()


def kill_while_scoring(cluster, benchmark) -> set[int]:
    """Once KILL_AFTER_SCORED files are scored, SIGKILL `cluster`'s whole group at a moment
    when it holds a run in `scoring`; returns those runs. The group is frozen (SIGSTOP) while
    this looks, so what it holds cannot change between the look and the kill."""
    deadline = time.monotonic() + FINISH_SECONDS
    while time.monotonic() < deadline:
        if scored_count(benchmark) >= KILL_AFTER_SCORED and held_by(cluster):
            cluster.freeze()
            time.sleep(0.05)  # a commit already on its way lands before the look
            if held := held_by(cluster):
                cluster.kill()
                return held
            cluster.thaw()
        time.sleep(0.02)
    raise AssertionError("the worker to kill never held a run after the first files")


def held_by(cluster) -> set[int]:
    pids = cluster.look()
    return {
        pk
        for pk, worker in Evaluation.objects.filter(status=EvaluationStatus.SCORING).values_list(
            "pk", "worker"
        )
        if worker_pid(worker) in pids
    }


def test_two_workers_score_every_upload_once_and_one_survives_the_others_death(
    s3_storage, medvidbench, redis_url, tmp_path
):
    # The five-minute backstop (`task_reap_stale_evaluations`, created by a migration) would
    # send again every waiting run once the broker held no task, at the cluster's first
    # scheduler pass if an earlier test has not flushed it: without it, what brings the
    # killed worker's work back is the broker and the reaper alone, whatever ran before.
    Schedule.objects.all().delete()
    benchmark = medvidbench  # its test set imported into the bucket (`s3_storage` first)
    # Ten files a day per user; 200 bootstrap replicates (the toy benchmark's: still above the
    # 39 a 95% interval needs) keep each board's rank intervals, which every recompute queues,
    # to a fifth of MedVidBench's 1,000.
    Benchmark.objects.filter(pk=benchmark.pk).update(
        daily_submission_limit=FILES_PER_USER, bootstrap_replicates=200
    )
    benchmark.refresh_from_db()
    samples = load_scoring_testset(active_testset(benchmark)).samples
    tokens = [create_api_token(UserFactory(), name="scale-out")[1] for _ in range(USERS)]
    uploads = [
        [
            Upload(token, f"Scale model {user:02d}-{n}", predictions_file(samples, user * 100 + n))
            for n in range(FILES_PER_USER)
        ]
        for user, token in enumerate(tokens)
    ]
    queue_name = f"podium-scaleout-{uuid.uuid4().hex[:12]}"
    shared = {
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        **database_env_for_test(),
        **s3_storage.env(),
        "Q_REDIS_URL": redis_url,
        "Q_NAME": queue_name,
        "Q_WORKERS": "1",
        "Q_TIMEOUT": str(Q_TIMEOUT),
        "Q_RETRY": str(Q_RETRY),
        "LOG_LEVEL": "WARNING",
    }
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    env = {name: {**shared, **host_folders(hosts / name)} for name in ("web", "a", "b")}
    started = time.monotonic()
    try:
        with gunicorn_server(workers=2, env=env["web"], stderr=hosts / "web.log") as web:
            web_up_after = time.monotonic() - started
            survivor = start_cluster("a", {**os.environ, **env["a"]}, log=hosts / "a.log")
            victim = start_cluster("b", {**os.environ, **env["b"]}, log=hosts / "b.log")
            try:
                with in_background(lambda: upload_all(web.url, benchmark.slug, uploads)) as done:
                    held = kill_while_scoring(victim, benchmark)
                    killed_after = time.monotonic() - started
                    answers = done()
                uploaded_after = time.monotonic() - started
                wait_for(
                    lambda: scored_count(benchmark) == FILES,
                    FINISH_SECONDS,
                    f"not every file was scored: {scored_count(benchmark)} of {FILES}",
                )
                # Every change is in the board: its own refresh built it, or a later one, or
                # the survivor's board reaper (a refresh the victim took down with it).
                wait_for(
                    lambda: board_built(benchmark.pk) >= board_changes(benchmark.pk),
                    FINISH_SECONDS,
                    "the board does not include every change",
                )
                finished_after = time.monotonic() - started
                survivor.look()
            finally:
                survivor.stop()
                if victim.process.poll() is None:
                    victim.stop()
    finally:
        delete_redis_queue(redis_url, queue_name)

    # Every upload was accepted, once.
    assert sorted((answer.status, answer.model_name) for answer in answers) == sorted(
        (201, upload.model_name) for user_uploads in uploads for upload in user_uploads
    ), [answer for answer in answers if answer.status != 201][:3]
    submissions = Submission.objects.filter(benchmark=benchmark)
    assert submissions.count() == FILES

    # One run per submission, each scored exactly once; none lost, none left in scoring.
    runs = list(
        Evaluation.objects.filter(submission__benchmark=benchmark).values_list(
            "pk", "submission_id", "status", "attempts", "worker"
        )
    )
    assert sorted(submission for _, submission, *_ in runs) == sorted(
        submissions.values_list("pk", flat=True)
    )
    assert {status for _, _, status, _, _ in runs} == {EvaluationStatus.SCORED}
    scored_audits = AuditEvent.objects.filter(action="submissions.evaluation.scored")
    assert sorted(scored_audits.values_list("object_id", flat=True)) == sorted(
        str(pk) for pk, *_ in runs
    )
    # The run the victim was scoring was taken over (a second attempt) by the survivor; every
    # other run was started once (a task the victim had taken but not started was handed out
    # again by the broker, and started then for the first time).
    attempts = {pk: count for pk, _, _, count, _ in runs}
    assert {pk for pk, count in attempts.items() if count != 1} == held
    assert all(attempts[pk] == 2 for pk in held)
    requeued = AuditEvent.objects.filter(
        action="submissions.evaluation.queued", data__note="requeued: its worker is gone"
    )
    assert sorted(requeued.values_list("object_id", flat=True)) == sorted(str(pk) for pk in held)
    scorers = {worker_pid(worker) for *_, worker in runs}
    assert scorers & victim.pids, "the victim scored nothing before it was killed"
    assert scorers & survivor.pids
    assert scorers <= victim.pids | survivor.pids
    assert not any(worker_pid(worker) in victim.pids for pk, *_, worker in runs if pk in held)

    # Every file is in the bucket, and none on any machine's disk: the test set was copied to
    # each machine's cache, where it was read (web: the uploads' checks; workers: scoring).
    test_set = active_testset(benchmark)
    assert s3_storage.object_keys() == sorted(
        [f"private/{test_set.file_name}"]
        + [f"private/{name}" for name in submissions.values_list("predictions_file", flat=True)]
    )
    for name in env:
        assert files_under(hosts / name / "private") == []
        assert files_under(hosts / name / "cache") == [test_set.checksum]

    # The board: every published entry once, on the Community board, in the order of the pure
    # ranking of the published entries' runs, and what a fresh recompute writes.
    board = list(
        BoardEntry.objects.filter(benchmark=benchmark)
        .order_by("board", "rank")
        .values_list("submission_id", "board", "rank", "values")
    )
    assert len(board) == submissions.filter(publish=True).count() == FILES
    assert {kind for _, kind, _, _ in board} == {BoardKind.COMMUNITY}
    metrics = list(benchmark.metrics.all())
    entries = [
        ranking_entry(run.submission_id, run.submission.model_name, run.metrics, metrics)
        for run in Evaluation.objects.filter(submission__benchmark=benchmark).select_related(
            "submission"
        )
    ]
    ranked = rank_entries(entries, metric_specs(metrics), ranking_policy(benchmark))
    assert [(submission, rank) for submission, _, rank, _ in board] == [
        (row.key, row.rank) for row in ranked
    ]
    fresh = recompute_board(Benchmark.objects.get(pk=benchmark.pk))
    assert [(row.submission_id, row.board, row.rank, row.values) for row in fresh] == board

    print(
        f"\nscale-out: {FILES} files from {USERS} users; web up after {web_up_after:.1f} s, "
        f"uploads done after "
        f"{uploaded_after:.1f} s, worker killed after {killed_after:.1f} s holding run(s) "
        f"{sorted(held)}, all scored after {finished_after:.1f} s "
        f"({FILES / finished_after:.1f} files/s from the first upload)"
    )
