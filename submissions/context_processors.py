"""`unread_notifications`: the header's count of the signed-in person's unread notifications
(issue 13). A callable the template calls where it shows the count (the header, for
signed-in people), once per page: other pages and anonymous visitors pay nothing."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest

from .notifications import unread_count


def unread_notifications(request: HttpRequest) -> dict[str, Any]:
    return {"unread_notifications": cache(lambda: unread_count(request.user))}
