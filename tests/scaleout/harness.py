"""The scale-out run (issue 16, point 4), shared by tests/scaleout/test_scale_out.py and
bench/scaleout.py: one web process (gunicorn), qcluster workers on the Redis broker, each in a
process group of its own as if on a host of its own, PostgreSQL, and the private files where
the settings put them (a shared folder, or the S3 server when `private_files_env` names one).

Users upload through the real HTTP API, concurrently; the workers score on the real path (the
claim, the plugin's scorer, the replicates, the board recompute, the rank-interval tasks).
Everything here observes through the database and `/proc`; nothing patches the code under test.
Django must be set up (pytest-django, or the bench's `django.setup()`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import requests

from tests.processes import stop_process_group

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SUBMIT_PATH = "/api/v1/benchmarks/{slug}/submissions/"

# The five records of tests.benchmark.factories.small_ground_truth, one per kind of answer: a
# file of them is scored in milliseconds, so what the run measures is the platform's path
# (HTTP, storage, broker, claim, replicates, board), not the scorer's arithmetic.
QA_TYPES = ("tal", "stg", "next_action", "cvs_assessment", "video_summary_gpt")


def predictions_file(samples: Sequence, index: int) -> bytes:
    """The `index`-th of many distinct, well-formed predictions files for the small test set,
    with automatic metrics that vary (and tie) from file to file: a temporal span, a box, the
    next action, three CVS criteria; the summary (a judge metric, pending here) makes every
    file's bytes its own."""
    start = 1.0 + (index % 5) * 0.5
    end = 5.0 - (index // 5 % 4) * 0.5
    shift = (index % 7) * 3
    criteria = (index % 3, index // 3 % 3, index // 9 % 3)
    answers = {
        "tal": f"{start:.1f}-{end:.1f} seconds.",
        "stg": f"1.0 seconds: [{10 + shift}, {20 + shift}, {30 + shift}, {40 + shift}]",
        "next_action": "tying" if index % 4 else "cutting",
        "cvs_assessment": (
            f"Two structures: {criteria[0]}, Cystic plate: {criteria[1]}, "
            f"Hepatocystic triangle: {criteria[2]}"
        ),
        "video_summary_gpt": f"Model {index} says the surgeon dissects the cystic duct.",
    }
    rows = [
        {"id": sample.id, "qa_type": sample.qa_type, "prediction": answers[sample.qa_type]}
        for sample in samples
    ]
    return json.dumps(rows).encode()


# --- processes -------------------------------------------------------------------------------


def process_group(pgid: int) -> set[int]:
    """The pids of the live processes in process group `pgid` (Linux `/proc`)."""
    members = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 2 and int(fields[2]) == pgid:
            members.add(int(entry.name))
    return members


def cpu_seconds(pids: set[int]) -> float:
    """User and system CPU seconds used so far by the live processes `pids` (`/proc`)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / ticks


@dataclass
class Cluster:
    """One `manage.py qcluster` in a process group of its own (a stand-in for a host). `pids`
    collects every process seen in its group: a worker the guard respawned has a new pid."""

    name: str
    process: subprocess.Popen
    pids: set[int] = field(default_factory=set)

    def look(self) -> set[int]:
        self.pids |= process_group(self.process.pid)
        return self.pids

    def freeze(self) -> None:
        """SIGSTOP to the whole group: nothing in it runs until `thaw` (or `kill`)."""
        os.killpg(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.killpg(self.process.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL to the whole group: guard, pusher, monitor and workers die at once, as
        when a machine loses power."""
        self.look()
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        self.look()
        stop_process_group(self.process)


def start_cluster(name: str, env: dict[str, str], *, log: Path | None = None) -> Cluster:
    """`manage.py qcluster` with `env` (the whole environment), its output to `log`."""
    output = log.open("ab") if log else subprocess.DEVNULL
    try:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        if log:
            output.close()
    return Cluster(name=name, process=process)


def redis_queue_keys(redis_url: str, queue_name: str) -> list[bytes]:
    import redis

    connection = redis.from_url(redis_url)
    try:
        return sorted(connection.keys(f"django_q:{queue_name}:*"))
    finally:
        connection.close()


def delete_redis_queue(redis_url: str, queue_name: str) -> None:
    """Every key of the queue `queue_name` (its tasks and django-q2's cluster stats)."""
    import redis

    connection = redis.from_url(redis_url)
    try:
        keys = connection.keys(f"django_q:{queue_name}:*")
        if keys:
            connection.delete(*keys)
    finally:
        connection.close()


# --- uploads ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upload:
    token: str
    model_name: str
    content: bytes


@dataclass(frozen=True)
class Answer:
    model_name: str
    status: int
    body: dict
    seconds: float


def upload_all(
    base_url: str, slug: str, uploads_by_user: Sequence[Sequence[Upload]]
) -> list[Answer]:
    """Each user's files one after another, all users at once (a thread each), through the
    API's upload endpoint; every answer, in no particular order."""
    url = base_url + SUBMIT_PATH.format(slug=slug)

    def one_user(uploads: Sequence[Upload]) -> list[Answer]:
        answers = []
        with requests.Session() as session:
            for upload in uploads:
                started = time.monotonic()
                response = session.post(
                    url,
                    headers={"Authorization": f"Bearer {upload.token}"},
                    data={
                        "model_name": upload.model_name,
                        "institution": "Scale-out lab",
                        "contact_email": "scale@example.org",
                        "model_url": "https://example.org/model",
                    },
                    files={"predictions": ("predictions.json", upload.content, "application/json")},
                    timeout=120,
                )
                try:
                    body = response.json()
                except ValueError:
                    body = {"text": response.text[:500]}
                answers.append(
                    Answer(
                        upload.model_name, response.status_code, body, time.monotonic() - started
                    )
                )
        return answers

    with ThreadPoolExecutor(max_workers=len(uploads_by_user)) as pool:
        return [answer for answers in pool.map(one_user, uploads_by_user) for answer in answers]


@contextmanager
def in_background(action: Callable[[], object]) -> Iterator[Callable[[], object]]:
    """Run `action` in a thread; yields a function that waits for it and returns its result
    (or raises its error)."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = action()
        except BaseException as error:  # handed to the caller
            outcome["error"] = error

    thread = threading.Thread(target=run, name="uploads", daemon=True)
    thread.start()

    def result() -> object:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        return outcome["result"]

    try:
        yield result
    finally:
        thread.join(timeout=300)


def wait_for(condition: Callable[[], bool], timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(message)
        time.sleep(0.1)
