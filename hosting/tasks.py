"""django-q2 entry points: take a primary key, call one service."""

from __future__ import annotations

from . import runner, services
from .config import slice_seconds


def task_run_hosted_request(request_id: int) -> str:
    """Work on a hosted evaluation for one time slice (well inside the cluster's timeout); the
    request queues itself again while questions are left."""
    request = runner.run_request(request_id, time_budget=slice_seconds())
    return request.status if request is not None else "not claimed"


def task_reap_hosted_requests() -> int:
    return services.reap_stale_requests(as_task=True)
