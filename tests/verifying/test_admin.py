"""The re-run's admin: registering an endpoint (never showing a key), the start action, the
report on a job's page and its "Verify this entry" button, and who may use them."""

import pytest

from submissions.enums import BoardKind, VerificationStatus
from submissions.models import BoardEntry
from tests.accounts.factories import UserFactory
from verifying import services
from verifying.enums import RerunStatus
from verifying.models import ModelEndpoint, RerunJob

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SECRET = "sk-model-do-not-show-0123456789"


@pytest.fixture
def logged_in(client, maintainer):
    client.force_login(maintainer)
    return client


def test_a_maintainer_registers_an_endpoint_and_the_key_is_never_shown(
    logged_in, access_granted, monkeypatch
):
    monkeypatch.setenv("SURGVLM_KEY", SECRET)
    response = logged_in.post(
        "/admin/verifying/modelendpoint/add/",
        {
            "submission": access_granted.pk,
            "base_url": "http://127.0.0.1:9/v1",
            "model": "surgvlm-7b",
            "api_key_env": "SURGVLM_KEY",
            "concurrency": 2,
            "max_attempts": 3,
            "timeout_seconds": 5,
        },
        follow=True,
    )
    assert response.status_code == 200
    endpoint = ModelEndpoint.objects.get()
    assert (endpoint.submission, endpoint.is_active) == (access_granted, True)
    page = logged_in.get(f"/admin/verifying/modelendpoint/{endpoint.pk}/change/").content.decode()
    assert "set (SURGVLM_KEY)" in page
    assert SECRET not in page


def test_the_start_action_queues_a_rerun_and_refusals_are_messages(
    logged_in, endpoint, access_granted, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        response = logged_in.post(
            "/admin/verifying/modelendpoint/",
            {"action": "start_rerun_action", "_selected_action": [endpoint.pk]},
            follow=True,
        )
    assert "queued: 5 questions" in response.content.decode()
    assert RerunJob.objects.get().state == RerunStatus.QUEUED

    response = logged_in.post(
        "/admin/verifying/modelendpoint/",
        {"action": "start_rerun_action", "_selected_action": [endpoint.pk]},
        follow=True,
    )
    assert "once the authors granted access; this entry is being verified" in (
        response.content.decode()
    )
    assert RerunJob.objects.count() == 1


def test_the_report_page_verifies_the_entry_in_one_click(
    logged_in, endpoint, access_granted, maintainer, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = services.start_rerun(access_granted, actor=maintainer, enqueue=False)
        services.run_job(job.pk)
    url = f"/admin/verifying/rerunjob/{job.pk}/change/"
    page = logged_in.get(url).content.decode()
    assert "Discrepancy report (tolerance ±0.01)" in page
    assert "<td>0.6667</td>" in page
    assert 'value="Verify this entry"' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(f"/admin/verifying/rerunjob/{job.pk}/verify/", follow=True)

    assert "is verified: it is on the Official board" in response.content.decode()
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFIED
    assert BoardEntry.objects.get(submission=access_granted).board == BoardKind.OFFICIAL
    assert 'value="Verify this entry"' not in logged_in.get(url).content.decode()


def test_staff_without_the_permission_may_not_verify(client, endpoint, access_granted):
    client.force_login(UserFactory(is_staff=True))
    job = services.start_rerun(access_granted, actor=None, enqueue=False)
    assert client.get("/admin/verifying/modelendpoint/").status_code == 403
    assert client.post(f"/admin/verifying/rerunjob/{job.pk}/verify/").status_code == 403
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFYING
