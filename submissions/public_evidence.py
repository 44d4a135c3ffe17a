"""What an entry's place on the Official board rests on, as the public sees it (issue 33, point
4): for a verified upload the re-run the maintainers verified it on (read from `verifying`
through a hook, since this app never imports it), for an imported row where its numbers were
published, for an entry evaluated by Podium that its answers came from Podium's own calls.

The re-run's evidence holds only what its discrepancy report compared: when the re-run
finished, the test-set and scorer versions, per metric the submitted and re-run values, their
difference and the tolerance, and a forced verify's note. Never the endpoint's address or key,
the model's answers or the test set's references: those stay in `verifying` and the private
store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from core import audit

from .enums import SubmissionSource, VerificationStatus
from .hooks import rerun_evidence_reader
from .models import Submission

# The audit action `services.import_published_result` writes, whose note says where the
# numbers come from (`add_official_result --source` writes "added by a maintainer; source: ...").
IMPORTED_ACTION = "submissions.submission.imported"
SOURCE_MARKER = "source: "
# An import without a note says this (`import_published_result`'s default): no source known.
UNNAMED_SOURCE = "imported published result"

BASELINE_SOURCE = (
    "A baseline: the maintainers evaluated this off-the-shelf model themselves, so it needed "
    "no re-run."
)
HOSTED_SOURCE = (
    "Evaluated by Podium: Podium asked the model's endpoint every test question itself and "
    "scored its answers, so nothing self-reported needed a re-run."
)


@dataclass(frozen=True)
class EvidenceMetric:
    """One metric of the re-run's discrepancy report. `within` is None for a metric not
    compared (missing on either side: "pending")."""

    key: str
    label: str
    submitted: float | None
    rerun: float | None
    difference: float | None
    tolerance: float
    within: bool | None


@dataclass(frozen=True)
class RerunEvidence:
    """The re-run a verified upload was verified on, as the public sees it."""

    rerun_finished_at: datetime | None
    testset_version: int
    scorer_version: str
    forced: bool
    note: str  # the maintainer's reason for a forced verify; "" otherwise
    metrics: tuple[EvidenceMetric, ...]

    @property
    def tolerance(self) -> float | None:
        """The benchmark's tolerance, one for every metric of a report."""
        return self.metrics[0].tolerance if self.metrics else None

    @property
    def all_within(self) -> bool:
        compared = [metric for metric in self.metrics if metric.within is not None]
        return bool(compared) and all(metric.within for metric in compared)


def set_rerun_evidence_reader(reader: Callable[[Submission], RerunEvidence | None] | None) -> None:
    """Register the function that reads a verified upload's re-run (None: forget it, for tests)."""
    rerun_evidence_reader.set(reader)


def rerun_evidence(submission: Submission) -> RerunEvidence | None:
    """The re-run a verified upload was verified on, or None: not a verified upload, no
    verifying app, or no re-run recorded with its verify."""
    if (
        submission.verification_status != VerificationStatus.VERIFIED
        or submission.source != SubmissionSource.UPLOAD
        or submission.is_maintainer_result
        or rerun_evidence_reader.callback is None
    ):
        return None
    return rerun_evidence_reader.callback(submission)


def numbers_source(submission: Submission) -> str:
    """Where an entry's numbers came from, in words, when not from scoring an uploaded file:
    an imported row's source as the maintainers recorded it on import (the audit note;
    "not recorded" when they gave none), and for an entry evaluated by Podium that its answers
    came from Podium's own calls, for a baseline that the maintainers ran it. "" for any other
    upload (its numbers are Podium's scoring of its file; a verified one has its re-run)."""
    if submission.source == SubmissionSource.HOSTED:
        return HOSTED_SOURCE
    if submission.source != SubmissionSource.IMPORTED:
        return BASELINE_SOURCE if submission.is_baseline else ""
    event = audit.events_for(submission).filter(action=IMPORTED_ACTION).first()
    note = str((event.data or {}).get("note") or "").strip() if event is not None else ""
    if SOURCE_MARKER in note:
        note = note.partition(SOURCE_MARKER)[2].strip()
    if not note or note == UNNAMED_SOURCE:
        return "not recorded"
    return note
