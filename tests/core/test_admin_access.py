"""The entry admins' guard (core/admin_access.py): it asks the role `accounts` installs, and
stays closed while nothing is installed (core sits below accounts and imports none of it)."""

import pytest

from core.admin_access import entry_viewer_check
from core.audit import record
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

AUDIT_LIST = "/admin/core/auditevent/"


def test_the_audit_trail_is_closed_until_accounts_installs_the_role(client):
    superuser = UserFactory(username="root", is_staff=True, is_superuser=True)
    record("accounts.user.suspended", actor=superuser, target=UserFactory(username="spammer"))
    client.force_login(superuser)
    installed = entry_viewer_check.callback
    entry_viewer_check.set(None)
    try:
        closed = client.get(AUDIT_LIST)
    finally:
        entry_viewer_check.set(installed)
    opened = client.get(AUDIT_LIST)

    assert (closed.status_code, opened.status_code) == (403, 200)
    assert [event.target_repr for event in opened.context["cl"].result_list] == ["spammer"]
