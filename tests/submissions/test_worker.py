"""The full background path with a real django-q2 cluster process on the test database."""

import time
from pathlib import Path

import pytest
from django.db import connection

from submissions import services
from submissions.enums import EvaluationStatus
from submissions.services import SubmissionDetails
from tests.accounts.factories import UserFactory

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="the worker process must share the test database (PostgreSQL)",
    ),
]
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def test_an_upload_is_scored_by_the_worker(cluster, benchmark, perfect_predictions):
    submission = services.create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="WorkerModel"),
        predictions=perfect_predictions,
    )
    evaluation = submission.evaluations.get()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        evaluation.refresh_from_db()
        if evaluation.state.has_scores or evaluation.state.is_terminal:
            break
        assert cluster.poll() is None, cluster.stderr.read().decode()
        time.sleep(0.5)
    assert evaluation.status == EvaluationStatus.SCORED, evaluation.error_message
    assert evaluation.metrics["TAG_mIoU@0.3"] == 1.0
    assert evaluation.attempts == 1
