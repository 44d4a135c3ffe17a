"""The audit trail: every human action (and every state change) leaves one row.

Services call ``record`` inside their own transaction, so the row commits or rolls back with
the change it describes:

    record(
        "benchmark.testset.activated",
        actor=user,
        target=test_set,
        **{"from": 1, "to": 2, "note": "v2 fixes three STG boxes"},
    )

(``from`` is a Python keyword, hence the ``**{...}`` spelling for state changes.)
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import QuerySet

from core.models import AuditEvent

# "<app>.<object>.<verb>", lowercase words joined by underscores: "submissions.verification.verified".
ACTION_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){2,}$")
TARGET_REPR_LENGTH = AuditEvent._meta.get_field("target_repr").max_length


def record(action: str, *, actor: Any, target: models.Model | None, **data: Any) -> AuditEvent:
    """Write one audit row and return it.

    ``actor`` is a user, or None for the system; an anonymous user is stored as None. ``target``
    must be saved (it needs a primary key), or None for an action on nothing in particular.
    ``data`` must be JSON-serialisable (dates, decimals and UUIDs are fine).

    A malformed action code or an unsaved target is a programming error: ``ValueError``.
    """
    if not ACTION_PATTERN.match(action):
        raise ValueError(f"audit action {action!r} is not of the form 'app.object.verb'")
    content_type = None
    object_id = target_repr = ""
    if target is not None:
        if target.pk is None:
            raise ValueError(f"cannot audit an unsaved {type(target).__name__}")
        content_type = ContentType.objects.get_for_model(target)
        object_id = str(target.pk)
        target_repr = str(target)[:TARGET_REPR_LENGTH]
    return AuditEvent.objects.create(
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        action=action,
        content_type=content_type,
        object_id=object_id,
        target_repr=target_repr,
        data=data,
    )


def events_for(target: models.Model) -> QuerySet[AuditEvent]:
    """The audit rows about ``target``, newest first (the model's ordering)."""
    return AuditEvent.objects.filter(
        content_type=ContentType.objects.get_for_model(target), object_id=str(target.pk)
    ).select_related("actor")
