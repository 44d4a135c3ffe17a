"""The entry admins' side of `accounts.roles.can_view_all_entries` (issue 11).

The site and the API find another person's entry only through
`submissions.selectors.submission_for_user`, which asks the predicate. The admin decides with
model permissions instead, so a staff user handed ``submissions.view_submission`` one by one
would read every entry there while the site and the API refused them. Mixed into every admin
that shows entries or their records (entries, runs, judge jobs, verdicts, the audit trail), this
makes the admin ask the same predicate first: the model permissions still apply on top of it
(a maintainer has exactly the role's), but they no longer suffice on their own.

It lives in `core`, whose audit trail is such an admin, and `core` sits below `accounts`: so
`accounts` installs its predicate here from its `ready()` (`entry_viewer_check`). Until it
does, nobody may see these admins: a forgotten hook closes them rather than opening them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from .hooks import Slot

entry_viewer_check = Slot("may see other people's entries: (user) -> bool")


def _may_view_all_entries(user: Any) -> bool:
    """`accounts.roles.can_view_all_entries`, as installed; False while it is not."""
    check = entry_viewer_check.callback
    return check is not None and bool(check(user))


class EntryViewersOnly:
    """For a ``ModelAdmin`` over other people's entries: nothing of it (its index entry, list,
    pages, actions) for someone `accounts.roles.can_view_all_entries` refuses."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _may_view_all_entries(request.user) and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _may_view_all_entries(request.user) and super().has_view_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _may_view_all_entries(request.user) and super().has_change_permission(request, obj)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        return queryset if _may_view_all_entries(request.user) else queryset.none()
