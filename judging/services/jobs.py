"""A judge job's life outside the worker: starting it (the items of spec 5), its one status
writer, finishing it (aggregating and publishing), failing and cancelling it."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from benchmark.plugins import plugin_for
from benchmark.scoring.errors import PredictionsError
from benchmark.scoring.rubric import JudgeOutcome, Rubric, RubricError
from benchmark.selectors import TestSetFileError, load_scoring_testset
from core import audit
from core.exceptions import DomainError, InvalidTransition, JudgeUnavailable
from inference import lifecycle
from submissions.enums import EvaluationStatus
from submissions.judge_step import copy_for_rejudge, publish_judge_metrics
from submissions.models import Evaluation
from submissions.notifications import notify_judge_failed, notify_judge_held
from submissions.selectors.files import predictions_bytes
from submissions.services import set_evaluation_status

from ..enums import ACTIVE_JOB_STATES, ItemState, JobStatus
from ..models import JudgeItem, JudgeJob, VerdictClaim
from .endpoints import BULK_BATCH, active_endpoint, judge_unavailable_reason, max_runs, stale_after
from .progress import forget_estimate, save_progress

logger = logging.getLogger(__name__)

# The maintainers' permission (judging.selectors.RERUN_PERMISSION, which imports this package).
RERUN_PERMISSION = "judging.rerun_judgejob"

# --- starting a job ----------------------------------------------------------------------------


def active_job(evaluation: Evaluation) -> JudgeJob | None:
    return evaluation.judge_jobs.filter(status__in=ACTIVE_JOB_STATES).first()


def start_judge(evaluation: Evaluation, *, actor: Any = None, enqueue: bool = True) -> JudgeJob:
    """Build the judge items of a scored run and queue the job (on commit). The run moves to
    `judging`. A run already being judged returns its job. `JudgeUnavailable` when no endpoint
    can run it, `InvalidTransition` when the run is not waiting for the judge."""
    existing = active_job(evaluation)
    if existing is not None:
        return existing
    if evaluation.state != EvaluationStatus.SCORED or evaluation.test_set_id is None:
        raise InvalidTransition(
            f"The judge runs on a scored run waiting for it; this one is "
            f"{evaluation.state.label.lower()}."
        )
    benchmark = evaluation.submission.benchmark
    reason = judge_unavailable_reason(benchmark)
    if reason:
        raise JudgeUnavailable(reason)
    endpoint = active_endpoint(benchmark)
    assert endpoint is not None
    try:
        rubric = benchmark.rubric()
    except RubricError as error:
        raise JudgeUnavailable(f"The judge rubric cannot be used: {error}.") from None
    plugin = plugin_for(benchmark)
    if plugin.judge is None:
        raise InvalidTransition(f"{benchmark.name} has no judge step.")
    try:
        test_set = load_scoring_testset(evaluation.test_set)
        predictions = plugin.check_predictions(
            predictions_bytes(evaluation.submission),
            test_set,
            options=evaluation.submission.options,
            max_prediction_chars=benchmark.max_prediction_chars,
        )
    except (TestSetFileError, OSError) as error:
        raise JudgeUnavailable(f"The run's files cannot be read: {error}") from None
    except PredictionsError as error:
        raise DomainError(_refused_file_message(error)) from None
    items = plugin.judge.items(test_set, predictions)

    with transaction.atomic():
        evaluation = Evaluation.objects.select_for_update().get(pk=evaluation.pk)
        existing = active_job(evaluation)
        if existing is not None:
            return existing
        if evaluation.state != EvaluationStatus.SCORED:
            raise InvalidTransition(
                f"The judge runs on a scored run waiting for it; this one is "
                f"{evaluation.state.label.lower()}."
            )
        job = JudgeJob.objects.create(
            evaluation=evaluation,
            endpoint=endpoint,
            requested_by=actor if getattr(actor, "is_authenticated", False) else None,
            model=endpoint.model,
            rubric_version=rubric.version,
            rubric_template=rubric.template,
            rubric_settings=rubric.settings(),
            items_total=len(items),
        )
        rows = []
        for item in items:
            prompt = item.prompt(rubric)
            rows.append(
                JudgeItem(
                    job=job,
                    key=item.key,
                    metric=item.metric,
                    dataset=item.dataset,
                    sample_index=item.sample,
                    threshold=item.threshold,
                    prompt=prompt,
                    prompt_sha256=hashlib.sha256(prompt.encode()).hexdigest(),
                )
            )
        JudgeItem.objects.bulk_create(rows, batch_size=BULK_BATCH)
        set_evaluation_status(
            evaluation, EvaluationStatus.JUDGING, actor=actor, note=f"judge job {job.pk}"
        )
        audit.record(
            "judging.job.created",
            actor=actor,
            target=job,
            evaluation=evaluation.pk,
            items=len(items),
            model=endpoint.model,
            rubric_version=rubric.version,
        )
        if enqueue:
            transaction.on_commit(lambda: enqueue_job(job.pk))
    return job


def rerun_judge(evaluation: Evaluation, *, actor: Any) -> JudgeJob:
    """A maintainer's rerun: a scored run is judged (again); a complete one is copied into a
    new run that is judged. Verdicts already in the cache cost nothing."""
    with transaction.atomic():  # a refused start leaves no copied run behind
        if evaluation.state == EvaluationStatus.COMPLETE:
            evaluation = copy_for_rejudge(evaluation, actor=actor)
        return start_judge(evaluation, actor=actor)


def _refused_file_message(error: PredictionsError) -> str:
    """Why the judge will not take a run whose stored file fails today's checks: an entry
    accepted before them (a NUL or an unpaired surrogate, which the database cannot store in a
    judge item, or a prediction over the benchmark's length limit)."""
    more = error.total - 1
    others = f", and {more:,} more problem(s)" if more > 0 else ""
    return (
        "The judge cannot run on this entry: its predictions file does not pass the checks a "
        f"new upload gets ({error.problems[0]}{others}). Submit a corrected file as a new entry."
    )


def start_judge_if_automatic(evaluation_id: int) -> None:
    """The scored-run hook: start the judge when the benchmark says so and it can run."""
    evaluation = (
        Evaluation.objects.select_related("submission__benchmark").filter(pk=evaluation_id).first()
    )
    if evaluation is None or evaluation.state != EvaluationStatus.SCORED:
        return
    benchmark = evaluation.submission.benchmark
    if not benchmark.judge_auto_start or judge_unavailable_reason(benchmark):
        return
    try:
        start_judge(evaluation)
    except DomainError as error:
        # A refusal with its reason (the stored file fails today's checks, say): no traceback.
        logger.warning("the judge was not started for evaluation %s: %s", evaluation_id, error)
    except Exception:
        # The run is scored and safe; the judge can be started by hand.
        logger.exception("starting the judge for evaluation %s failed", evaluation_id)


def enqueue_job(job_id: int) -> None:
    # Imported here: django_q pulls in its models, and this module is imported at start-up.
    from django_q.tasks import async_task

    async_task("judging.tasks.task_run_judge_job", job_id, q_options={"group": "judge"})
    lifecycle.record_sent(JudgeJob, job_id)


# --- the job's one status writer ---------------------------------------------------------------


def set_job_status(
    job: JudgeJob, new: JobStatus, *, actor: Any = None, message: str | None = None, note: str = ""
) -> JudgeJob:
    """The one writer of `JudgeJob.status` (`inference.lifecycle.set_status`)."""
    return lifecycle.set_status(JUDGE_JOBS, job, new, actor=actor, message=message, note=note)


@dataclass(frozen=True)
class Judgement:
    """A job's verdicts aggregated (spec 5), with what each judge metric aggregated (issue
    12's intervals) and the parsed test set they index."""

    outcome: JudgeOutcome
    contributions: Mapping[str, Any]  # the plugin's, by judge metric
    test_set: Any

    def publish(self, evaluation: Evaluation, **options: Any) -> Evaluation:
        return publish_judge_metrics(
            evaluation,
            self.outcome,
            contributions=self.contributions,
            test_set=self.test_set,
            **options,
        )


def _judgement(job: JudgeJob) -> Judgement:
    """The job's verdicts aggregated as spec 5 says (failed items excluded)."""
    evaluation = job.evaluation
    submission = evaluation.submission
    plugin = plugin_for(submission.benchmark)
    test_set = load_scoring_testset(evaluation.test_set)
    predictions = plugin.check_predictions(
        predictions_bytes(submission),
        test_set,
        options=submission.options,
        max_prediction_chars=None,
    )
    judge = plugin.judge
    items = judge.items(test_set, predictions)
    rubric = Rubric.from_dict(job.rubric_settings, template=job.rubric_template)
    verdicts = dict(job.items.filter(state=ItemState.DONE).values_list("key", "verdict__scores"))
    return Judgement(
        outcome=judge.outcome(test_set, items, verdicts, rubric),
        contributions=judge.contributions(test_set, items, verdicts, rubric),
        test_set=test_set,
    )


def _summary(outcome: JudgeOutcome) -> str:
    return ", ".join(
        f"{name} {counts['judged']:,}/{counts['items']:,}"
        for name, counts in outcome.counts.items()
    )


def _last_error(job: JudgeJob) -> str:
    errors = list(
        job.items.filter(state=ItemState.FAILED)
        .exclude(last_error="")
        .values_list("last_error", flat=True)[:1]
    )
    return f" The last error: {errors[0]}" if errors else ""


def finish_job(job: JudgeJob) -> JudgeJob:
    """Once no item is pending: aggregate the verdicts (spec 5) and publish the metrics when
    every item has one (the job is done, the run complete). Items whose answers were unusable
    after every attempt hold the job instead: nothing is published until a maintainer accepts
    the judgement without them (`accept_partial_judgement`) or stops it. A metric that had
    items and not one verdict fails the job (nothing published, the metrics stay pending)."""
    forget_estimate(job)
    progress = save_progress(job, heartbeat=False)
    evaluation = job.evaluation
    judgement = _judgement(job)
    outcome = judgement.outcome
    if outcome.unavailable:
        return _fail_job(
            job,
            f"No {' or '.join(outcome.unavailable)} item could be judged after "
            f"{job.endpoint.max_attempts} attempts each.{_last_error(job)}",
        )
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
        if locked.state != JobStatus.RUNNING:
            return locked
        locked.outcome = {**outcome.to_dict(), "calls": progress.calls}
        locked.save(update_fields=["outcome"])
        if progress.failed:
            set_job_status(
                locked,
                JobStatus.HELD,
                message=(
                    f"{progress.failed:,} of {progress.total:,} items got no usable verdict after "
                    f"{job.endpoint.max_attempts} attempts each ({_summary(outcome)} judged), so "
                    f"nothing is published yet: a maintainer may accept the judgement without "
                    f"them (the board then says how many items each metric is over) or cancel it "
                    f"and judge again.{_last_error(job)}"
                ),
            )
            failed, total = progress.failed, progress.total
            transaction.on_commit(lambda: notify_judge_held(locked.evaluation_id, failed, total))
            return locked
        set_job_status(locked, JobStatus.DONE, message=f"Judged: {_summary(outcome)}.")
        judgement.publish(evaluation, note=f"judge job {job.pk}")
    return locked


def accept_partial_judgement(job: JudgeJob, *, actor: Any, note: str) -> JudgeJob:
    """A maintainer (`judging.rerun_judgejob`) publishes a held job's metrics without the items
    that got no usable verdict, saying why in `note`. The job is done, the run complete, its
    result's counts say how many items each metric is over (the board and the entry page show
    it); the audit trail records who accepted how many exclusions. `InvalidTransition` for a
    job that is not held; `DomainError` without the permission or a note."""
    if not (getattr(actor, "is_authenticated", False) and actor.has_perm(RERUN_PERMISSION)):
        raise DomainError("Only a maintainer may accept a judgement that leaves items out.")
    note = note.strip()
    if not note:
        raise DomainError("Say why the judgement is accepted without the failed items.")
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().select_related("endpoint").get(pk=job.pk)
        if locked.state != JobStatus.HELD:
            raise InvalidTransition(
                f"Only a judge job waiting for a maintainer can be accepted; this one is "
                f"{locked.state.label.lower()}."
            )
        judgement = _judgement(locked)
        outcome = judgement.outcome
        excluded = {
            name: counts["failed"] for name, counts in outcome.counts.items() if counts["failed"]
        }
        locked.outcome = {**outcome.to_dict(), "calls": locked.calls, "accepted_partial": True}
        locked.save(update_fields=["outcome"])
        over = "; ".join(
            f"{name} over {counts['judged']:,} of {counts['items']:,} items"
            for name, counts in outcome.counts.items()
            if counts["failed"]
        )
        set_job_status(
            locked,
            JobStatus.DONE,
            actor=actor,
            message=f"Judged: {_summary(outcome)}. Accepted without the failed items: {over}.",
            note=note,
        )
        audit.record(
            "judging.job.partial_accepted",
            actor=actor,
            target=locked,
            excluded=excluded,
            note=note,
        )
        judgement.publish(
            locked.evaluation,
            actor=actor,
            note=f"judge job {locked.pk}, accepted without {sum(excluded.values()):,} items",
            accept_partial=True,
        )
    return locked


def _fail_job(job: JudgeJob, message: str) -> JudgeJob:
    """Fail the job with `message` and hand the run back to `scored` (judge pending)."""
    forget_estimate(job)
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
        if locked.state.is_terminal:
            return locked
        set_job_status(locked, JobStatus.FAILED, message=message)
        transaction.on_commit(lambda: notify_judge_failed(locked.evaluation_id, message))
        evaluation = Evaluation.objects.select_for_update().get(pk=locked.evaluation_id)
        if evaluation.state == EvaluationStatus.JUDGING:
            set_evaluation_status(evaluation, EvaluationStatus.SCORED, note=message)
    return locked


def cancel_job(job: JudgeJob, *, actor: Any) -> JudgeJob:
    """Stop a job (its worker notices at its next heartbeat); the run goes back to `scored`."""
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
        if locked.state.is_terminal:
            return locked
        # Claims go now, not when the worker notices: another job need not wait for them.
        VerdictClaim.objects.filter(job=locked).delete()
        set_job_status(locked, JobStatus.CANCELLED, actor=actor, message="Cancelled.")
        evaluation = Evaluation.objects.select_for_update().get(pk=locked.evaluation_id)
        if evaluation.state == EvaluationStatus.JUDGING:
            set_evaluation_status(evaluation, EvaluationStatus.SCORED, actor=actor)
    return locked


JUDGE_JOBS = lifecycle.JobKind(
    model=JudgeJob,
    label="A judge job",
    audit_prefix="judging.job",
    stale_after=stale_after,
    max_runs=max_runs,
    enqueue=lambda pk: enqueue_job(pk),
    fail=lambda job, message: _fail_job(job, message),
    too_many_runs="The judge worker stopped too many times; a maintainer can rerun it.",
)
