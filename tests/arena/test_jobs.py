"""A battle job's one status writer over every (from, to) pair, and the admin: read-only jobs
with their failed judge calls (never a prompt), read-only battles, and the cancel and rerun
actions through the services, for maintainers only."""

import itertools

import pytest
from django.utils.html import escape

from arena.enums import JOB_TRANSITIONS, JobStatus
from arena.models import Battle, BattleJob
from arena.services import cancel_job, rerun_battles, run_job, set_job_status
from core.exceptions import DomainError, InvalidTransition
from core.models import AuditEvent
from tests.accounts.factories import UserFactory, maintainer_user

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def queued_job(enter, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        enter("first", "strong")
    with django_capture_on_commit_callbacks(execute=True):
        second = enter("second", "weak")
    return BattleJob.objects.get(submission=second)


@pytest.mark.parametrize(("start", "new"), list(itertools.product(JobStatus, JobStatus)))
def test_the_status_writer_takes_exactly_the_allowed_moves_and_audits_each(queued_job, start, new):
    BattleJob.objects.filter(pk=queued_job.pk).update(status=start)
    job = BattleJob.objects.get(pk=queued_job.pk)
    before = AuditEvent.objects.filter(action__startswith="arena.job.").count()

    if new in JOB_TRANSITIONS[start]:
        set_job_status(job, new)
        job.refresh_from_db()
        assert job.status == new
        event = AuditEvent.objects.filter(action=f"arena.job.{new.value}").latest("id")
        assert (event.data["from"], event.data["to"]) == (start.value, new.value)
        assert AuditEvent.objects.filter(action__startswith="arena.job.").count() == before + 1
    else:
        with pytest.raises(InvalidTransition):
            set_job_status(job, new)
        assert BattleJob.objects.get(pk=job.pk).status == start
        assert AuditEvent.objects.filter(action__startswith="arena.job.").count() == before


def test_cancel_and_rerun_are_a_maintainers(queued_job):
    with pytest.raises(DomainError, match="Only a maintainer may cancel battles"):
        cancel_job(queued_job, actor=UserFactory())
    maintainer = maintainer_user()
    with pytest.raises(InvalidTransition, match="still queued; cancel it first"):
        rerun_battles(queued_job, actor=maintainer)

    cancelled = cancel_job(queued_job, actor=maintainer)

    assert cancelled.status == JobStatus.CANCELLED
    assert run_job(cancelled.pk) is None  # a worker that picks it up leaves it alone
    with pytest.raises(DomainError, match="Only a maintainer may run battles again"):
        rerun_battles(cancelled, actor=UserFactory())
    again = rerun_battles(cancelled, actor=maintainer)
    assert (again.rerun_of, again.status, again.battles_total) == (cancelled, JobStatus.QUEUED, 16)
    assert AuditEvent.objects.get(action="arena.job.rerun").data == {"rerun_of": cancelled.pk}


def act(client, action, jobs):
    return client.post(
        "/admin/arena/battlejob/",
        {"action": action, "_selected_action": [job.pk for job in jobs]},
        follow=True,
    )


def test_a_maintainer_sees_jobs_and_battles_read_only_and_never_a_prompt(
    queued_job, client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run_job(queued_job.pk)
    client.force_login(maintainer_user())
    prompt = queued_job.items.first().prompt

    listing = client.get("/admin/arena/battlejob/").content.decode()
    page = client.get(f"/admin/arena/battlejob/{queued_job.pk}/change/").content.decode()
    battle = Battle.objects.first()
    battle_page = client.get(f"/admin/arena/battle/{battle.pk}/change/").content.decode()

    assert "second" in listing
    assert "16 battles judged." in page
    assert "Failed judge calls" in page
    assert prompt not in page
    assert "Reference Answer" not in page + battle_page
    assert escape(battle.round1_verdict) in battle_page  # the raw reply, for the maintainers
    assert client.get("/admin/arena/battle/add/").status_code == 403
    assert client.post(f"/admin/arena/battle/{battle.pk}/delete/").status_code == 403


def test_the_admin_actions_cancel_and_rerun_through_the_services(queued_job, client):
    client.force_login(maintainer_user())

    response = act(client, "cancel", [queued_job])
    assert f"Cancelled battle job(s): {queued_job.pk}." in response.content.decode()
    response = act(client, "rerun", [queued_job])
    new = BattleJob.objects.get(rerun_of=queued_job)
    assert f"Battle job(s) queued: {new.pk}." in response.content.decode()
    response = act(client, "cancel", [queued_job])
    assert f"Not done: job {queued_job.pk} is already cancelled" in response.content.decode()


def test_someone_who_is_not_a_maintainer_sees_no_battles_in_the_admin(queued_job, client):
    client.force_login(UserFactory(is_staff=True))

    assert client.get("/admin/arena/battlejob/").status_code == 403
    assert client.get("/admin/arena/battle/").status_code == 403
