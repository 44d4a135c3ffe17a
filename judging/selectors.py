"""Reads for the judge's side of a submission page: who may start, rerun or cancel step 2, and
the judge panel (its state, the job's progress, the counts it ended with). Who may see the
page at all is `submissions.selectors.submission_for_user`'s business (the owner, maintainers
and superusers: `accounts.roles.can_view_all_entries`).

The panel reads the job's stored counters, which the worker refreshes at every heartbeat: a
page polled every two seconds costs a handful of queries, never a count over the items.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.urls import reverse
from django.utils import timezone

from submissions.enums import STATES_WITH_SCORES, EvaluationStatus, SubmissionSource
from submissions.judge_step import BoardJudge, JudgeDetails
from submissions.models import BoardEntry, Evaluation, Submission

from .enums import ACTIVE_JOB_STATES, JobStatus
from .models import JudgeJob
from .services import judge_unavailable_reason

RERUN_PERMISSION = "judging.rerun_judgejob"

# Before a run has scores the panel has nothing to say, but it polls (slowly) so that a judge
# the benchmark starts automatically after scoring shows up without a reload.
STATES_BEFORE_SCORES = frozenset(
    {EvaluationStatus.RECEIVED, EvaluationStatus.QUEUED, EvaluationStatus.SCORING}
)


# --- permissions (shared by the views, the panel and the admin) ----------------------------------


def is_judge_maintainer(user: Any) -> bool:
    """Whether `user` may rerun the judge on any submission (and cancel any job)."""
    return bool(getattr(user, "is_authenticated", False) and user.has_perm(RERUN_PERMISSION))


def can_start_judge(user: Any, submission: Submission) -> bool:
    """The submitter starts step 2 of their own run; a maintainer may start anyone's."""
    if not getattr(user, "is_authenticated", False):
        return False
    return submission.owner_id == user.pk or is_judge_maintainer(user)


def can_rerun_judge(user: Any) -> bool:
    return is_judge_maintainer(user)


def entry_judge_jobs(submission: Submission) -> QuerySet[JudgeJob]:
    """The judge jobs of every run of `submission` (the console's audit trail shows theirs)."""
    return JudgeJob.objects.filter(evaluation__submission=submission)


def can_cancel_job(user: Any, job: JudgeJob, submission: Submission) -> bool:
    """A maintainer cancels any job; the submitter cancels a job on their own run unless a
    maintainer requested it (a maintainer's rerun is not the submitter's to stop)."""
    if is_judge_maintainer(user):
        return True
    if not getattr(user, "is_authenticated", False) or submission.owner_id != user.pk:
        return False
    return job.requested_by_id in (None, submission.owner_id)


# --- the panel -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobProgress:
    """A job's progress from its stored counters."""

    status: str
    total: int
    done: int
    failed: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None
    model: str
    created_at: datetime
    started_at: datetime | None
    # The endpoint's outage as the runner last saved it (None: reachable).
    unreachable_since: datetime | None = None
    next_try_at: datetime | None = None
    last_transient_error: str = ""

    @property
    def next_try_in(self) -> int | None:
        """Whole seconds until the next probe (0 when it is due), or None when reachable."""
        if self.unreachable_since is None or self.next_try_at is None:
            return None
        return max(0, math.ceil((self.next_try_at - timezone.now()).total_seconds()))

    @property
    def finished(self) -> int:
        return self.done + self.failed

    @property
    def percent(self) -> int:
        return int(100 * self.finished / self.total) if self.total else 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def summary(self) -> str:
        """ "123 of 2,000 judged, 4 failed"."""
        return f"{self.done:,} of {self.total:,} judged, {self.failed:,} failed"


def job_progress_view(job: JudgeJob) -> JobProgress:
    return JobProgress(
        status=job.status,
        total=job.items_total,
        done=job.items_done,
        failed=job.items_failed,
        calls=job.calls,
        prompt_tokens=job.prompt_tokens,
        completion_tokens=job.completion_tokens,
        cost=job.cost,
        model=job.model,
        created_at=job.created_at,
        started_at=job.started_at,
        # Between two time slices (queued) an outage the last slice saw still holds.
        unreachable_since=job.unreachable_since if job.status in ACTIVE_JOB_STATES else None,
        next_try_at=job.next_try_at,
        last_transient_error=job.last_transient_error,
    )


@dataclass(frozen=True)
class MetricCount:
    """How many of one judge metric's items were judged and how many failed."""

    metric: str
    items: int
    judged: int
    failed: int


@dataclass(frozen=True)
class JudgePanel:
    """What the judge panel of a submission page shows to one viewer.

    `state` is one of:
    - "not_applicable": no panel (no judge metrics, an imported run without a test set, a run
      that failed or was cancelled);
    - "waiting" with `before_scores`: the run is not scored yet and will be judged after; the
      page shows no panel yet (it only polls), the API says "waiting" (issue 32, point 10);
    - "unavailable": the run waits for the judge but it cannot run (`reason` says why);
    - "starting": the run was scored a moment ago and the benchmark starts the judge by itself
      (the scored hook is about to queue it): the page keeps watching;
    - "can_start": the run waits for the judge and the viewer may start it;
    - "waiting": the run waits for the judge and the viewer may not start it;
    - "running": a job is queued or running (`progress`; an unreachable judge is said there);
    - "held": the judge tried every item but some got no usable verdict; nothing is published
      until a maintainer accepts the judgement without them or cancels it (`message`);
    - "failed": the latest job failed (`message`); the run waits again;
    - "done": the run is complete (`progress` and `counts` of the job that completed it).
    """

    state: str
    submission_id: int
    reason: str = ""
    message: str = ""
    last_job_status: str = ""
    progress: JobProgress | None = None
    counts: tuple[MetricCount, ...] = ()
    can_start: bool = False
    can_rerun: bool = False
    can_cancel: bool = False
    polling: bool = False
    # A held job's admin page, where a maintainer accepts or cancels it ("" for anyone else).
    decide_url: str = ""
    before_scores: bool = False

    @property
    def shown(self) -> bool:
        return self.state != "not_applicable" and not self.before_scores


def judge_panel(evaluation: Evaluation | None, viewer: Any) -> JudgePanel | None:
    """The judge panel for a run the viewer may see (the caller checked that), or None when
    there is no run. Reads the run's newest jobs, never their items."""
    if evaluation is None:
        return None
    submission = evaluation.submission
    benchmark = submission.benchmark
    state = evaluation.state
    if not benchmark.has_judge or evaluation.test_set_id is None:
        return JudgePanel("not_applicable", submission.pk)
    if state in STATES_BEFORE_SCORES:
        return JudgePanel(
            "waiting",
            submission.pk,
            message="The LLM judge can start once the run is scored.",
            polling=True,
            before_scores=True,
        )
    if state not in STATES_WITH_SCORES:  # failed or cancelled: nothing to judge
        return JudgePanel("not_applicable", submission.pk)

    latest = evaluation.judge_jobs.order_by("-created_at", "-id").first()
    maintainer = is_judge_maintainer(viewer)
    if latest is not None and latest.status in ACTIVE_JOB_STATES:
        return JudgePanel(
            "running",
            submission.pk,
            progress=job_progress_view(latest),
            can_cancel=can_cancel_job(viewer, latest, submission),
            polling=True,
        )
    if latest is not None and latest.status == JobStatus.HELD:
        return JudgePanel(
            "held",
            submission.pk,
            message=latest.message,
            progress=job_progress_view(latest),
            polling=True,
            decide_url=(
                reverse("admin:judging_judgejob_change", args=[latest.pk]) if maintainer else ""
            ),
        )
    if state == EvaluationStatus.JUDGING:
        # A run being judged whose job is not active yet (or any more): keep watching.
        return JudgePanel("running", submission.pk, polling=True)
    if state == EvaluationStatus.COMPLETE:
        done = latest if latest is not None and latest.status == JobStatus.DONE else None
        return JudgePanel(
            "done",
            submission.pk,
            message=done.message if done else "",
            progress=job_progress_view(done) if done else None,
            counts=_metric_counts(done) if done else (),
            can_rerun=maintainer,
        )

    # Scored: the judge metrics are pending.
    last_status = latest.status if latest is not None else ""
    reason = judge_unavailable_reason(benchmark)
    if reason:
        return JudgePanel(
            "unavailable",
            submission.pk,
            reason=reason,
            message=latest.message if latest and latest.status == JobStatus.FAILED else "",
            last_job_status=last_status,
        )
    allowed = can_start_judge(viewer, submission)
    if latest is None and benchmark.judge_auto_start and _just_scored(evaluation):
        return JudgePanel("starting", submission.pk, polling=True)
    if latest is not None and latest.status == JobStatus.FAILED:
        return JudgePanel(
            "failed",
            submission.pk,
            message=latest.message,
            last_job_status=last_status,
            progress=job_progress_view(latest),
            can_start=allowed,
        )
    return JudgePanel(
        "can_start" if allowed else "waiting",
        submission.pk,
        last_job_status=last_status,
        can_start=allowed,
    )


# How long after scoring a run with no judge job yet is taken to be waiting for the automatic
# start (`start_judge_if_automatic` runs on the scored commit, in the same worker, so it takes
# well under a second); after that the panel offers the start button again.
AUTO_START_GRACE = timedelta(seconds=60)


def _just_scored(evaluation: Evaluation) -> bool:
    scored_at = evaluation.scored_at
    return scored_at is not None and timezone.now() - scored_at < AUTO_START_GRACE


def _metric_counts(job: JudgeJob) -> tuple[MetricCount, ...]:
    counts = (job.outcome or {}).get("counts") or {}
    # In the benchmark's column order: jsonb (PostgreSQL) does not keep the stored key order.
    return tuple(
        MetricCount(
            metric=name,
            items=int(counts[name].get("items", 0)),
            judged=int(counts[name].get("judged", 0)),
            failed=int(counts[name].get("failed", 0)),
        )
        for name in _judge_metrics(job)
        if name in counts
    )


def _judge_metrics(job: JudgeJob) -> list[str]:
    """The benchmark's judge metrics in column order."""
    benchmark = job.evaluation.submission.benchmark
    return list(benchmark.metrics.filter(is_judge_metric=True).values_list("key", flat=True))


# --- the public entry page (issue 12) ------------------------------------------------------------


def judge_details(evaluation: Evaluation) -> JudgeDetails | None:
    """Who judged `evaluation`'s captions: the job that completed it (its newest done job), as
    the public entry page shows it (registered with `submissions.judge_step` at start-up). None
    when no job finished; never the endpoint, the prompts or a verdict."""
    job = (
        evaluation.judge_jobs.filter(status=JobStatus.DONE)
        .order_by("-finished_at", "-id")
        .only("model", "rubric_version", "items_total", "items_done", "items_failed", "finished_at")
        .first()
    )
    if job is None:
        return None
    return JudgeDetails(
        model=job.model,
        rubric_version=job.rubric_version,
        items_total=job.items_total,
        items_judged=job.items_done,
        items_failed=job.items_failed,
        finished_at=job.finished_at,
    )


def board_judges(benchmark_id: int, board: str) -> list[BoardJudge]:
    """Who scored the judge columns of the board's rows (issue 32, point 4; registered with
    `submissions.hooks.board_judges_reader`): each row's run's newest finished job's judge
    (its endpoint's name, model and rubric version), and the imported rows (their numbers as
    published). One query, grouped; a row with no judge value yet (pending) is not counted."""
    newest = JudgeJob.objects.filter(
        evaluation=OuterRef("evaluation_id"), status=JobStatus.DONE
    ).order_by("-finished_at", "-id")
    groups = (
        BoardEntry.objects.filter(benchmark_id=benchmark_id, board=board)
        .annotate(
            judge_model=Subquery(newest.values("model")[:1]),
            judge_rubric=Subquery(newest.values("rubric_version")[:1]),
            judge_name=Subquery(newest.values("endpoint__name")[:1]),
        )
        .values("judge_model", "judge_rubric", "judge_name", "submission__source")
        .annotate(rows=Count("id"))
        .order_by()
    )
    merged: dict[tuple[str, str, bool, str], int] = {}
    for group in groups:
        imported = group["submission__source"] == SubmissionSource.IMPORTED
        if not imported and not group["judge_model"]:
            continue
        key = (
            "" if imported else group["judge_model"],
            "" if imported else group["judge_rubric"],
            imported,
            "" if imported else group["judge_name"] or "",
        )
        merged[key] = merged.get(key, 0) + group["rows"]
    judges = [
        BoardJudge(model, rubric, rows, imported, judge=name)
        for (model, rubric, imported, name), rows in merged.items()
    ]
    return sorted(judges, key=lambda judge: (-judge.rows, judge.imported, judge.label))
