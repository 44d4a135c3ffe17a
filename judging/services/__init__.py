"""The LLM judge's writes: configuring endpoints, starting a job, running it (in a worker or in
the foreground), finishing it, and reaping jobs whose worker died.

A job's life: `start_judge` builds its items from the run's predictions (spec 5) and moves the
run to `judging`; `run_job` claims the job, answers what it can from the verdict cache, sends
the rest with bounded concurrency, and writes each item's outcome as soon as it arrives; when no
item is pending it aggregates and publishes the three metrics (the run completes, the board
follows). A worker runs a job for a time slice and hands it back to the queue, so no django-q2
timeout ever kills it mid-flight; a worker that dies stops its heartbeat, and `reap_stale_jobs`
hands the job out again or fails it. A failed job returns the run to `scored`: the judge
metrics stay pending and the job can be rerun, paying only for what is not cached.

The package's modules: `endpoints` (settings and endpoints), `jobs` (start, the status writer,
finish, fail, cancel), `progress` (the counters), `runner` (a worker's time slice), `reaper`.
Other apps import the names below from `judging.services`.
"""

from django.utils import timezone

from .endpoints import (
    BULK_BATCH,
    active_endpoint,
    backoff,
    configure_endpoint,
    heartbeat_seconds,
    judge_unavailable_reason,
    max_runs,
    outage_limit_seconds,
    outage_probe_seconds,
    stale_after,
    worker_id,
)
from .jobs import (
    JUDGE_JOBS,
    _fail_job,
    accept_partial_judgement,
    active_job,
    cancel_job,
    enqueue_job,
    finish_job,
    rerun_judge,
    set_job_status,
    start_judge,
    start_judge_if_automatic,
)
from .progress import Progress, job_progress
from .reaper import reap_dead_workers_jobs, reap_stale_jobs
from .runner import run_job

__all__ = [
    "BULK_BATCH",
    "JUDGE_JOBS",
    "Progress",
    "_fail_job",
    "accept_partial_judgement",
    "active_endpoint",
    "active_job",
    "backoff",
    "cancel_job",
    "configure_endpoint",
    "enqueue_job",
    "finish_job",
    "heartbeat_seconds",
    "job_progress",
    "judge_unavailable_reason",
    "max_runs",
    "outage_limit_seconds",
    "outage_probe_seconds",
    "reap_dead_workers_jobs",
    "reap_stale_jobs",
    "rerun_judge",
    "run_job",
    "set_job_status",
    "stale_after",
    "start_judge",
    "start_judge_if_automatic",
    "timezone",
    "worker_id",
]
