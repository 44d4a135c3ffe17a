"""The Maintainers role: the group the migration creates holds exactly the permissions
`accounts.roles` lists (and nothing that adds, deletes, or touches users or benchmarks), and
the predicates agree with it."""

import pytest
from django.contrib.auth.models import AnonymousUser, Group

from accounts import roles
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def maintainer(**fields):
    user = UserFactory(**{"is_staff": True, **fields})
    user.groups.add(Group.objects.get(name=roles.MAINTAINERS_GROUP))
    return user


def test_the_migration_creates_the_group_with_exactly_the_listed_permissions():
    group = Group.objects.get(name=roles.MAINTAINERS_GROUP)

    held = {
        f"{app_label}.{codename}"
        for app_label, codename in group.permissions.values_list(
            "content_type__app_label", "codename"
        )
    }

    assert held == roles.MAINTAINER_PERMISSIONS
    assert sorted(held) == [
        "arena.view_battle",
        "arena.view_battlejob",
        "core.view_auditevent",
        "judging.rerun_judgejob",
        "judging.view_judgejob",
        "judging.view_verdict",
        "submissions.change_submission",
        "submissions.rerun_evaluation",
        "submissions.verify_submission",
        "submissions.view_boardentry",
        "submissions.view_evaluation",
        "submissions.view_submission",
    ]


def test_a_maintainer_cannot_add_delete_or_touch_users_and_benchmarks():
    user = maintainer()

    assert user.has_perms(roles.MAINTAINER_PERMISSIONS)
    forbidden = [
        "submissions.add_submission",
        "submissions.delete_submission",
        "submissions.change_evaluation",
        "submissions.delete_evaluation",
        "benchmark.change_benchmark",
        "benchmark.add_testset",
        "judging.change_judgeendpoint",
        "judging.view_judgeendpoint",
        "judging.add_judgeendpoint",
        "judging.delete_judgejob",
        "accounts.view_user",
        "accounts.change_user",
        "auth.change_group",
        "core.delete_auditevent",
    ]
    assert [name for name in forbidden if user.has_perm(name)] == []


@pytest.mark.parametrize(
    ("make_user", "expected"),
    [
        (lambda: maintainer(), True),
        (lambda: UserFactory(is_staff=True, is_superuser=True), True),
        # In the group but not staff: cannot reach the admin, so not a maintainer.
        (lambda: maintainer(is_staff=False), False),
        (lambda: UserFactory(is_staff=True), False),
        (lambda: UserFactory(), False),
        (lambda: maintainer(is_active=False), False),
    ],
    ids=["maintainer", "superuser", "group-not-staff", "staff-only", "user", "inactive"],
)
def test_is_maintainer_means_staff_with_the_role(make_user, expected):
    assert roles.is_maintainer(make_user()) is expected


def test_the_predicates_follow_the_permissions():
    member, staff = maintainer(), UserFactory(is_staff=True)

    assert (roles.can_verify_entries(member), roles.can_rerun_scoring(member)) == (True, True)
    assert (roles.can_verify_entries(staff), roles.can_rerun_scoring(staff)) == (False, False)


def test_an_anonymous_visitor_is_not_a_maintainer():
    anonymous = AnonymousUser()

    assert not roles.is_maintainer(anonymous)
    assert not roles.can_verify_entries(anonymous)
    assert not roles.can_rerun_scoring(anonymous)


def test_ensure_recreates_the_group_with_exactly_the_listed_permissions():
    Group.objects.filter(name=roles.MAINTAINERS_GROUP).delete()

    group = roles.ensure_maintainers_group()

    held = {
        f"{app_label}.{codename}"
        for app_label, codename in group.permissions.values_list(
            "content_type__app_label", "codename"
        )
    }
    assert held == roles.MAINTAINER_PERMISSIONS
    assert roles.ensure_maintainers_group().pk == group.pk  # idempotent
