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


def in_fresh_process(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + script],
        cwd=PROJECT_ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


COUNTING = """
from django_q.brokers import get_broker
from core.task_broker import broker_holds_no_task as holds_none
broker = get_broker()
seen = [holds_none()]
broker.enqueue('a task')
seen.append(holds_none())  # waiting
tasks = broker.dequeue()
seen += [holds_none(), holds_none(holding=1)]  # taken: the caller's own, or another's
broker.acknowledge(tasks[0][0])
seen.append(holds_none())
broker.delete_queue()
print(seen)
"""


def test_the_redis_broker_says_when_it_holds_no_task(redis_url):
    # The backstops' sign that the tasks of runs still queued were lost (docs/workers.md).
    completed = in_fresh_process(
        COUNTING, Q_REDIS_URL=redis_url, Q_NAME=f"podium-test-{uuid.uuid4().hex}"
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split("\n")[-2] == "[True, False, False, True, True]"


def test_an_unreachable_broker_is_never_taken_for_an_empty_one():
    completed = in_fresh_process(
        "from core.task_broker import broker_holds_no_task\nprint(broker_holds_no_task())",
        Q_REDIS_URL="redis://127.0.0.1:9/0",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "False"
    assert "could not say how many tasks it holds" in completed.stderr
