"""Who may do what to a model endpoint (docs/verification.md, "Model endpoints and their
keys"). Plain predicates shared by the entry page, the admin and the services.

The API key is the model owner's credential: only the entry's owner and superusers enter,
replace or forget it, or move a keyed endpoint to another address. A maintainer sees that an
endpoint exists (and whether it has a key), registers one without a key (a public model, or a
server the authors opened to us) and starts re-runs.
"""

from __future__ import annotations

from typing import Any

from accounts.roles import can_verify_entries
from submissions.models import Submission

from .models import ModelEndpoint


def _active(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False) and user.is_active)


def is_owner(user: Any, submission: Submission) -> bool:
    return _active(user) and submission.owner_id == user.pk


def can_set_endpoint_key(user: Any, submission: Submission) -> bool:
    """Enter, replace or forget the API key of the entry's model endpoint."""
    return _active(user) and (user.is_superuser or is_owner(user, submission))


def can_register_endpoint(user: Any, submission: Submission) -> bool:
    """Register an endpoint for the entry (a key only with `can_set_endpoint_key`). The owner
    does so for a published entry (only published entries are verified)."""
    if not _active(user):
        return False
    if user.is_superuser or can_verify_entries(user):
        return True
    return is_owner(user, submission) and submission.publish


def can_change_endpoint(user: Any, endpoint: ModelEndpoint, *, base_url: bool = True) -> bool:
    """Change an endpoint in place (the admin). A maintainer may correct a keyless endpoint,
    and a keyed one's model name and limits, but never the address a key is sent to."""
    if can_set_endpoint_key(user, endpoint.submission):
        return True
    if not (_active(user) and can_verify_entries(user)):
        return False
    return not (base_url and endpoint.has_api_key)
