"""Reads for the entry page: what a viewer may see about the entry's model endpoint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from submissions.models import Submission

from .models import ModelEndpoint
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
