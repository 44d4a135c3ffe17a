"""The task broker is chosen by configuration: the ORM by default, Redis with Q_REDIS_URL (the
broker that hands out again what a killed cluster held, core/task_broker.py)."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


def broker_round_trip(**env: str) -> subprocess.CompletedProcess[str]:
    """Enqueue a message and take it back through django-q2's broker, in a fresh process."""
    token = uuid.uuid4().hex
    script = (
        "import django; django.setup()\n"
        "from django_q.brokers import get_broker\n"
        f"broker = get_broker('podium-test-{token}')\n"
        "broker.enqueue('hello')\n"
        "tasks = broker.dequeue()\n"
        "payload = tasks[0][1] if tasks else None\n"
        "print(type(broker).__name__, payload.decode() if isinstance(payload, bytes) else payload)\n"
        "broker.acknowledge(tasks[0][0]); broker.delete_queue()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_q_redis_url_selects_the_redis_broker(redis_url):
    completed = broker_round_trip(Q_REDIS_URL=redis_url)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["RedeliveringRedis", "hello"]


def test_the_orm_broker_is_the_default(settings):
    if os.environ.get("Q_REDIS_URL"):
        pytest.skip("Q_REDIS_URL is set in this environment")
    assert settings.Q_CLUSTER["orm"] == "default"
    assert "redis" not in settings.Q_CLUSTER
