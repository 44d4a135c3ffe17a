"""Reads for the entry page: what a viewer may see about the entry's model endpoint, and the
public evidence of the re-run a verified upload was verified on (issue 33, point 4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models.fields.json import KeyTextTransform

from core import audit
from submissions.models import Submission
from submissions.public_evidence import EvidenceMetric, RerunEvidence

from .models import ModelEndpoint, RerunJob
from .permissions import can_register_endpoint, can_set_endpoint_key, is_owner


@dataclass(frozen=True)
class EndpointPanel:
    """The "Model endpoint for verification" box: the active endpoint (None: none yet), and
    whether the viewer may register one on the entry page (its owner, or a superuser)."""

    submission_id: int
    endpoint: ModelEndpoint | None
    can_register: bool


def endpoint_panel(submission: Submission, viewer: Any) -> EndpointPanel | None:
    """The panel for a viewer who may see the entry (the page checked that): None for an
    evaluate-only entry (never verified) or a viewer who is neither its owner nor a
    maintainer. Never carries the key: `ModelEndpoint.key_status` is what is shown."""
    if not submission.publish:
        return None
    if not (is_owner(viewer, submission) or can_register_endpoint(viewer, submission)):
        return None
    endpoint = submission.model_endpoints.filter(is_active=True).first()
    return EndpointPanel(
        submission_id=submission.pk,
        endpoint=endpoint,
        can_register=can_set_endpoint_key(viewer, submission)
        and can_register_endpoint(viewer, submission),
    )


# The audit action of a move to verified; its data's `evidence` is what the verify rested on
# (`submissions.verification.set_verification_status`, `verifying.evidence.rerun_evidence`).
VERIFIED_ACTION = "submissions.verification.verified"


def public_rerun_evidence(submission: Submission) -> RerunEvidence | None:
    """The re-run the entry's last verify rested on (its audit row names it) with its
    discrepancy report, as the public entry page and API show it; None when that verify named
    no re-run (a result of the maintainers' own, an entry evaluated by Podium, a verify from
    before re-runs were recorded) or the re-run is gone. Installed as
    `submissions.hooks.rerun_evidence_reader`. Reads the job's report and its test set only:
    not the endpoint (its address, its key), the answers or the predictions file."""
    event = audit.events_for(submission).filter(action=VERIFIED_ACTION).first()
    evidence = ((event.data or {}).get("evidence") or {}) if event is not None else {}
    rerun_id = evidence.get("rerun")
    if not isinstance(rerun_id, int):
        return None
    job = (
        RerunJob.objects.filter(pk=rerun_id, submission=submission)
        .select_related("test_set")
        # The scorer that scored the re-run's answers is in its result; the rest of the result
        # (per-dataset values, the format report) is not read.
        .annotate(result_scorer=KeyTextTransform("scorer_version", "result"))
        .only("finished_at", "report", "test_set", "test_set__version", "test_set__scorer_version")
        .first()
    )
    if job is None:
        return None
    report = job.report or {}
    tolerance = float(report.get("tolerance") or 0.0)
    forced = bool(evidence.get("forced"))
    return RerunEvidence(
        rerun_finished_at=job.finished_at,
        testset_version=job.test_set.version,
        scorer_version=job.result_scorer or job.test_set.scorer_version,
        forced=forced,
        note=str(event.data.get("note") or "") if forced and event is not None else "",
        metrics=tuple(
            EvidenceMetric(
                key=row["metric"],
                label=row.get("label") or row["metric"],
                submitted=row.get("self_reported"),
                rerun=row.get("rerun"),
                difference=row.get("difference"),
                tolerance=tolerance,
                within=row.get("within"),
            )
            for row in report.get("rows", [])
        ),
    )
