"""Roles: who may do what to other people's entries (issue 6).

Two roles, both on personal accounts, so everything a person does is attributable (the audit
trail records the actor; there is no shared maintainer login):

- **Staff for everything**: a superuser holds every permission and manages users, benchmarks,
  test sets and judge endpoints (the judge endpoint admin is for superusers only: an endpoint
  names the environment variable its key is read from), and may enter a model endpoint's key.
- **Maintainer**: a staff user (``is_staff``, which is what lets anyone into the admin) who is a
  member of the ``Maintainers`` group. The group holds exactly ``MAINTAINER_PERMISSIONS``: read
  the entries, their runs, the boards, the audit trail and the judge's records; move entries
  through verification; register a keyless model endpoint and start re-runs; rerun scoring and
  the judge. It adds, deletes and configures nothing else, cannot touch users or benchmarks,
  never sees or enters a key, and never sees a judge endpoint. ``change_submission`` is in the set only because the
  admin offers its actions on the change list to people who may change the model; the admin
  keeps every provenance field read-only, so the change permission edits presentation fields
  (links, team, authors) and nothing else.

To make someone a maintainer: tick "Staff status" on their user and add them to
``Maintainers``. A member who is not staff cannot reach the admin at all.

Who may see other people's entries (evaluate-only ones included) is one predicate,
``can_view_all_entries``: maintainers and superusers. The site's pages, the API and the entry
admins all ask it, so a staff user without the role sees exactly what any other signed-in
person sees (issue 11, docs/accounts.md "Who sees what").

The group is global. "Per benchmark where it matters" is not needed while one team runs every
benchmark; when it is, the predicates below are where an object check goes (a maintainer of
*this* benchmark), and the admin, views and API already ask them rather than the group.

The group and its permissions are created by ``accounts/migrations/0003_maintainers_group.py``
(``0004_maintainers_without_judge_endpoints`` takes ``judging.view_judgeendpoint`` away again,
``arena/migrations/0002_schedules_and_maintainers.py`` adds the battles' view permissions),
each migration keeping its own frozen copy of the list (a migration must not change meaning when this
module does). Changing the list therefore takes a new data migration; a test compares the
group with ``MAINTAINER_PERMISSIONS``, so the two cannot drift apart silently.
"""

from __future__ import annotations

from typing import Any

MAINTAINERS_GROUP = "Maintainers"

# Permission names as `app_label.codename`, the form `User.has_perm` takes. Plain strings, so
# this module imports no app (accounts sits below them all).
VERIFY_SUBMISSION = "submissions.verify_submission"
RERUN_EVALUATION = "submissions.rerun_evaluation"
RERUN_JUDGE = "judging.rerun_judgejob"

MAINTAINER_PERMISSIONS: frozenset[str] = frozenset(
    {
        # Read: the entries, their runs and boards, the audit trail, the judge's records. Not
        # the judge's endpoints: they name server secrets, and are superusers' (issue 10).
        "submissions.view_submission",
        "submissions.view_evaluation",
        "submissions.view_boardentry",
        "core.view_auditevent",
        "judging.view_judgejob",
        "judging.view_verdict",
        # The battles of pairwise-judged categories (arena's 0002), rerun with RERUN_JUDGE.
        "arena.view_battlejob",
        "arena.view_battle",
        # The admin's actions need it; provenance fields are read-only there (see above).
        "submissions.change_submission",
        # The work itself.
        VERIFY_SUBMISSION,
        RERUN_EVALUATION,
        RERUN_JUDGE,
    }
)


def is_maintainer(user: Any) -> bool:
    """Whether `user` may act as a maintainer: a staff user who may verify entries (a member
    of ``Maintainers``, or a superuser). An inactive user has no permissions at all."""
    return bool(
        getattr(user, "is_authenticated", False)
        and user.is_staff
        and user.has_perm(VERIFY_SUBMISSION)
    )


def can_view_all_entries(user: Any) -> bool:
    """May see other people's entries, evaluate-only ones included: their status pages, their
    runs, judge jobs and verdicts, in the site, the API and the admin alike (issue 11).

    The one predicate all three ask, so they cannot disagree: a maintainer (`is_maintainer`, the
    role above) or an active superuser. Staff status alone is not enough: it only opens the
    admin's door, and a staff user without the role gets the 404 anyone else gets. Nor is a
    model permission granted one by one (``view_submission`` on a user): the role is the unit.
    """
    if not (getattr(user, "is_authenticated", False) and user.is_active):
        return False
    return bool(user.is_superuser or is_maintainer(user))


def can_view_hidden_benchmarks(user: Any) -> bool:
    """May open a benchmark that is not public yet (its board, About page, API): the people who
    may see every entry, since a hidden benchmark is one they are preparing. Deliberately the
    same circle as `can_view_all_entries`, under its own name so the two can part later."""
    return can_view_all_entries(user)


def can_verify_entries(user: Any) -> bool:
    """May move entries along the verification workflow (nominate, contact, verify, ...)."""
    return bool(getattr(user, "is_authenticated", False) and user.has_perm(VERIFY_SUBMISSION))


def can_rerun_scoring(user: Any) -> bool:
    """May score anyone's predictions file again, against the active test set."""
    return bool(getattr(user, "is_authenticated", False) and user.has_perm(RERUN_EVALUATION))


def ensure_maintainers_group():
    """The Maintainers group with exactly `MAINTAINER_PERMISSIONS` (created if missing): for a
    database whose data was flushed after migrating (transactional tests), or to repair one."""
    from django.contrib.auth.models import Group, Permission
    from django.db.models import Q

    group, _ = Group.objects.get_or_create(name=MAINTAINERS_GROUP)
    query = Q()
    for name in MAINTAINER_PERMISSIONS:
        app_label, codename = name.split(".")
        query |= Q(content_type__app_label=app_label, codename=codename)
    group.permissions.set(Permission.objects.filter(query))
    return group
