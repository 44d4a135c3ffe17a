"""The re-run's admin: registering an endpoint (never showing a key), the start action, the
report on a job's page and its "Verify this entry" button, and who may use them."""

import os
import re
import subprocess
import sys

import pytest

from submissions.enums import BoardKind, VerificationStatus
from submissions.models import BoardEntry
from tests.accounts.factories import UserFactory
from tests.submissions.factories import scored_entry
from verifying import services
from verifying.enums import RerunStatus
from verifying.models import ModelEndpoint, RerunJob

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SECRET = "sk-model-do-not-show-0123456789"


@pytest.fixture
def logged_in(client, maintainer):
    client.force_login(maintainer)
    return client


def endpoint_form(submission, **fields):
    return {
        "submission": submission.pk,
        "base_url": "http://127.0.0.1:9/v1",
        "model": "surgvlm-7b",
        "concurrency": 2,
        "max_attempts": 3,
        "timeout_seconds": 5,
        **fields,
    }


def test_a_superuser_enters_the_key_once_and_it_is_never_shown_again(
    logged_in, access_granted, maintainer
):
    response = logged_in.post(
        "/admin/verifying/modelendpoint/add/",
        endpoint_form(access_granted, api_key=SECRET),
        follow=True,
    )

    assert response.status_code == 200
    endpoint = ModelEndpoint.objects.get()
    assert (endpoint.submission, endpoint.is_active, endpoint.has_api_key) == (
        access_granted,
        True,
        True,
    )
    assert endpoint.origin == endpoint.api_key_origin == "http://127.0.0.1:9"
    page = logged_in.get(f"/admin/verifying/modelendpoint/{endpoint.pk}/change/").content.decode()
    listing = logged_in.get("/admin/verifying/modelendpoint/").content.decode()
    stamp = f"set on {endpoint.api_key_set_at:%Y-%m-%d %H:%M} UTC"
    assert f'<div class="readonly">{stamp}</div>' in page
    assert f'<td class="field-key_status">{stamp}</td>' in listing
    # The key field is a password input that renders no value.
    assert '<input type="password" name="api_key" autocomplete="new-password"' in page
    for shown in (page, listing, response.content.decode()):
        assert SECRET not in shown
        assert endpoint.api_key_encrypted not in shown


def test_the_start_action_queues_a_rerun_and_refusals_are_messages(
    logged_in, endpoint, access_granted, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        response = logged_in.post(
            "/admin/verifying/modelendpoint/",
            {"action": "start_rerun_action", "_selected_action": [endpoint.pk]},
            follow=True,
        )
    job = RerunJob.objects.get()
    assert job.state == RerunStatus.QUEUED
    # The whole "Re-run #N of <entry>" is the link (issue 32: it was the digit alone), and the
    # queued job's page follows it, reloading itself while it runs.
    assert (
        f'<a href="/admin/verifying/rerunjob/{job.pk}/change/">Re-run #{job.pk} of '
        f"{endpoint.submission}</a> queued: 5 questions; its page follows it."
    ) in response.content.decode()
    page = logged_in.get(f"/admin/verifying/rerunjob/{job.pk}/change/").content.decode()
    assert '<meta http-equiv="refresh" content="5">' in page
    assert "this page reloads every 5 s until it ends" in page

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
    # The report's five columns scroll inside their box on a phone (they pushed the page to
    # 465 px at 390), as the submissions' wide tables do (static/css/admin.css).
    assert re.search(
        r'<div class="admin-table-scroll"[^>]*>\s*<table>\s*<thead>\s*<tr><th>Metric', page
    )
    assert 'value="Verify this entry" form="verify-form"' in page
    # Above "Close" (issue 32: it sat below it), in a form of its own after the page's.
    assert page.index('value="Verify this entry"') < page.index(">Close</a>")
    assert '<form id="verify-form" method="post" action="/admin/verifying/rerunjob/' in page
    assert 'http-equiv="refresh"' not in page  # done: the page no longer reloads

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


def test_a_superuser_moving_an_endpoint_to_another_host_in_the_admin_drops_its_key(
    logged_in, access_granted
):
    logged_in.post(
        "/admin/verifying/modelendpoint/add/", endpoint_form(access_granted, api_key=SECRET)
    )
    endpoint = ModelEndpoint.objects.get()
    form = endpoint_form(access_granted, base_url="https://elsewhere.example.org/v1")
    del form["submission"]

    response = logged_in.post(f"/admin/verifying/modelendpoint/{endpoint.pk}/change/", form)

    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.base_url, endpoint.has_api_key, endpoint.key_status) == (
        "https://elsewhere.example.org/v1",
        False,
        "needed, not entered",
    )


def test_the_endpoint_form_picks_the_entry_by_name_team_and_benchmark(
    logged_in, access_granted, medvidbench
):
    access_granted.team_name = "Surgical AI Lab"
    access_granted.save(update_fields=["team_name"])
    waiting = scored_entry(medvidbench, "Still community", {"CVS_acc": 0.5})

    page = logged_in.get(
        f"/admin/verifying/modelendpoint/add/?submission={access_granted.pk}"
    ).content.decode()

    assert "vForeignKeyRawIdAdminField" not in page
    options = re.findall(r'<option value="(\d*)"( selected)?>([^<]*)</option>', page)
    assert options == [
        ("", "", "- Select an option -"),
        (
            str(access_granted.pk),
            " selected",
            "SurgVLM — Surgical AI Lab · MedVidBench · Model access granted",
        ),
    ]
    assert waiting.model_name not in page


def refusal(response):
    """The error message of a page, as HTML."""
    return re.search(r'<li class="error">(.*?)</li>', response.content.decode(), re.S).group(1)


def bulk_verify(client, submission):
    return client.post(
        "/admin/submissions/submission/",
        {"action": "verify", "_selected_action": [submission.pk]},
        follow=True,
    )


def test_a_refused_verify_names_the_missing_step_and_links_to_it(
    logged_in, access_granted, maintainer, django_capture_on_commit_callbacks
):
    pk = access_granted.pk
    # No endpoint yet: register one (the form with the entry picked).
    assert refusal(bulk_verify(logged_in, access_granted)).endswith(
        f'Next step: <a href="/admin/verifying/modelendpoint/add/?submission={pk}">'
        "register the model&#x27;s endpoint</a>."
    )

    # An endpoint: start the re-run (the entry's endpoints, where the action is).
    services.register_endpoint(
        access_granted, actor=maintainer, base_url="http://127.0.0.1:9/v1", model="surgvlm-7b"
    )
    assert refusal(bulk_verify(logged_in, access_granted)).endswith(
        f'Next step: <a href="/admin/verifying/modelendpoint/?submission__id__exact={pk}">'
        "start a re-run with surgvlm-7b (the action “Start a re-run with this endpoint”)</a>."
    )

    # A re-run not done yet: the report's page says what is missing and where it will be.
    with django_capture_on_commit_callbacks(execute=False):
        job = services.start_rerun(access_granted, actor=maintainer)
    response = logged_in.post(f"/admin/verifying/rerunjob/{job.pk}/verify/", follow=True)
    assert refusal(response) == (
        f"Re-run {job.pk} is queued (0 of 5 answers), so there is no report to verify from yet. "
        f'Next step: <a href="/admin/verifying/rerunjob/{job.pk}/change/">wait for re-run '
        f"{job.pk} to finish (0 of 5 questions answered), then verify from its report</a>."
    )
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFYING


def test_a_refused_early_move_links_to_the_entry_in_the_list(logged_in, entry):
    response = logged_in.post(
        "/admin/submissions/submission/",
        {"action": "grant_access", "_selected_action": [entry.pk]},
        follow=True,
    )
    assert refusal(response).endswith(
        f'Next step: <a href="/admin/submissions/submission/?id__exact={entry.pk}">'
        "nominate it (the action “Nominate for the Official board”)</a>."
    )
    page = logged_in.get(f"/admin/submissions/submission/?id__exact={entry.pk}").content
    assert b"1 submission" in page  # the link's list holds just that entry


def test_the_entry_page_shows_the_next_step(logged_in, access_granted):
    page = logged_in.get(f"/admin/submissions/submission/{access_granted.pk}/change/")
    assert (
        f'<a href="/admin/verifying/modelendpoint/add/?submission={access_granted.pk}">'
        "register the model&#x27;s endpoint</a>"
    ) in page.content.decode()


def test_the_endpoint_form_refuses_an_entry_not_on_its_way_to_the_official_board(
    logged_in, medvidbench
):
    community = scored_entry(medvidbench, "Still community", {"CVS_acc": 0.5})
    response = logged_in.post(
        "/admin/verifying/modelendpoint/add/",
        {
            "submission": community.pk,
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "concurrency": 2,
            "max_attempts": 3,
            "timeout_seconds": 5,
        },
    )
    assert response.context["adminform"].form.errors == {
        "submission": ["Select a valid choice. That choice is not one of the available choices."]
    }
    assert not ModelEndpoint.objects.exists()


def test_the_endpoint_form_names_the_demos_stand_in_where_make_run_started_it(
    logged_in, settings, repo_root
):
    """Issue 32, point 8: the form's example was the web server's own port, and the docs a
    fixed port for the stand-in."""
    settings.PODIUM_DEMO_STANDIN_MODEL_URL = ""
    plain = logged_in.get("/admin/verifying/modelendpoint/add/").content.decode()
    assert "e.g. https://models.example.org/v1" in plain
    assert "127.0.0.1:8000" not in plain
    assert "stand-in model" not in plain

    settings.PODIUM_DEMO_STANDIN_MODEL_URL = "http://127.0.0.1:9766/v1"
    demo = logged_in.get("/admin/verifying/modelendpoint/add/").content.decode()
    assert (
        "In this demo the stand-in model (it plays back the demo's predictions files; not a "
        "real model) answers at <code>http://127.0.0.1:9766/v1</code>"
    ) in demo

    # The development settings take it from the port `make run` gives the stand-in.
    printed = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; "
         "print(settings.PODIUM_DEMO_STANDIN_MODEL_URL)"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.dev",
             "PODIUM_STANDIN_MODEL_PORT": "9766"},
        cwd=repo_root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert printed.stdout.strip() == "http://127.0.0.1:9766/v1"
