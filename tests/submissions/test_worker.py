"""The full background path with a real django-q2 cluster process on the test database."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
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


@pytest.fixture
def cluster(private_dir, benchmark):
    """`manage.py qcluster` in a child process, pointed at this test's database and folders."""
    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": (
            f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
            f"{database['PORT'] or 5432}/{database['NAME']}"
        ),
        "PODIUM_PRIVATE_DIR": str(settings.PODIUM_PRIVATE_DIR),
        "PODIUM_TESTSET_DIR": str(settings.PODIUM_TESTSET_DIR),
        "Q_WORKERS": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    yield process
    # TERM to the main process only: it stops its own workers (TERM to the whole group at
    # once leaves the cluster waiting); anything left after 20 s is killed.
    process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


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
