"""Stopping a server or worker cluster a test (or a bench script) started in its own process
group, whatever state it is in."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess


def stop_process_group(process: subprocess.Popen, *, timeout: float = 20) -> None:
    """SIGTERM to the main process alone (a django-q2 cluster or gunicorn then stops its
    children cleanly in about a second; signalling the whole group at once leaves a cluster
    hanging until the SIGKILL), SIGKILL after `timeout`, then SIGKILL to any child left in the
    group. `process` must have been started with `start_new_session=True`."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    with contextlib.suppress(ProcessLookupError):  # any child left behind
        os.killpg(process.pid, signal.SIGKILL)
