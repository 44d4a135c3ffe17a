"""A hosted evaluation in a real django-q2 cluster, killed mid-run: the request is reaped,
picked up by a new cluster, continues from its stored answers and finishes into a scored
entry; no question is asked twice beyond those in flight at the kill, and nothing is left
running."""

import os
import signal
import time

import pytest
from django.db import connection

from hosting import services
from hosting.enums import ItemState, RequestStatus
from hosting.models import HostedRequest
from submissions.enums import EvaluationStatus
from submissions.models import Evaluation
from tests.submissions.conftest import start_cluster, stop_cluster

from .conftest import MODEL, details

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
        time.sleep(0.1)
    raise AssertionError(message)


def test_a_hosted_evaluation_survives_its_worker_being_killed(benchmark, owner, standin, settings):
    standin.latency = 0.1
    request = services.submit_request(
        benchmark,
        owner=owner,
        actor=owner,
        details=details("Survivor-7B"),
        base_url=standin.base_url,
        model=MODEL["strong"],
        concurrency=CONCURRENCY,
    )  # queued for the cluster on commit

    first = start_cluster()
    try:
        wait_for(
            lambda: request.items.filter(state=ItemState.DONE).count() >= 12,
            60,
            "the first cluster answered nothing",
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the whole cluster dies mid-run
        first.wait()
    request.refresh_from_db()
    assert request.state == RequestStatus.RUNNING
    answered_before = request.items.filter(state=ItemState.DONE).count()
    assert 12 <= answered_before < 56

    settings.PODIUM_HOSTED_STALE_SECONDS = 2
    wait_for(
        lambda: services.reap_stale_requests() == 1, 10, "the reaper never saw the dead worker"
    )
    request.refresh_from_db()
    assert (request.state, request.interruptions) == (RequestStatus.QUEUED, 1)

    second = start_cluster()
    try:
        wait_for(
            lambda: HostedRequest.objects.get(pk=request.pk).state == RequestStatus.DONE,
            60,
            "the second cluster did not finish the request",
        )
        request.refresh_from_db()
        wait_for(
            lambda: (
                Evaluation.objects.get(submission=request.submission_id).status
                == EvaluationStatus.COMPLETE
            ),
            60,
            "the cluster did not score the entry",
        )
    finally:
        stop_cluster(second)

    request.refresh_from_db()
    assert (request.items_done, request.items_failed, request.runs) == (56, 0, 2)
    asked_twice = [count for count in standin.key_calls.values() if count > 1]
    assert len(standin.key_calls) == 56
    assert len(asked_twice) <= CONCURRENCY  # only those in flight at the kill
    assert max(standin.key_calls.values()) <= 2
    run = Evaluation.objects.get(submission=request.submission_id)
    assert run.metrics == {"accuracy": 0.9}
    assert not HostedRequest.objects.filter(status=RequestStatus.RUNNING).exists()
