"""The judge's admin: endpoints (never a key), read-only jobs with their failed items, the
rerun and cancel actions through the services, and who may use them."""

import pytest
from django.contrib.auth.models import Permission

from core.models import AuditEvent
from judging import services
from judging.enums import JobStatus
from judging.models import JudgeEndpoint, JudgeJob
from submissions.enums import EvaluationStatus
from submissions.models import Evaluation
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SECRET = "sk-test-do-not-show-0123456789"


@pytest.fixture
def superuser(client):
    user = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(user)
    return user


def get(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status
    return response.content.decode()


def act(client, action, jobs):
    return client.post(
        "/admin/judging/judgejob/",
        {"action": action, "_selected_action": [job.pk for job in jobs]},
        follow=True,
    )


@pytest.fixture
def failed_job(scored_run):
    """A job failed at once: its endpoint refused the connection."""
    JudgeEndpoint.objects.update(base_url="http://127.0.0.1:9/v1", max_attempts=1)
    job = services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    job.refresh_from_db()
    return job


# --- endpoints -----------------------------------------------------------------------------------


def test_the_endpoint_list_says_whether_the_key_is_set_and_never_shows_it(
    client, superuser, judged_benchmark, monkeypatch, settings
):
    settings.PODIUM_JUDGE_KEY_ENV_ALLOWLIST = ["PODIUM_TEST_JUDGE_KEY"]
    monkeypatch.setenv("PODIUM_TEST_JUDGE_KEY", SECRET)
    endpoint = JudgeEndpoint.objects.get()
    url = f"/admin/judging/judgeendpoint/{endpoint.pk}/change/"

    assert '<td class="field-api_key_status">not needed</td>' in get(
        client, "/admin/judging/judgeendpoint/"
    )
    JudgeEndpoint.objects.update(api_key_env="PODIUM_TEST_JUDGE_KEY")
    listing = get(client, "/admin/judging/judgeendpoint/")
    assert '<td class="field-api_key_status">set (PODIUM_TEST_JUDGE_KEY)</td>' in listing
    assert "standin-judge" in listing
    assert SECRET not in listing
    assert SECRET not in get(client, url)

    monkeypatch.delenv("PODIUM_TEST_JUDGE_KEY")
    assert "missing: PODIUM_TEST_JUDGE_KEY is not set" in get(client, url)


def endpoint_form(benchmark, **fields):
    return {
        "benchmark": benchmark.pk,
        "name": "openai",
        "is_active": "on",
        "notes": "",
        "base_url": "https://api.openai.com/v1",
        "model": "gpt-4.1",
        "api_key_env": "OPENAI_API_KEY",
        "temperature": "0",
        "concurrency": "10",
        "max_attempts": "5",
        "timeout_seconds": "30",
        "input_price_per_million": "2",
        "output_price_per_million": "8",
        **fields,
    }


def test_adding_an_active_endpoint_replaces_the_active_one_through_the_service(
    client, superuser, judged_benchmark
):
    response = client.post("/admin/judging/judgeendpoint/add/", endpoint_form(judged_benchmark))

    assert response.status_code == 302
    assert list(JudgeEndpoint.objects.values_list("name", "is_active").order_by("name")) == [
        ("openai", True),
        ("stand-in", False),
    ]
    assert (
        AuditEvent.objects.filter(action="judging.endpoint.created", actor=superuser).count() == 1
    )


def test_switching_the_endpoint_off_leaves_the_metrics_pending(client, superuser, scored_run):
    endpoint = JudgeEndpoint.objects.get()
    form = endpoint_form(
        endpoint.benchmark, base_url=endpoint.base_url, model="standin-judge", api_key_env=""
    )
    del form["is_active"], form["benchmark"], form["name"]

    response = client.post(f"/admin/judging/judgeendpoint/{endpoint.pk}/change/", form)

    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.is_active is False
    event = AuditEvent.objects.get(action="judging.endpoint.updated")
    assert (event.actor, event.data["is_active"]) == (superuser, False)
    assert "No LLM judge endpoint is configured" in services.judge_unavailable_reason(
        endpoint.benchmark
    )


# --- jobs ----------------------------------------------------------------------------------------


def test_the_job_list_shows_progress_tokens_and_the_run(client, superuser, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(
        items_done=7, items_failed=2, calls=9, prompt_tokens=1000, completion_tokens=234
    )

    listing = get(client, "/admin/judging/judgejob/")

    assert '<td class="field-progress">7+2/11</td>' in listing
    assert '<td class="field-tokens">1234</td>' in listing
    assert '<td class="field-submission_model_name">Captioner</td>' in listing
    assert (
        f'<td class="field-evaluation_link"><a href="/submissions/{scored_run.submission.pk}/">'
        f"run {scored_run.pk}</a></td>"
    ) in listing
    assert "/admin/judging/judgejob/add/" not in listing


def test_a_job_page_is_read_only_and_lists_its_failed_items(client, superuser, scored_run):
    JudgeEndpoint.objects.update(max_attempts=1)
    job = services.start_judge(scored_run, enqueue=False)
    bad = job.items.order_by("id").first()
    job.items.filter(pk=bad.pk).update(state="failed", attempts=1, last_error="<HTTP 500>")

    content = get(client, f"/admin/judging/judgejob/{job.pk}/change/")

    assert f"<tr><td><code>{bad.key}</code></td><td>1</td><td>&lt;HTTP 500&gt;</td></tr>" in content
    assert 'name="_save"' not in content
    assert client.post(f"/admin/judging/judgejob/{job.pk}/delete/").status_code == 403


def test_the_rerun_action_judges_a_complete_run_again_as_a_new_run(client, superuser, scored_run):
    done = services.run_job(services.start_judge(scored_run, enqueue=False).pk)

    response = act(client, "rerun", [done])

    copy = Evaluation.objects.exclude(pk=scored_run.pk).get()
    new_job = JudgeJob.objects.get(evaluation=copy)
    assert copy.state == EvaluationStatus.JUDGING
    assert new_job.requested_by == superuser
    assert f"Judge job(s) queued: {new_job.pk}." in response.content.decode()


def test_the_rerun_action_reports_what_it_refused(client, superuser, scored_run):
    done = services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    JudgeEndpoint.objects.update(is_active=False)

    content = act(client, "rerun", [done]).content.decode()

    assert "Not done: run" in content
    assert JudgeJob.objects.count() == 1


def test_the_cancel_action_stops_active_jobs_and_skips_finished_ones(
    client, superuser, scored_run, failed_job
):
    running = services.start_judge(scored_run, enqueue=False)

    content = act(client, "cancel", [running, failed_job]).content.decode()

    running.refresh_from_db()
    scored_run.refresh_from_db()
    assert running.state == JobStatus.CANCELLED
    assert scored_run.state == EvaluationStatus.SCORED
    assert f"Cancelled judge job(s): {running.pk}." in content
    assert f"Not done: job {failed_job.pk} is already failed" in content


def test_staff_without_the_permission_cannot_use_the_actions(client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    # A maintainer by the role's definition (staff who may verify) who may read the jobs but
    # was not given the judge's rerun permission.
    staff = UserFactory(is_staff=True)
    staff.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_judgejob", "verify_submission"])
    )
    client.force_login(staff)

    listing = get(client, "/admin/judging/judgejob/")
    act(client, "cancel", [job])

    assert 'value="cancel"' not in listing
    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED

    staff.user_permissions.add(Permission.objects.get(codename="rerun_judgejob"))
    client.force_login(staff)
    act(client, "cancel", [job])
    job.refresh_from_db()
    assert job.state == JobStatus.CANCELLED


def test_staff_with_the_job_permissions_but_not_the_role_are_refused(client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    staff = UserFactory(is_staff=True)
    staff.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_judgejob", "rerun_judgejob"])
    )
    client.force_login(staff)

    listing = client.get("/admin/judging/judgejob/")
    page = client.get(f"/admin/judging/judgejob/{job.pk}/change/")
    response = act(client, "cancel", [job])

    assert (listing.status_code, page.status_code, response.status_code) == (403, 403, 403)
    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED


def test_a_user_who_is_not_staff_is_sent_to_the_admin_sign_in(client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    user = UserFactory()
    user.user_permissions.add(Permission.objects.get(codename="rerun_judgejob"))
    client.force_login(user)

    response = client.post(
        "/admin/judging/judgejob/", {"action": "cancel", "_selected_action": [job.pk]}
    )

    assert response.status_code == 302
    assert response.url.startswith("/admin/login/")
    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED


def test_verdicts_are_searchable_and_read_only(client, superuser, scored_run):
    services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    verdict = scored_run.judge_jobs.get().items.first().verdict

    found = get(client, f"/admin/judging/verdict/?q={verdict.prompt_sha256}")

    assert f"{verdict.prompt_sha256[:12]}</a>" in found
    assert "1 result" in found
    assert "/admin/judging/verdict/add/" not in found
    assert 'name="_save"' not in get(client, f"/admin/judging/verdict/{verdict.pk}/change/")


def test_the_accept_action_asks_for_a_note_then_publishes_a_held_job(
    client, superuser, scored_run, standin
):
    from .test_services import hold_with_one_bad_item

    held, _ = hold_with_one_bad_item(scored_run, standin)
    running = services.start_judge(
        Evaluation.objects.create(
            submission=scored_run.submission,
            test_set=scored_run.test_set,
            status=EvaluationStatus.SCORED,
            metrics=scored_run.metrics,
        ),
        enqueue=False,
    )

    form = client.post(
        "/admin/judging/judgejob/",
        {"action": "accept_partial", "_selected_action": [held.pk, running.pk]},
    ).content.decode()
    assert '<textarea name="note" id="id_note" rows="3" cols="80" required></textarea>' in form
    held.refresh_from_db()
    assert held.state == JobStatus.HELD  # nothing happens before the note

    content = client.post(
        "/admin/judging/judgejob/",
        {
            "action": "accept_partial",
            "apply": "1",
            "note": "the caption is gibberish",
            "_selected_action": [held.pk, running.pk],
        },
        follow=True,
    ).content.decode()

    held.refresh_from_db()
    scored_run.refresh_from_db()
    assert held.state == JobStatus.DONE
    assert scored_run.state == EvaluationStatus.COMPLETE
    assert scored_run.result["counts"]["RC_llm"] == {"scored": 1, "total": 2}
    assert f"Accepted and published judge job(s): {held.pk}." in content
    assert f"Not done: job {running.pk}: Only a judge job waiting for a maintainer" in content
