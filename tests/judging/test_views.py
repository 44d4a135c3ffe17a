"""The judge on the submission page: the panel in each state, its polling, and the start,
rerun and cancel buttons with their permissions."""

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from django.utils.html import escape
from django_q.models import OrmQ

from judging import services
from judging.enums import JobStatus
from judging.models import JudgeEndpoint, JudgeJob
from submissions.enums import EvaluationStatus
from submissions.models import Evaluation
from submissions.services import SubmissionDetails, create_submission
from tests.accounts.factories import UserFactory, maintainer_user
from tests.submissions.factories import EvaluationFactory, SubmissionFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

JUDGE_METRICS = ["DVC_llm", "VS_llm", "RC_llm"]
# The caption test set of conftest: 8 DVC items, 1 video summary, 2 region captions.
ITEMS = 11


def page(client, submission, status=200):
    response = client.get(f"/submissions/{submission.pk}/")
    assert response.status_code == status
    return response.content.decode()


def panel(client, submission, status=200):
    response = client.get(f"/submissions/{submission.pk}/judge/")
    assert response.status_code == status
    return response.content.decode()


def judge_cells(content):
    """The value cell of each judge metric in the status page's metrics table."""
    cells = {}
    for metric in JUDGE_METRICS:
        row = content.split(f"<code>{metric}</code>", 1)[1].split("</tr>", 1)[0]
        cells[metric] = row.split("<td", 1)[1].split(">", 1)[1].split("</td>", 1)[0]
    return cells


def table_rows(content, table_class):
    """The cells of each row of the table with that class, as HTML."""
    table = content.split(f'<table class="result {table_class}">', 1)[1].split("</table>", 1)[0]
    return [
        re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)
        for row in re.findall(r"<tr>(.*?)</tr>", table)
    ]


def start_form(submission, label="Start the judge"):
    return (
        f'<form method="post" action="/submissions/{submission.pk}/judge/start/">'
        f'<input type="hidden" name="csrfmiddlewaretoken"',
        f'<button type="submit" class="primary">{label}</button></form>',
    )


def has_start_form(content, submission, label="Start the judge"):
    opening, button = start_form(submission, label)
    return opening in content and button in content


def maintainer():
    """A maintainer: staff in the Maintainers group, who may see others' entries
    (`can_view_all_entries`) and rerun the judge."""
    return maintainer_user()


def verifier():
    """A maintainer by the role's definition (staff who may verify) without the judge's rerun
    permission: sees the entry, may not start its judge."""
    user = UserFactory(is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="verify_submission"))
    return user


@pytest.fixture
def owner_client(client, submitter):
    client.force_login(submitter)
    return client


@pytest.fixture
def submission(scored_run):
    return scored_run.submission


def set_progress(job, **counters):
    """What a worker's heartbeat writes (`_save_progress`), set explicitly by the test."""
    JudgeJob.objects.filter(pk=job.pk).update(**counters)


# --- the panel in each state ---------------------------------------------------------------------


def test_without_an_endpoint_the_page_says_so_and_shows_no_judge_number(owner_client, submission):
    JudgeEndpoint.objects.update(is_active=False)

    content = page(owner_client, submission)

    assert "No LLM judge endpoint is configured for this benchmark yet" in content
    assert judge_cells(content) == dict.fromkeys(JUDGE_METRICS, "pending")
    assert not has_start_form(content, submission)
    assert "hx-get" not in content.split('id="judge"', 1)[1]


def test_the_owner_sees_a_start_button_and_nobody_else_does(client, submitter, submission):
    client.force_login(submitter)
    owner_page = page(client, submission)
    assert "The caption metrics are pending until the LLM judge scores them. Start it" in owner_page
    assert has_start_form(owner_page, submission)
    assert judge_cells(owner_page) == dict.fromkeys(JUDGE_METRICS, "pending")

    client.force_login(verifier())  # sees the page, may not start the judge
    staff_page = page(client, submission)
    assert "the submitter or a maintainer starts it" in staff_page
    assert not has_start_form(staff_page, submission)

    client.force_login(UserFactory())
    page(client, submission, status=404)
    panel(client, submission, status=404)

    client.force_login(maintainer())
    assert has_start_form(panel(client, submission), submission)


def test_a_running_job_shows_a_progress_bar_from_its_counters(owner_client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    set_progress(
        job,
        status=JobStatus.RUNNING,
        items_total=2000,
        items_done=123,
        items_failed=4,
        calls=130,
        prompt_tokens=51_200,
        completion_tokens=3_456,
        cost=Decimal("0.1370"),
    )

    content = panel(owner_client, scored_run.submission)

    assert (
        f'<section id="judge" class="judge-panel judge-running" aria-live="polite" '
        f'hx-get="/submissions/{scored_run.submission.pk}/judge/" hx-trigger="every 2s" '
        f'hx-swap="outerHTML">'
    ) in content
    assert '<progress value="127" max="2000" aria-label="Captions judged">6%</progress>' in content
    assert '<span class="judge-count">123 of 2,000 judged, 4 failed</span>' in content
    assert "<dd>54,656 (51,200 prompt, 3,456 completion) in 130 calls</dd>" in content
    assert "<dt>Estimated cost</dt><dd>$0.1370</dd>" in content
    assert "<dt>Judge</dt><dd><code>standin-judge</code></dd>" in content
    assert f'action="/submissions/{scored_run.submission.pk}/judge/cancel/"' in content


def test_an_unreachable_judge_is_said_with_its_next_try_and_no_failure(owner_client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    since = datetime(2026, 12, 1, 10, 42, 7, tzinfo=UTC)
    set_progress(
        job,
        status=JobStatus.RUNNING,
        items_total=11_822,
        unreachable_since=since,
        next_try_at=services.timezone.now() + timedelta(seconds=29.2),
        last_transient_error="connection failed: Connection error.",
    )

    content = panel(owner_client, scored_run.submission)

    assert (
        '<p class="notice judge-outage" role="status">Judge unreachable since 10:42 UTC, '
        "retrying (next try in 30 s). Nothing is counted as failed meanwhile. "
        '<span class="muted">Last error: connection failed: Connection error.</span></p>'
    ) in content
    assert '<span class="judge-count">0 of 11,822 judged, 0 failed</span>' in content


def test_a_job_queued_between_slices_still_says_the_judge_is_unreachable(owner_client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    set_progress(
        job,
        items_total=10,
        unreachable_since=datetime(2026, 12, 1, 10, 42, tzinfo=UTC),
        next_try_at=services.timezone.now() - timedelta(seconds=3),
    )

    content = panel(owner_client, scored_run.submission)

    assert "Judge unreachable since 10:42 UTC, retrying (next try in 0 s)." in content
    assert "waiting for a worker" in content


def test_a_reachable_judge_says_nothing_about_outages(owner_client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    set_progress(job, status=JobStatus.RUNNING, items_total=10)

    assert "unreachable" not in panel(owner_client, scored_run.submission)


def test_a_held_job_waits_for_a_maintainer_with_the_metrics_pending(owner_client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    set_progress(
        job,
        status=JobStatus.HELD,
        items_total=2_472,
        items_done=2_460,
        items_failed=12,
        message="12 of 2,472 items got no usable verdict after 5 attempts each.",
    )

    content = panel(owner_client, scored_run.submission)

    assert "judge-panel judge-held" in content
    assert "<strong>Waiting for a maintainer</strong>" in content
    assert "<p>12 of 2,472 items got no usable verdict after 5 attempts each.</p>" in content
    assert "2,460 of 2,472 judged, 12 failed. The caption metrics stay pending meanwhile." in (
        content
    )
    assert "Decide on this job in the admin" not in content  # the submitter cannot

    client = owner_client
    client.force_login(maintainer())
    content = panel(client, scored_run.submission)
    assert f'<a href="/admin/judging/judgejob/{job.pk}/change/">Decide on this job' in content


def test_polling_the_panel_reads_the_job_counters_not_its_items(
    owner_client, scored_run, django_assert_num_queries
):
    services.start_judge(scored_run, enqueue=False)

    # The session, the user, the submission, its newest run, that run's newest job, and the
    # viewer's permissions (user, group): whatever the number of items.
    with django_assert_num_queries(7):
        content = panel(owner_client, scored_run.submission)

    assert f"0 of {ITEMS} judged" in content


def test_a_queued_job_without_a_price_shows_no_cost(owner_client, scored_run):
    services.start_judge(scored_run, enqueue=False)

    content = panel(owner_client, scored_run.submission)

    assert (
        f'<progress value="0" max="{ITEMS}" aria-label="Captions judged">0%</progress>' in content
    )
    assert f"0 of {ITEMS} judged, 0 failed" in content
    assert "waiting for a worker" in content
    assert "<dt>Queued</dt>" in content
    assert "Estimated cost" not in content


def test_a_failed_job_shows_its_message_and_the_owner_may_start_again(owner_client, scored_run):
    JudgeEndpoint.objects.update(base_url="http://127.0.0.1:9/v1", max_attempts=1)
    job = services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    job.refresh_from_db()
    assert job.state == JobStatus.FAILED

    content = page(owner_client, scored_run.submission)

    assert "<strong>The judge did not finish</strong>" in content
    assert f"<p>{escape(job.message)}</p>" in content
    assert "connection failed" in content
    assert has_start_form(content, scored_run.submission, "Start the judge again")
    assert judge_cells(content) == dict.fromkeys(JUDGE_METRICS, "pending")


def test_a_finished_job_shows_its_counts_and_stops_polling(client, submitter, scored_run):
    services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    client.force_login(submitter)

    content = panel(client, scored_run.submission)

    assert "hx-get" not in content
    assert f"{ITEMS} of {ITEMS} judged, 0 failed" in content
    assert table_rows(content, "judge-counts") == [
        ["Metric", "Items", "Judged", "Failed"],
        ["<code>DVC_llm</code>", "8", "8", "0"],
        ["<code>VS_llm</code>", "1", "1", "0"],
        ["<code>RC_llm</code>", "2", "2", "0"],
    ]
    assert "Rerun the judge" not in content  # maintainers only

    client.force_login(maintainer())
    assert f'action="/submissions/{scored_run.submission.pk}/judge/rerun/"' in panel(
        client, scored_run.submission
    )


def test_before_scoring_the_panel_only_polls(client, submitter, judged_benchmark, upload):
    submission = create_submission(
        judged_benchmark,
        owner=submitter,
        details=SubmissionDetails(model_name="Waiting"),
        predictions=upload(),
    )
    client.force_login(submitter)

    content = page(client, submission)

    # One live region polls for the run and its judge (the panel inside it does not poll).
    assert (
        f'<div id="live" class="live" aria-live="polite" '
        f'hx-get="/submissions/{submission.pk}/status/" hx-trigger="every 2s" '
        f'hx-swap="outerHTML">'
    ) in content
    # The run waits to be judged (the API says "waiting"); the page shows nothing yet.
    assert '<section id="judge" class="judge-panel judge-waiting">\n\n</section>' in content
    assert "LLM judge <span" not in content
    # The panel's own fragment, for a page that shows it alone, still polls itself.
    alone = panel(client, submission)
    assert f'hx-get="/submissions/{submission.pk}/judge/" hx-trigger="every 5s"' in alone


def test_an_imported_run_without_a_test_set_has_no_panel(client, submitter, judged_benchmark):
    submission = SubmissionFactory(benchmark=judged_benchmark, owner=submitter)
    EvaluationFactory(submission=submission, status=EvaluationStatus.COMPLETE, test_set=None)
    client.force_login(submitter)

    assert 'id="judge"' not in page(client, submission)
    assert panel(client, submission).strip() == ""


# --- start, rerun, cancel ------------------------------------------------------------------------


def post(client, submission, action):
    """Press the button; "cancel" on its confirmation page too (a first POST only asks)."""
    data = {"confirm": "yes"} if action == "cancel" else {}
    return client.post(f"/submissions/{submission.pk}/judge/{action}/", data, follow=True)


def test_starting_creates_a_job_and_moves_the_run_to_judging(
    owner_client, submitter, scored_run, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = post(owner_client, scored_run.submission, "start")

    job = JudgeJob.objects.get()
    scored_run.refresh_from_db()
    assert response.redirect_chain == [(f"/submissions/{scored_run.submission.pk}/", 302)]
    assert (job.evaluation, job.requested_by, job.state) == (scored_run, submitter, "queued")
    assert job.items_total == ITEMS
    assert scored_run.state == EvaluationStatus.JUDGING
    # On commit the job went to the queue (the ORM broker in tests), beside the boards' tasks.
    (task,) = [queued.task for queued in OrmQ.objects.all() if queued.task["group"] != "boards"]
    assert (task["func"], task["args"]) == ("judging.tasks.task_run_judge_job", (job.pk,))
    content = response.content.decode()
    assert "The LLM judge is queued; this page shows its progress" in content
    assert f"0 of {ITEMS} judged, 0 failed" in content
    # The page's one live region polls while the run is being judged.
    assert f'hx-get="/submissions/{scored_run.submission.pk}/status/" hx-trigger="every 2s"' in (
        content
    )


def test_a_refused_start_is_a_message_and_changes_nothing(owner_client, scored_run):
    JudgeEndpoint.objects.update(is_active=False)

    response = post(owner_client, scored_run.submission, "start")

    scored_run.refresh_from_db()
    assert JudgeJob.objects.count() == 0
    assert scored_run.state == EvaluationStatus.SCORED
    assert (
        '<li class="error">No LLM judge endpoint is configured for this benchmark yet'
        in response.content.decode()
    )


def test_a_complete_run_cannot_be_started_again_by_its_owner(owner_client, scored_run):
    services.run_job(services.start_judge(scored_run, enqueue=False).pk)

    response = post(owner_client, scored_run.submission, "start")

    assert JudgeJob.objects.count() == 1
    assert (
        '<li class="error">The judge runs on a scored run waiting for it; this one is complete.'
        in response.content.decode()
    )


def test_only_the_owner_or_a_maintainer_may_start(client, scored_run):
    submission = scored_run.submission
    client.force_login(UserFactory())
    assert client.post(f"/submissions/{submission.pk}/judge/start/").status_code == 404
    client.force_login(UserFactory(is_staff=True))  # staff without the role: a stranger here
    assert client.post(f"/submissions/{submission.pk}/judge/start/").status_code == 404
    client.force_login(verifier())
    assert client.post(f"/submissions/{submission.pk}/judge/start/").status_code == 403
    client.logout()
    response = client.post(f"/submissions/{submission.pk}/judge/start/")
    assert response.url == f"/accounts/login/?next=/submissions/{submission.pk}/judge/start/"
    assert JudgeJob.objects.count() == 0

    client.force_login(maintainer())
    assert client.post(f"/submissions/{submission.pk}/judge/start/").status_code == 302
    assert JudgeJob.objects.get().evaluation == scored_run


def test_the_buttons_take_posts_only(owner_client, submission):
    for action in ("start", "rerun", "cancel"):
        assert owner_client.get(f"/submissions/{submission.pk}/judge/{action}/").status_code == 405
    assert owner_client.post(f"/submissions/{submission.pk}/judge/").status_code == 405
    assert JudgeJob.objects.count() == 0


def test_a_maintainer_reruns_a_complete_run_as_a_new_run(client, submitter, scored_run):
    services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    submission = scored_run.submission
    client.force_login(submitter)
    assert client.post(f"/submissions/{submission.pk}/judge/rerun/").status_code == 403
    assert JudgeJob.objects.count() == 1

    client.force_login(maintainer())
    response = post(client, submission, "rerun")

    assert "The LLM judge is queued again" in response.content.decode()
    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.COMPLETE  # a run is never rewound
    copy = Evaluation.objects.exclude(pk=scored_run.pk).get()
    assert copy.state == EvaluationStatus.JUDGING
    assert JudgeJob.objects.filter(evaluation=copy, status=JobStatus.QUEUED).count() == 1


def test_the_owner_cancels_their_job_and_the_run_waits_again(owner_client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)

    response = post(owner_client, scored_run.submission, "cancel")

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.CANCELLED
    assert scored_run.state == EvaluationStatus.SCORED
    content = response.content.decode()
    assert "The judge job is cancelled; the caption metrics stay pending." in content
    assert "The last judge job was cancelled." in content
    assert has_start_form(content, scored_run.submission)


def test_cancelling_asks_first_and_the_first_post_changes_nothing(owner_client, scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    submission = scored_run.submission
    assert "Cancel the judge…</button>" in panel(owner_client, submission)

    response = owner_client.post(f"/submissions/{submission.pk}/judge/cancel/")

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert (job.state, scored_run.state) == (JobStatus.QUEUED, EvaluationStatus.JUDGING)
    assert response.status_code == 200
    content = response.content.decode()
    assert "<h1>Cancel the judge on Captioner?</h1>" in content
    assert f"The job has judged 0 of {ITEMS} items." in content
    assert '<input type="hidden" name="confirm" value="yes">' in content
    assert f'<a href="/submissions/{submission.pk}/#judge">No, keep it running</a>' in content
    # Any other answer than "yes" asks again.
    owner_client.post(f"/submissions/{submission.pk}/judge/cancel/", {"confirm": "no"})
    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED


def test_who_may_cancel(client, submitter, scored_run):
    submission = scored_run.submission
    rerun_by_maintainer = services.start_judge(scored_run, actor=maintainer(), enqueue=False)

    client.force_login(UserFactory())
    assert client.post(f"/submissions/{submission.pk}/judge/cancel/").status_code == 404
    client.force_login(submitter)  # not the owner's job: a maintainer requested it
    assert client.post(f"/submissions/{submission.pk}/judge/cancel/").status_code == 403
    assert 'judge/cancel/"' not in panel(client, submission)
    rerun_by_maintainer.refresh_from_db()
    assert rerun_by_maintainer.state == JobStatus.QUEUED

    client.force_login(maintainer())
    response = client.post(f"/submissions/{submission.pk}/judge/cancel/", {"confirm": "yes"})
    assert response.status_code == 302
    rerun_by_maintainer.refresh_from_db()
    assert rerun_by_maintainer.state == JobStatus.CANCELLED

    response = post(client, submission, "cancel")
    assert '<li class="error">No judge job is running on this submission.' in (
        response.content.decode()
    )


def test_a_refused_rerun_leaves_no_new_run(client, scored_run):
    services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    JudgeEndpoint.objects.update(is_active=False)
    client.force_login(maintainer())

    response = post(client, scored_run.submission, "rerun")

    assert '<li class="error">No LLM judge endpoint is configured' in response.content.decode()
    assert list(Evaluation.objects.values_list("pk", flat=True)) == [scored_run.pk]


def test_the_live_region_carries_the_run_from_scored_to_complete_in_one_response(
    client, submitter, scored_run, standin, django_capture_on_commit_callbacks
):
    """Issue 13: the status at the top, the metrics, the steps and the judge panel come in one
    fragment, so a poll never shows the judge done above a stale "judge pending"."""
    client.force_login(submitter)
    with django_capture_on_commit_callbacks(execute=True):  # the board's refresh too
        services.run_job(services.start_judge(scored_run, enqueue=False).pk)

    fragment = client.get(f"/submissions/{scored_run.submission.pk}/status/").content.decode()

    assert '<div id="live" class="live" aria-live="polite">' in fragment
    assert 'class="state state-complete">Complete</span>' in fragment
    assert "Judged by <code>standin-judge</code>" in fragment
    assert "pending" not in fragment.split('id="judge"', 1)[0].split("<h3>Metrics</h3>", 1)[1]
    assert "hx-trigger" not in fragment  # complete: the region stops polling


def test_a_run_just_scored_waits_for_the_automatic_judge_and_keeps_watching(
    client, submitter, scored_run
):
    benchmark = scored_run.submission.benchmark
    benchmark.judge_auto_start = True
    benchmark.save(update_fields=["judge_auto_start"])
    client.force_login(submitter)

    content = page(client, scored_run.submission)

    assert "The judge starts by itself in a moment" in content
    assert "Start the judge</button>" not in content
    assert f'hx-get="/submissions/{scored_run.submission.pk}/status/"' in content
    # Long after scoring without a job, the automatic start did not happen: offer the button.
    Evaluation.objects.filter(pk=scored_run.pk).update(
        scored_at=timezone.now() - timedelta(minutes=5)
    )
    content = page(client, scored_run.submission)
    assert "Start the judge</button>" in content
    assert "hx-trigger" not in content
