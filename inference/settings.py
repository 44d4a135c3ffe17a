"""The timing and retry settings of each kind of engine job (docs/inference.md).

A kind reads `PODIUM_<KIND>_<NAME>` where it is set, else the judge's `PODIUM_JUDGE_<NAME>`
(the judge was the first kind: every deployment's settings have its names), else the default:
`JUDGE.heartbeat_seconds()` is PODIUM_JUDGE_HEARTBEAT_SECONDS, `RERUN.heartbeat_seconds()` is
PODIUM_RERUN_HEARTBEAT_SECONDS or the judge's. A setting that is None counts as unset. Read at
each call, so a changed setting (a test's, a deployment's) takes effect at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings

from .client import (
    DEFAULT_OUTAGE_LIMIT_SECONDS,
    OUTAGE_PROBE_CAP_SECONDS,
    Backoff,
    Outage,
    OutageState,
)


@dataclass(frozen=True)
class KindSettings:
    """The settings of one kind of job: `prefix` "PODIUM_RERUN" reads PODIUM_RERUN_<NAME>, then
    `fallback`'s PODIUM_JUDGE_<NAME> (None: no fallback)."""

    prefix: str
    fallback: str | None = "PODIUM_JUDGE"

    def value(self, name: str, default: Any) -> Any:
        for prefix in (self.prefix, self.fallback):
            if prefix is None:
                continue
            found = getattr(settings, f"{prefix}_{name}", None)
            if found is not None:
                return found
        return default

    def slice_seconds(self) -> float:
        """How long a worker works on a job before it queues the job again: well inside the
        cluster's timeout, so no django-q2 timeout ever kills a job mid-flight."""
        return self.value("SLICE_SECONDS", settings.Q_CLUSTER["timeout"] * 0.75)

    def heartbeat_seconds(self) -> float:
        return self.value("HEARTBEAT_SECONDS", 5.0)

    def stale_after(self) -> timedelta:
        """A running job whose heartbeat is older than this has lost its worker."""
        return timedelta(seconds=self.value("STALE_SECONDS", 60.0))

    def max_runs(self) -> int:
        """How many times a job may be picked up after its worker died before it fails."""
        return self.value("MAX_RUNS", 20)

    def backoff(self) -> Backoff:
        return Backoff(base=self.value("BACKOFF_SECONDS", 1.0))

    def outage_limit_seconds(self) -> float:
        """How long the endpoint may stay unreachable (only transient failures, across time
        slices where the job keeps its outage) before the job fails."""
        return float(self.value("OUTAGE_LIMIT_SECONDS", DEFAULT_OUTAGE_LIMIT_SECONDS))

    def outage_probe_seconds(self) -> float:
        """The longest wait between two probes of an unreachable endpoint."""
        return float(self.value("OUTAGE_PROBE_SECONDS", OUTAGE_PROBE_CAP_SECONDS))

    def outage(self, endpoint_name: str, state: OutageState | None = None) -> Outage:
        """An outage tracker with this kind's limit, backoff base and probe cap; `state` resumes
        the outage a previous time slice persisted (None: a fresh clock)."""
        return Outage(
            limit_seconds=self.outage_limit_seconds(),
            base=self.backoff().base,
            cap=self.outage_probe_seconds(),
            state=state,
            endpoint_name=endpoint_name,
        )


JUDGE = KindSettings("PODIUM_JUDGE", fallback=None)
