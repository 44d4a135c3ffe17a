"""Who may do what with a hosted evaluation request: plain predicates shared by the pages, the
API, the admin and the services.

Anyone signed in submits a model endpoint to a benchmark that takes them (the daily quota
applies, as to uploads). The public queue shows every published request without its address
or key. A request's own page (its progress, the failure's whole message, its endpoint's base
URL) is its owner's and the maintainers'; its owner or a maintainer cancels it. Nobody ever
sees the API key again: not the owner, not a superuser.
"""

from __future__ import annotations

from typing import Any

from accounts.roles import can_verify_entries, can_view_all_entries

from .enums import ACTIVE_REQUEST_STATES
from .models import HostedRequest


def _active(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False) and user.is_active)


def is_owner(user: Any, request: HostedRequest) -> bool:
    return _active(user) and request.owner_id == user.pk


def can_submit_request(user: Any) -> bool:
    return _active(user)


def can_view_request(user: Any, request: HostedRequest) -> bool:
    """The request's own page: its owner, and those who may see every entry."""
    return is_owner(user, request) or (_active(user) and can_view_all_entries(user))


def can_cancel_request(user: Any, request: HostedRequest) -> bool:
    """Cancel a queued or running request: its owner or a maintainer."""
    if request.state not in ACTIVE_REQUEST_STATES:
        return False
    return is_owner(user, request) or (_active(user) and can_verify_entries(user))


def shown_in_queue(user: Any, request: HostedRequest) -> bool:
    """The public queue lists published requests; an evaluate-only one only to those who may
    see its page."""
    return request.publish or can_view_request(user, request)
