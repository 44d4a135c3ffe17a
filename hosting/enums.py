"""The states of a hosted evaluation request and of its items, and why a request failed.

A request moves through the engine's job states (`inference.enums`: queued -> running ->
done; running -> queued when a worker's time slice ends or a stalled worker's request is
handed out again; failed or cancelled end it). It is never held: a question whose every answer
was unusable is answered "" (the predictions file has a row for every question, and the
entry's format report counts it), as in a verification re-run. Its one writer is
`hosting.services.set_request_status`, which also writes `failure`, the reason as a code.
"""

from __future__ import annotations

from django.db import models

from inference.enums import ACTIVE_JOB_STATES as ACTIVE_REQUEST_STATES
from inference.enums import JobStatus as RequestStatus

__all__ = [
    "ACTIVE_REQUEST_STATES",
    "REQUEST_STATES",
    "Failure",
    "ItemState",
    "QueueState",
    "RequestStatus",
]

# Every job state but "held" (see the module docstring), in the enum's order.
REQUEST_STATES = tuple(state for state in RequestStatus if state != RequestStatus.HELD)


class ItemState(models.TextChoices):
    """One question of a request (the engine's item states, in this app's words)."""

    PENDING = "pending", "Pending"
    DONE = "done", "Answered"
    FAILED = "failed", "No usable answer after every attempt"


class Failure(models.TextChoices):
    """Why a request failed, in the words the public queue shows; the request's `message`
    says what to do (the owner's page and the API show it whole)."""

    KEY_REFUSED = "key_refused", "the endpoint refused the API key (401/403)"
    MODEL_NOT_FOUND = "model_not_found", "model not found at the endpoint (404)"
    ENDPOINT_REFUSED = "endpoint_refused", "the endpoint refused the request"
    UNREACHABLE = "unreachable", "the endpoint is unreachable"
    TOKEN_CAP = "token_cap", "the token cap was reached: nothing was published"
    NOT_HOSTED = "not_hosted", "the benchmark no longer evaluates model endpoints"
    MEDIA_MISSING = "media_missing", "the benchmark's media are missing on the server"
    ENTRY_REFUSED = "entry_refused", "the answers were not accepted as an entry"
    INTERRUPTED = "interrupted", "its worker stopped too often"
    INTERNAL_ERROR = "internal_error", "an internal error stopped it"


# The failures that are Podium's, not the submitter's: such a request does not count against
# the daily quota (as a run the platform fails, `submissions.services.evaluations_used_today`).
PLATFORM_FAILURES = frozenset(
    {Failure.MEDIA_MISSING, Failure.INTERRUPTED, Failure.INTERNAL_ERROR, Failure.NOT_HOSTED}
)


class QueueState(models.TextChoices):
    """What the public queue shows for a category of a request (or the whole request on a
    benchmark without categories), MEDIC's words."""

    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"
