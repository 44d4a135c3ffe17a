"""The maintainers' console: every action as a maintainer (the move, its audit row with the
actor), as staff without the role (not offered, nothing changes) and as a non-staff user (the
admin's sign-in); reasons; refusals reported per entry; the Official board changing exactly when
an entry is verified or withdrawn; the change page (full-precision metrics, per-dataset values,
format report, audit trail) and its read-only provenance; the filters and the list's queries."""

import re
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts import roles
from benchmark.selectors import active_testset
from benchmark.services import ensure_plugin_benchmark
from core.models import AuditEvent
from judging import services as judging_services
from judging.models import JudgeJob
from submissions import hooks, services
from submissions.enums import BoardKind, EvaluationStatus, VerificationStatus
from submissions.models import BoardEntry, Evaluation, Submission
from tests.accounts.factories import UserFactory
from tests.judging.conftest import *  # noqa: F403  (judged_benchmark, scored_run, standin, ...)
from tests.verifying.factories import rerun_report, within_evidence

from .factories import SubmissionFactory, scored_entry
from .pages import METRIC_KEYS, values

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LIST = "/admin/submissions/submission/"
V = VerificationStatus
METRICS = METRIC_KEYS


@pytest.fixture
def medvidbench_definition():
    """MedVidBench with its metrics and policy, no test set."""
    return ensure_plugin_benchmark("medvidbench")


@pytest.fixture
def maintainer():
    user = UserFactory(is_staff=True)
    user.groups.add(Group.objects.get(name=roles.MAINTAINERS_GROUP))
    return user


@pytest.fixture
def as_maintainer(client, maintainer):
    client.force_login(maintainer)
    return client


@pytest.fixture
def entry(medvidbench_definition):
    """A scored, published entry on the Community board."""
    submission = scored_entry(medvidbench_definition, "Entry", values(CVS_acc=0.9))
    services.recompute_board(medvidbench_definition)
    return submission


def act(client, action, submissions, **data):
    return client.post(
        LIST,
        {"action": action, "_selected_action": [s.pk for s in submissions], **data},
        follow=True,
    )


def page_messages(response):
    return [str(message) for message in response.context["messages"]]


def moved_to(submission, state, *, actor=None):
    """Put an entry in `state` through the service (the setup of a test, not under test)."""
    path = {
        V.NOMINATED: [V.NOMINATED],
        V.CONTACTED: [V.NOMINATED, V.CONTACTED],
        V.ACCESS_GRANTED: [V.NOMINATED, V.CONTACTED, V.ACCESS_GRANTED],
        V.VERIFYING: [V.NOMINATED, V.CONTACTED, V.ACCESS_GRANTED, V.VERIFYING],
    }[state]
    for step in path:
        submission = services.set_verification_status(submission, step, actor=actor)
    if state == V.VERIFYING:
        rerun_report(submission)  # its re-run is done and within the tolerance
    return submission


def verification_events(submission):
    return list(
        AuditEvent.objects.filter(
            object_id=str(submission.pk), action__startswith="submissions.verification."
        )
        .order_by("id")
        .values_list("action", "actor__username", "data")
    )


def board_of(submission):
    entry = BoardEntry.objects.filter(submission=submission).first()
    return entry.board if entry else None


# --- the verification moves as a maintainer ------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "start", "new", "message"),
    [
        ("nominate", V.COMMUNITY, V.NOMINATED, "Nominated: Entry."),
        ("record_contact", V.NOMINATED, V.CONTACTED, "Authors contacted: Entry."),
        ("grant_access", V.CONTACTED, V.ACCESS_GRANTED, "Model access granted: Entry."),
        ("verify", V.VERIFYING, V.VERIFIED, "Verified: Entry."),
    ],
)
def test_a_maintainer_moves_entries_and_each_move_is_audited_with_the_maintainer(
    as_maintainer, maintainer, entry, action, start, new, message
):
    if start != V.COMMUNITY:
        entry = moved_to(entry, start)
    before = len(verification_events(entry))

    response = act(as_maintainer, action, [entry], note="emailed the first author")

    entry.refresh_from_db()
    assert entry.verification_status == new
    assert page_messages(response) == [message]
    data = {"from": start.value, "to": new.value, "note": "emailed the first author", "reason": ""}
    if new == V.VERIFIED:
        rerun = entry.reruns.get()
        data["evidence"] = within_evidence(rerun)
    assert verification_events(entry)[before:] == [
        (f"submissions.verification.{new.value}", maintainer.username, data)
    ]


def test_verifying_records_who_verified(as_maintainer, maintainer, entry):
    entry = moved_to(entry, V.VERIFYING)

    act(as_maintainer, "verify", [entry])

    entry.refresh_from_db()
    assert (entry.verified_by, entry.verified_at is not None) == (maintainer, True)


def test_reject_asks_for_a_reason_first_and_changes_nothing_until_given(
    as_maintainer, maintainer, entry
):
    entry = moved_to(entry, V.NOMINATED)

    page = act(as_maintainer, "reject", [entry], note="internal")

    content = page.content.decode()
    assert '<textarea name="reason"' in content
    assert 'value="internal"' in content
    assert f'<input type="hidden" name="_selected_action" value="{entry.pk}">' in content
    assert "<li>Entry (medvidbench): Nominated</li>" in content
    entry.refresh_from_db()
    assert entry.verification_status == V.NOMINATED

    refused = act(as_maintainer, "reject", [entry], apply="yes", reason="  ")

    assert "This field is required." in refused.content.decode()
    entry.refresh_from_db()
    assert entry.verification_status == V.NOMINATED

    done = act(
        as_maintainer, "reject", [entry], apply="yes", reason="Could not reproduce.", note="n"
    )

    entry.refresh_from_db()
    assert (entry.verification_status, entry.verification_reason) == (
        V.REJECTED,
        "Could not reproduce.",
    )
    assert page_messages(done) == ["Rejected: Entry."]
    assert verification_events(entry)[-1] == (
        "submissions.verification.rejected",
        maintainer.username,
        {"from": "nominated", "to": "rejected", "note": "n", "reason": "Could not reproduce."},
    )


def test_withdraw_asks_for_a_reason_and_stores_it(as_maintainer, maintainer, entry):
    entry = services.set_verification_status(moved_to(entry, V.VERIFYING), V.VERIFIED, actor=None)

    page = act(as_maintainer, "withdraw", [entry])
    assert '<textarea name="reason"' in page.content.decode()
    empty = act(as_maintainer, "withdraw", [entry], apply="yes", reason="")
    assert "This field is required." in empty.content.decode()
    entry.refresh_from_db()
    assert entry.verification_status == V.VERIFIED

    done = act(as_maintainer, "withdraw", [entry], apply="yes", reason="Licence revoked.")

    entry.refresh_from_db()
    assert (entry.verification_status, entry.verification_reason) == (
        V.WITHDRAWN,
        "Licence revoked.",
    )
    assert page_messages(done) == ["Withdrawn: Entry."]
    assert verification_events(entry)[-1][:2] == (
        "submissions.verification.withdrawn",
        maintainer.username,
    )


def test_an_illegal_move_is_reported_per_entry_with_the_services_message(
    as_maintainer, medvidbench_definition
):
    community = scored_entry(medvidbench_definition, "Community", values())
    nominated = moved_to(scored_entry(medvidbench_definition, "Nominated", values()), V.NOMINATED)

    response = act(as_maintainer, "record_contact", [community, nominated])

    community.refresh_from_db()
    nominated.refresh_from_db()
    assert (community.verification_status, nominated.verification_status) == (
        V.COMMUNITY,
        V.CONTACTED,
    )
    assert page_messages(response) == [
        "Authors contacted: Nominated.",
        "Not done: Community: An entry cannot go from Community to Authors contacted. "
        f'Next step: <a href="/admin/submissions/submission/?id__exact={community.pk}">'
        "nominate it (the action “Nominate for the Official board”)</a>.",
    ]
    assert verification_events(community) == []


def test_an_uploaded_entry_is_not_verified_directly(as_maintainer, entry):
    response = act(as_maintainer, "verify", [entry])

    entry.refresh_from_db()
    assert entry.verification_status == V.COMMUNITY
    assert page_messages(response) == [
        "Not done: Entry: An uploaded entry is verified on an independent re-run of its model: "
        "nominate it, record the contact with the authors, grant access and start a re-run, "
        "then verify from the re-run&#x27;s report. This entry is community. "
        f'Next step: <a href="/admin/submissions/submission/?id__exact={entry.pk}">'
        "nominate it (the action “Nominate for the Official board”)</a>."
    ]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("queued", "Re-run {pk} is queued (0 of 5 answers)"),
        ("running", "Re-run {pk} is running (0 of 5 answers)"),
    ],
)
def test_the_bulk_verify_refuses_an_entry_whose_rerun_is_not_done(
    as_maintainer, medvidbench_definition, django_capture_on_commit_callbacks, status, expected
):
    """The reproduction of issue 10.1: an entry in `verifying` with its re-run queued at 0
    answers, no report and no note, put on the Official board by the admin's bulk action."""
    entry = scored_entry(medvidbench_definition, "Entry", values())
    for step in (V.NOMINATED, V.CONTACTED, V.ACCESS_GRANTED, V.VERIFYING):
        services.set_verification_status(entry, step, actor=None)
    rerun = rerun_report(entry, status=status)

    with django_capture_on_commit_callbacks(execute=True):
        response = act(as_maintainer, "verify", [entry])

    entry.refresh_from_db()
    assert (entry.verification_status, entry.verified_at) == (V.VERIFYING, None)
    (message,) = page_messages(response)
    assert message.startswith("Not done: Entry: " + expected.format(pk=rerun.pk))
    assert not BoardEntry.objects.filter(board=BoardKind.OFFICIAL).exists()


# --- who may act ---------------------------------------------------------------------------------

ALL_ACTIONS = [
    "nominate",
    "record_contact",
    "grant_access",
    "verify",
    "reject",
    "withdraw",
    "rerun_scoring",
    "rerun_judge",
]


def test_a_maintainer_is_offered_every_action_and_nothing_else(as_maintainer, entry):
    response = as_maintainer.get(LIST)

    offered = [value for value, _ in response.context["action_form"].fields["action"].choices]
    assert offered == ["", *ALL_ACTIONS]


@pytest.mark.parametrize("action", ALL_ACTIONS)
def test_staff_without_the_role_is_refused_the_entries_and_changes_nothing(client, entry, action):
    # Handed the entries' view and change permissions one by one, but not the role: the admin
    # asks `can_view_all_entries` first, as the site and the API do (issue 11).
    staff = UserFactory(is_staff=True)
    staff.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_submission", "change_submission"])
    )
    client.force_login(staff)
    entry = moved_to(entry, V.VERIFYING)
    events = AuditEvent.objects.count()

    listing = client.get(LIST)
    response = act(client, action, [entry], apply="yes", reason="r")

    assert (listing.status_code, response.status_code) == (403, 403)
    entry.refresh_from_db()
    assert entry.verification_status == V.VERIFYING
    assert (AuditEvent.objects.count(), Evaluation.objects.count()) == (events, 1)


def test_staff_without_any_permission_is_refused_the_console(client, entry):
    client.force_login(UserFactory(is_staff=True))

    assert client.get(LIST).status_code == 403
    assert act(client, "nominate", [entry]).status_code == 403
    entry.refresh_from_db()
    assert entry.verification_status == V.COMMUNITY


@pytest.mark.parametrize("action", ALL_ACTIONS)
def test_a_user_who_is_not_staff_is_sent_to_the_admin_sign_in(client, entry, action):
    # In the group, but not staff: the admin is closed to them.
    user = UserFactory()
    user.groups.add(Group.objects.get(name=roles.MAINTAINERS_GROUP))
    client.force_login(user)

    response = client.post(
        LIST, {"action": action, "_selected_action": [entry.pk], "apply": "yes", "reason": "r"}
    )

    assert response.status_code == 302
    assert response.url.startswith("/admin/login/")
    entry.refresh_from_db()
    assert entry.verification_status == V.COMMUNITY
    assert verification_events(entry) == []


def test_nobody_adds_or_deletes_entries_in_the_admin(client, as_maintainer, entry):
    assert as_maintainer.get(f"{LIST}add/").status_code == 403
    assert as_maintainer.post(f"{LIST}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    assert client.get(f"{LIST}add/").status_code == 403
    assert client.post(f"{LIST}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Submission.objects.filter(pk=entry.pk).exists()


# --- the Official board --------------------------------------------------------------------------


def test_the_official_board_changes_exactly_when_an_entry_is_verified_or_withdrawn(
    as_maintainer, medvidbench_definition, django_capture_on_commit_callbacks
):
    benchmark = medvidbench_definition
    entry = scored_entry(benchmark, "Walker", values(CVS_acc=0.9))
    other = scored_entry(benchmark, "Rejected", values(CVS_acc=0.1))
    services.recompute_board(benchmark)

    def run(action, submissions, **data):
        with django_capture_on_commit_callbacks(execute=True):
            act(as_maintainer, action, submissions, **data)
        return board_of(entry), board_of(other)

    community = (BoardKind.COMMUNITY, BoardKind.COMMUNITY)
    assert run("nominate", [entry, other]) == community
    assert run("record_contact", [entry, other]) == community
    assert run("reject", [other], apply="yes", reason="No access.") == community
    assert run("grant_access", [entry]) == community
    with django_capture_on_commit_callbacks(execute=True):
        services.set_verification_status(entry, V.VERIFYING, actor=None)
    assert (board_of(entry), board_of(other)) == community
    rerun_report(entry)

    assert run("verify", [entry]) == (BoardKind.OFFICIAL, BoardKind.COMMUNITY)
    assert [e.submission_id for e in BoardEntry.objects.filter(board=BoardKind.OFFICIAL)] == [
        entry.pk
    ]

    assert run("withdraw", [entry], apply="yes", reason="Weights withdrawn.") == community
    assert not BoardEntry.objects.filter(board=BoardKind.OFFICIAL).exists()


# --- reruns --------------------------------------------------------------------------------------


@pytest.fixture
def uploaded(benchmark, perfect_predictions, django_capture_on_commit_callbacks):
    """An uploaded entry whose first run is scored."""
    with django_capture_on_commit_callbacks(execute=False):
        submission = services.create_submission(
            benchmark,
            owner=UserFactory(),
            details=services.SubmissionDetails(model_name="Uploaded"),
            predictions=perfect_predictions,
        )
    services.score_evaluation(submission.evaluations.get())
    return submission


def test_rerun_scoring_queues_a_new_run_against_the_active_test_set(
    as_maintainer, maintainer, uploaded, benchmark, django_capture_on_commit_callbacks
):
    first = uploaded.evaluations.get()

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = act(as_maintainer, "rerun_scoring", [uploaded], note="scorer fix")

    rerun = uploaded.evaluations.exclude(pk=first.pk).get()
    assert (rerun.state, rerun.test_set, rerun.requested_by) == (
        EvaluationStatus.QUEUED,
        active_testset(benchmark),
        maintainer,
    )
    assert len(callbacks) == 1  # the scoring task, queued on commit
    assert page_messages(response) == [f"Scoring queued again: Uploaded (run {rerun.pk})."]
    event = AuditEvent.objects.get(action="submissions.submission.rerun_requested")
    assert (event.actor, event.object_id, event.data) == (
        maintainer,
        str(uploaded.pk),
        {
            "evaluation": rerun.pk,
            "previous_evaluation": first.pk,
            "test_set_version": 1,
            "note": "scorer fix",
        },
    )


def test_rerun_scoring_refuses_an_import_and_a_run_already_waiting(
    as_maintainer, uploaded, benchmark
):
    imported = services.import_published_result(
        benchmark,
        model_name="Imported",
        values={},
        verified_at=datetime(2026, 4, 15, tzinfo=UTC),
    )
    act(as_maintainer, "rerun_scoring", [uploaded])

    response = act(as_maintainer, "rerun_scoring", [imported, uploaded])

    assert page_messages(response) == [
        "Not done: Imported: This entry has no predictions file (an imported published "
        "result): there is nothing to score again.; Uploaded: A run of this entry is still "
        "waiting to be scored."
    ]
    assert (imported.evaluations.count(), uploaded.evaluations.count()) == (1, 2)


def test_rerun_the_judge_starts_a_job_requested_by_the_maintainer(
    as_maintainer, maintainer, scored_run
):
    submission = scored_run.submission

    response = act(as_maintainer, "rerun_judge", [submission])

    job = JudgeJob.objects.get()
    assert (job.evaluation, job.requested_by) == (scored_run, maintainer)
    assert page_messages(response) == [f"Judge queued: Captioner (job {job.pk})."]
    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.JUDGING
    assert AuditEvent.objects.get(action="submissions.evaluation.judging").actor == maintainer
    page = as_maintainer.get(f"{LIST}{submission.pk}/change/").content.decode()
    assert f"Running: 0 of {job.items_total} judged, 0 failed (0%)." in page
    assert f'<a href="/admin/judging/judgejob/{job.pk}/change/">Judge job {job.pk}</a>' in page
    trail = [
        "submissions.submission.created",
        "submissions.evaluation.queued",
        "submissions.evaluation.scored",
        "submissions.evaluation.judging",
        "judging.job.created",
    ]
    assert [action for action in trail if f"<td>{action}</td>" not in page] == []


@contextmanager
def without_the_judge():
    """The console as it is when `judging` installs none of its hooks (emptied, put back
    after)."""
    slots = [
        hooks.judge_panel_reader,
        hooks.judge_rerun_permission,
        hooks.judge_rerun,
        hooks.entry_judge_jobs_reader,
    ]
    installed = [slot.callback for slot in slots]
    for slot in slots:
        slot.set(None)
    try:
        yield
    finally:
        for slot, callback in zip(slots, installed, strict=True):
            slot.set(callback)


def test_the_console_reaches_the_judge_only_through_the_hooks_judging_installs(
    as_maintainer, scored_run
):
    # `submissions` imports nothing of `judging` (issue 33): without its hooks the console
    # still opens, with no judge step, no rerun and no judge job in the trail.
    submission = scored_run.submission
    job = judging_services.start_judge(scored_run, enqueue=False)
    page = f"{LIST}{submission.pk}/change/"

    with without_the_judge():
        bare = as_maintainer.get(page).content.decode()
        offered = as_maintainer.get(LIST).context["action_form"].fields["action"].choices
    hooked = as_maintainer.get(page).content.decode()

    assert "No judge step for this run." in bare
    assert "<td>judging.job.created</td>" not in bare
    assert "rerun_judge" not in [value for value, _ in offered]
    assert f'<a href="/admin/judging/judgejob/{job.pk}/change/">Judge job {job.pk}</a>' in hooked
    assert "<td>judging.job.created</td>" in hooked


def test_a_queued_run_is_said_to_wait_for_its_scores_before_the_judge(
    as_maintainer, judged_benchmark, upload
):
    submission = services.create_submission(
        judged_benchmark,
        owner=UserFactory(),
        details=services.SubmissionDetails(model_name="Queued"),
        predictions=upload(),
    )

    page = as_maintainer.get(f"{LIST}{submission.pk}/change/").content.decode()

    # Not "No judge step for this run." (issue 32, point 10): it is judged once scored.
    assert "The LLM judge can start once the run is scored." in page
    assert "No judge step for this run." not in page


def test_rerun_the_judge_reports_entries_it_cannot_judge(as_maintainer, entry):
    # A run without a test set (as imported results have) has nothing to judge.
    no_run = SubmissionFactory(benchmark=entry.benchmark, model_name="No run")

    response = act(as_maintainer, "rerun_judge", [entry, no_run])

    assert page_messages(response) == [
        "Not done: No run: it has no run; Entry: Only a complete, scored run can be judged again."
    ]
    assert not JudgeJob.objects.exists()


# --- the change page -----------------------------------------------------------------------------


@pytest.fixture
def detailed(medvidbench_definition, maintainer):
    """An entry whose run carries a full result: per-dataset values and a format report with
    an unparsed answer that is markup."""
    submission = scored_entry(
        medvidbench_definition,
        "Detailed",
        values(CVS_acc=0.123456789012),
        team_name="Team <b>",
        predictions_file="predictions/medvidbench/abc.json",
        predictions_sha256="a" * 64,
        predictions_size=1234,
    )
    Evaluation.objects.filter(submission=submission).update(
        result={
            "per_dataset": {"CVS_acc": {"Cholec80-CVS": 0.987654321098, "Endoscapes": 0.25}},
            "parsed": {"cvs_assessment": {"parsed": 9, "total": 10}},
            "unparsed_examples": {
                "cvs_assessment": [{"row": 3, "id": "s-3", "prediction": "<script>x</script>"}]
            },
            "counts": {"CVS_acc": {"scored": 9, "total": 10}},
        }
    )
    services.recompute_board(medvidbench_definition)
    services.set_verification_status(submission, V.NOMINATED, actor=maintainer, note="strong")
    return submission


def test_the_change_page_shows_metrics_breakdown_format_and_the_audit_trail(
    as_maintainer, maintainer, detailed
):
    content = as_maintainer.get(f"{LIST}{detailed.pk}/change/").content.decode()

    run = detailed.evaluations.get()
    assert f"Run {run.pk}: <strong>Complete</strong>" in content
    assert (
        "<tr><td>CVS_acc</td><td>CVS assessment accuracy</td><td>0.123456789012</td>"
        "<td>9/10</td></tr>"
    ) in content
    assert "<tr><td>Cholec80-CVS</td><td>0.987654321098</td></tr>" in content
    assert "<tr><td>Endoscapes</td><td>0.25</td></tr>" in content
    assert "<td>cvs_assessment</td><td>9/10</td><td>90.0%</td>" in content
    assert "<code>&lt;script&gt;x&lt;/script&gt;</code>" in content
    assert "<script>x</script>" not in content
    assert (
        f"<td>{maintainer.username}</td><td>submissions.verification.nominated</td>"
        f"<td>Detailed (medvidbench)</td><td>community → nominated</td><td>note: strong</td>"
    ) in content
    assert "submissions.evaluation.complete" not in content  # the factory set the state
    assert '<div class="readonly">Community board, #1 (mean rank 1.0, ' in content
    assert "Team &lt;b&gt;" in content


def test_provenance_is_read_only_and_an_edit_is_audited_and_refreshes_the_board(
    as_maintainer, maintainer, detailed, django_capture_on_commit_callbacks
):
    url = f"{LIST}{detailed.pk}/change/"
    form = as_maintainer.get(url).content.decode()
    for name in ["predictions_file", "predictions_sha256", "model_name", "verification_status"]:
        assert f'name="{name}"' not in form
    for name in ["team_name", "institution", "model_url", "paper_url", "code_url", "authors"]:
        assert f'name="{name}"' in form

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = as_maintainer.post(
            url,
            {
                "team_name": "Surgical AI Lab",
                "institution": "Test University",
                "authors": "",
                "model_url": "https://example.org/model",
                "paper_url": "",
                "code_url": "",
                # Not on the form: ignored.
                "predictions_file": "predictions/elsewhere.json",
                "predictions_sha256": "b" * 64,
                "model_name": "Renamed",
                "verification_status": "verified",
                "_save": "Save",
            },
        )

    assert response.status_code == 302
    detailed.refresh_from_db()
    assert (detailed.team_name, detailed.model_url) == (
        "Surgical AI Lab",
        "https://example.org/model",
    )
    assert (
        detailed.predictions_file,
        detailed.predictions_sha256,
        detailed.model_name,
        detailed.verification_status,
    ) == ("predictions/medvidbench/abc.json", "a" * 64, "Detailed", V.NOMINATED)
    event = AuditEvent.objects.get(action="submissions.submission.edited")
    assert (event.actor, event.data) == (
        maintainer,
        {
            "changes": {
                "team_name": {"from": "Team <b>", "to": "Surgical AI Lab"},
                "model_url": {"from": "", "to": "https://example.org/model"},
            }
        },
    )
    # The recompute then queues the board's rank intervals (issue 12), its rows' API JSON and
    # its sorted orders (issue 16), and tells the board's listeners (the battles app's, issue 15).
    assert [c.func.__name__ for c in callbacks if hasattr(c, "func")] == [
        "refresh_board",
        "enqueue_rank_intervals",
        "enqueue_board_json",
        "enqueue_board_orders",
        "on_board_recomputed",
    ]


def test_runs_are_listed_read_only(as_maintainer, detailed):
    run = detailed.evaluations.get()

    listing = as_maintainer.get("/admin/submissions/evaluation/")
    page = as_maintainer.get(f"/admin/submissions/evaluation/{run.pk}/change/")

    assert [row.pk for row in listing.context["cl"].result_list] == [run.pk]
    assert 'name="_save"' not in page.content.decode()
    assert as_maintainer.get("/admin/submissions/evaluation/add/").status_code == 403
    assert as_maintainer.post(f"/admin/submissions/evaluation/{run.pk}/delete/").status_code == 403


# --- the list ------------------------------------------------------------------------------------


@pytest.fixture
def mixed_board(medvidbench_definition):
    """An imported verified entry, three community entries ranked 2-4, one evaluate-only."""
    benchmark = medvidbench_definition
    services.import_published_result(
        benchmark,
        model_name="Official",
        values=values(CVS_acc=1.0),
        verified_at=datetime(2026, 4, 15, tzinfo=UTC),
    )
    for name, score in [("Second", 0.8), ("Third", 0.6), ("Fourth", 0.4)]:
        scored_entry(benchmark, name, values(CVS_acc=score), is_challenge_entry=name == "Third")
    scored_entry(benchmark, "Private", values(), publish=False)
    services.recompute_board(benchmark)
    return benchmark


def listed(client, query=""):
    response = client.get(f"{LIST}?{query}")
    return sorted(submission.model_name for submission in response.context["cl"].result_list)


def test_the_filters_find_boards_runs_challenge_entries_and_top_unverified(
    as_maintainer, mixed_board
):
    assert listed(as_maintainer, "board=official") == ["Official"]
    assert listed(as_maintainer, "board=community") == ["Fourth", "Second", "Third"]
    assert listed(as_maintainer, "board=none") == ["Private"]
    assert listed(as_maintainer, "top=3") == ["Second", "Third"]
    assert listed(as_maintainer, "top=10") == ["Fourth", "Second", "Third"]
    assert listed(as_maintainer, "run=complete") == [
        "Fourth",
        "Official",
        "Private",
        "Second",
        "Third",
    ]
    assert listed(as_maintainer, "run=queued") == []
    assert listed(as_maintainer, "is_challenge_entry__exact=1") == ["Third"]
    assert listed(as_maintainer, "verification_status__exact=verified") == ["Official"]


def test_the_list_searches_names_teams_and_owners(as_maintainer, medvidbench_definition):
    owner = UserFactory(username="alice", email="alice@lab.example")
    scored_entry(medvidbench_definition, "Alpha", values(), owner=owner, team_name="Lab X")
    scored_entry(medvidbench_definition, "Beta", values(), contact_email="beta@uni.example")

    assert listed(as_maintainer, "q=alpha") == ["Alpha"]
    assert listed(as_maintainer, "q=Lab+X") == ["Alpha"]
    assert listed(as_maintainer, "q=alice@lab") == ["Alpha"]
    assert listed(as_maintainer, "q=beta@uni") == ["Beta"]


def test_the_list_shows_board_run_state_and_standing(as_maintainer, mixed_board):
    content = as_maintainer.get(f"{LIST}?q=Second").content.decode()

    assert '<td class="field-board">Community</td>' in content
    assert '<td class="field-latest_run">Complete</td>' in content
    assert re.search(
        r'<td class="field-standing"><span class="nowrap">#2</span> '
        r'<span class="nowrap">\(\d\.\d\d\)</span></td>',
        content,
    )


def test_the_list_costs_the_same_queries_for_one_entry_and_three(
    as_maintainer, medvidbench_definition
):
    def count():
        with CaptureQueriesContext(connection) as queries:
            assert as_maintainer.get(LIST).status_code == 200
        return len(queries)

    scored_entry(medvidbench_definition, "One", values())
    services.recompute_board(medvidbench_definition)
    one = count()
    scored_entry(medvidbench_definition, "Two", values())
    scored_entry(medvidbench_definition, "Three", values())
    services.recompute_board(medvidbench_definition)

    assert count() == one


def test_evaluate_only_entries_say_so_and_wide_tables_scroll(as_maintainer, detailed, entry):
    """Issue 13, point 13: an evaluate-only entry is listed as such (not "Community"), its
    page says in words where it is shown (no tick beside "Off: evaluate only"), and the
    per-dataset table scrolls in its field instead of being clipped."""
    private = scored_entry(entry.benchmark, "Private", values(CVS_acc=0.5), publish=False)

    listing = as_maintainer.get(LIST).content.decode()
    row = listing.split(f"/admin/submissions/submission/{private.pk}/change/", 1)[1]
    assert '<td class="field-verification">Evaluate only</td>' in row.split("</tr>", 1)[0]

    page = as_maintainer.get(f"{LIST}{private.pk}/change/").content.decode()
    assert "Evaluate only: never on a board" in page
    assert "icon-yes.svg" not in page.split("Shown", 1)[1].split("</div>", 3)[0]
    detail = as_maintainer.get(f"{LIST}{detailed.pk}/change/").content.decode()
    assert '<div class="admin-table-scroll"><table><thead><tr><th>Dataset</th>' in detail
    assert "css/admin.css" in detail
