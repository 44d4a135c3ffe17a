"""The migration away from `ModelEndpoint.api_key_env`: an endpoint that named an environment
variable keeps its row but no key, flagged so a re-run waits for the key to be entered; the
variable's value is never copied into the database."""

import pytest
from django.db import connection

from tests.migrating import migrate, migrate_to_latest
from tests.submissions.factories import SubmissionFactory
from verifying.models import ModelEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

BEFORE = [("verifying", "0002_schedules")]
AFTER = [("verifying", "0003_encrypted_api_key_bound_to_its_host")]


def test_an_endpoint_that_named_a_variable_is_kept_without_a_key_and_flagged(monkeypatch):
    monkeypatch.setenv("SURGVLM_KEY", "sk-from-the-environment-0123456789")
    submission = SubmissionFactory()
    old = migrate(BEFORE).get_model("verifying", "ModelEndpoint")
    named = old.objects.create(
        submission_id=submission.pk,
        base_url="https://models.example.org/v1",
        model="surgvlm-7b",
        api_key_env="SURGVLM_KEY",
        is_active=False,
    )
    keyless = old.objects.create(
        submission_id=submission.pk, base_url="http://127.0.0.1:9/v1", model="m", api_key_env=""
    )
    try:
        migrate(AFTER)
    finally:
        migrate_to_latest()

    rows = {
        endpoint.pk: (endpoint.has_api_key, endpoint.missing_key, endpoint.key_status)
        for endpoint in ModelEndpoint.objects.all()
    }
    assert rows == {
        named.pk: (False, True, "needed, not entered"),
        keyless.pk: (False, False, "not set"),
    }
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ModelEndpoint._meta.db_table}")
        stored = " ".join(str(value) for row in cursor.fetchall() for value in row)
    assert "sk-from-the-environment" not in stored
    assert "SURGVLM_KEY" not in stored
