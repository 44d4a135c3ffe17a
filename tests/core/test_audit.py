import datetime

import pytest
from django.contrib.auth.models import AnonymousUser
from django.contrib.contenttypes.models import ContentType
from django.db import IntegrityError, transaction

from accounts.models import User
from core.audit import events_for, record
from core.models import AuditEvent
from tests.accounts.factories import UserFactory
from tests.core.factories import AuditEventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_record_writes_one_row_with_actor_target_and_data():
    actor = UserFactory(username="maintainer")
    target = UserFactory(username="submitter")

    event = record("accounts.user.suspended", actor=actor, target=target, note="spam")

    assert list(AuditEvent.objects.all()) == [event]
    event.refresh_from_db()
    assert event.actor == actor
    assert event.action == "accounts.user.suspended"
    assert event.content_type == ContentType.objects.get_for_model(User)
    assert event.object_id == str(target.pk)
    assert event.target == target
    assert event.target_repr == "submitter"
    assert event.data == {"note": "spam"}


def test_record_keeps_from_and_to_of_a_state_change():
    target = UserFactory()

    event = record(
        "accounts.user.renamed", actor=None, target=target, **{"from": "ada", "to": "grace"}
    )

    event.refresh_from_db()
    assert event.data == {"from": "ada", "to": "grace"}


def test_record_serialises_dates():
    event = record("core.clock.checked", actor=None, target=None, at=datetime.date(2026, 4, 15))

    event.refresh_from_db()
    assert event.data == {"at": "2026-04-15"}


def test_an_anonymous_actor_is_stored_as_the_system():
    event = record("core.page.viewed", actor=AnonymousUser(), target=None)

    assert event.actor is None


def test_an_action_without_target_has_no_content_type():
    event = record("core.schedules.installed", actor=None, target=None)

    event.refresh_from_db()
    assert (event.content_type, event.object_id, event.target_repr) == (None, "", "")
    assert event.target is None


@pytest.mark.parametrize(
    "action", ["", "verified", "submissions.verified", "Submissions.x.y", "a.b.", "a..b"]
)
def test_an_action_code_must_be_namespaced(action):
    with pytest.raises(ValueError, match=r"is not of the form 'app\.object\.verb'$") as raised:
        record(action, actor=None, target=None)

    assert str(raised.value) == f"audit action {action!r} is not of the form 'app.object.verb'"

    assert AuditEvent.objects.count() == 0


def test_an_unsaved_target_is_refused():
    with pytest.raises(ValueError, match="cannot audit an unsaved User"):
        record("accounts.user.created", actor=None, target=UserFactory.build())


def test_events_for_lists_the_rows_of_one_target_newest_first():
    first_target, other_target = UserFactory(), UserFactory()
    older = record("accounts.user.created", actor=None, target=first_target)
    record("accounts.user.created", actor=None, target=other_target)
    newer = record("accounts.user.renamed", actor=None, target=first_target)

    assert list(events_for(first_target)) == [newer, older]


def test_a_half_named_target_is_refused_by_the_database():
    with pytest.raises(IntegrityError), transaction.atomic():
        AuditEventFactory(content_type=ContentType.objects.get_for_model(User), object_id="")


def test_the_factory_makes_a_valid_row():
    event = AuditEventFactory()

    assert str(event) == "core.example.recorded"
    assert list(AuditEvent.objects.all()) == [event]
