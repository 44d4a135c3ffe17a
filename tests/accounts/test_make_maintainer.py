"""`manage.py make_maintainer` (issue 13, point 14): the role docs/maintainers.md describes,
given from the shell like createsuperuser, audited, idempotent."""

import pytest
from django.core.management import CommandError, call_command

from accounts.roles import MAINTAINERS_GROUP, can_verify_entries
from core.models import AuditEvent
from tests.accounts.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_an_account_becomes_a_maintainer_not_a_superuser(capsys):
    user = UserFactory(username="sam")

    call_command("make_maintainer", "sam")

    user.refresh_from_db()
    assert user.is_staff
    assert not user.is_superuser
    assert user.groups.filter(name=MAINTAINERS_GROUP).exists()
    assert can_verify_entries(user)
    assert "sam is a maintainer" in capsys.readouterr().out
    assert AuditEvent.objects.filter(action="accounts.user.made_maintainer").count() == 1
    call_command("make_maintainer", "sam")  # again: nothing changes, nothing more is audited
    assert AuditEvent.objects.filter(action="accounts.user.made_maintainer").count() == 1


def test_create_makes_the_account_with_a_checked_password(monkeypatch, django_user_model):
    monkeypatch.setenv("PODIUM_MAINTAINER_PASSWORD", "short")
    with pytest.raises(CommandError, match="too short"):
        call_command("make_maintainer", "new", "--create")
    assert not django_user_model.objects.filter(username="new").exists()

    monkeypatch.setenv("PODIUM_MAINTAINER_PASSWORD", "a-long-maintainer-password-7")
    call_command("make_maintainer", "new", "--create", "--email", "new@example.org")
    user = django_user_model.objects.get(username="new")
    assert user.check_password("a-long-maintainer-password-7")
    assert user.is_staff


def test_an_unknown_account_is_refused_without_create():
    with pytest.raises(CommandError, match="There is no account 'ghost'"):
        call_command("make_maintainer", "ghost")
