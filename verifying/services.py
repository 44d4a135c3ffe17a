"""Verifying an entry by re-running its model: registering the model's endpoint, starting a
re-run, running it (in a worker or in the foreground), scoring and judging its answers, the
discrepancy report, and verifying from it.

A re-run's life mirrors a judge job's (`judging.services`): `start_rerun` builds one item per
test sample and moves the entry from `access_granted` to `verifying`; `run_job` claims the job,
checks that every media file it will send exists, sends the questions with bounded concurrency and
stores each answer as it arrives; a worker runs for a time slice and queues the job again, and
`reap_stale_reruns` hands out again (or fails) a job whose worker stopped beating. When no item
is pending, `finish_job` writes the predictions file, scores it, judges its captions when the
benchmark has a judge step and a judge endpoint, and stores the metrics and the discrepancy
report. What is benchmark-specific (the media and message of a question, the predictions file,
checking and scoring it) is the benchmark plugin's (`plugin_for(benchmark)`, its `rerun`). A failed or
cancelled job hands the entry back to `access_granted`. `verify_from_report` is the one click
from a report to the Official board.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from benchmark.plugins import BenchmarkPlugin, Rerun, plugin_for
from benchmark.scoring.errors import PredictionsError
from benchmark.scoring.strict_json import without_refused_characters
from benchmark.selectors import load_scoring_testset
from core import audit, private_files
from core.bulk import update_rows
from core.exceptions import DomainError, InvalidTransition
from inference import lifecycle
from inference.answering import ENDPOINT_NAME as MODEL_ENDPOINT
from inference.answering import Answer, Content, ModelClient, answer_many
from inference.client import EndpointError
from submissions.enums import VerificationStatus
from submissions.models import Submission
from submissions.selectors import newest_scored_run
from submissions.services import set_verification_status

from . import endpoints
from .config import (
    backoff,
    frames_root,
    heartbeat_seconds,
    max_runs,
    media_root,
    outage,
    stale_after,
)
from .enums import ACTIVE_RERUN_STATES, ItemState, RerunStatus
from .evidence import verify_from_report
from .models import ModelEndpoint, RerunItem, RerunJob
from .report import build_report, judge_captions

logger = logging.getLogger(__name__)

# Found here too: `verify_from_report` is in .evidence with the check it applies, the report in
# .report, the settings in .config.
__all__ = ["build_report", "frames_root", "verify_from_report"]

BULK_BATCH = 1000
MISSING_MEDIA_SHOWN = 5


def benchmark_rerun(benchmark: Any) -> tuple[BenchmarkPlugin, Rerun]:
    """The benchmark's plugin and its re-run, or `DomainError` when its model cannot be
    re-run (a plugin without one; `getattr`: a plugin written before re-runs were part of the
    protocol has no attribute at all)."""
    plugin = plugin_for(benchmark)
    rerun = getattr(plugin, "rerun", None)
    if rerun is None:
        raise DomainError(f"{benchmark.name}'s plugin cannot re-run a model for verification.")
    return plugin, rerun


# --- endpoints ---------------------------------------------------------------------------------


# `verifying.endpoints` holds the endpoint's writes; these two are re-exported for callers.
active_endpoint = endpoints.active_endpoint
register_endpoint = endpoints.register_endpoint


# --- starting a re-run -------------------------------------------------------------------------


def active_job(submission: Submission) -> RerunJob | None:
    return submission.reruns.filter(status__in=ACTIVE_RERUN_STATES).first()


def start_rerun(
    submission: Submission,
    endpoint: ModelEndpoint | None = None,
    *,
    actor: Any,
    enqueue: bool = True,
) -> RerunJob:
    """Create a re-run of the entry's model on the test set its self-reported result was scored
    against, one item per test sample, and queue it (on commit). The entry moves from
    `access_granted` to `verifying`. Refused (`InvalidTransition`, `DomainError`) unless the
    entry's authors granted access, the endpoint is the entry's and has its key, and the entry
    has a scored run to compare with. Returns the job."""
    endpoint = endpoint or active_endpoint(submission)
    if endpoint is None:
        raise DomainError("Register the model's endpoint before starting a re-run.")
    if endpoint.submission_id != submission.pk:
        raise DomainError("That endpoint belongs to another entry.")
    if endpoint.missing_key:
        raise DomainError(
            "The model endpoint needs an API key that has not been entered: the entry's owner "
            "enters it on the entry's page (or a superuser in the admin)."
        )
    if endpoint.key_moved:
        raise DomainError(
            "The model endpoint's API key was entered for another address; it is never sent "
            "elsewhere. The entry's owner (or a superuser) enters it again for this one."
        )
    benchmark_rerun(submission.benchmark)
    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission.pk)
        if submission.verification_status != VerificationStatus.ACCESS_GRANTED:
            current = VerificationStatus(submission.verification_status)
            raise InvalidTransition(
                f"A re-run starts once the authors granted access; this entry is "
                f"{current.label.lower()}."
            )
        run = newest_scored_run(submission)
        if run is None or run.test_set_id is None:
            raise DomainError("The entry has no scored run to compare a re-run with.")
        test_set = load_scoring_testset(run.test_set)
        job = RerunJob.objects.create(
            submission=submission,
            endpoint=endpoint,
            test_set=run.test_set,
            requested_by=actor if getattr(actor, "is_authenticated", False) else None,
            max_frames=submission.benchmark.rerun_max_frames,
            items_total=len(test_set),
        )
        RerunItem.objects.bulk_create(
            [RerunItem(job=job, sample_index=index) for index in range(len(test_set))],
            batch_size=BULK_BATCH,
        )
        set_verification_status(
            submission, VerificationStatus.VERIFYING, actor=actor, note=f"re-run {job.pk}"
        )
        audit.record(
            "verifying.rerun.created",
            actor=actor,
            target=job,
            submission=submission.pk,
            items=len(test_set),
            model=endpoint.model,
            base_url=endpoint.base_url,
        )
        if enqueue:
            transaction.on_commit(lambda: enqueue_job(job.pk))
    return job


def enqueue_job(job_id: int) -> None:
    # Imported here: django_q pulls in its models, and this module is imported at start-up.
    from django_q.tasks import async_task

    async_task("verifying.tasks.task_run_rerun_job", job_id, q_options={"group": "rerun"})
    lifecycle.record_sent(RerunJob, job_id)


# --- the job's one status writer ---------------------------------------------------------------


def set_rerun_status(
    job: RerunJob,
    new: RerunStatus,
    *,
    actor: Any = None,
    message: str | None = None,
    note: str = "",
) -> RerunJob:
    """The one writer of `RerunJob.status` (`inference.lifecycle.set_status`). Call it inside the
    caller's transaction."""
    return lifecycle.set_status(RERUN_JOBS, job, new, actor=actor, message=message, note=note)


# --- running a job -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    total: int
    done: int
    failed: int
    calls: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def finished(self) -> int:
        return self.done + self.failed


def job_progress(job: RerunJob) -> Progress:
    """Counted from the items (the truth the job's counters cache)."""
    counts = job.items.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(state=ItemState.DONE)),
        failed=Count("id", filter=Q(state=ItemState.FAILED)),
        calls=Sum("calls", default=0),
        prompt_tokens=Sum("prompt_tokens", default=0),
        completion_tokens=Sum("completion_tokens", default=0),
    )
    return Progress(**counts)


def _save_progress(job: RerunJob, *, heartbeat: bool = True) -> Progress:
    progress = job_progress(job)
    values = {
        "items_done": progress.done,
        "items_failed": progress.failed,
        "calls": progress.calls,
        "prompt_tokens": progress.prompt_tokens,
        "completion_tokens": progress.completion_tokens,
    }
    if heartbeat:
        values["heartbeat_at"] = timezone.now()
    for name, value in values.items():
        setattr(job, name, value)
    RerunJob.objects.filter(pk=job.pk, status=RerunStatus.RUNNING).update(**values)
    return progress


def _claim(job_id: int) -> RerunJob | None:
    return lifecycle.claim(RERUN_JOBS, job_id)


TOO_MANY_RUNS = "The re-run's worker stopped too many times; start the re-run again."


def run_job(
    job_id: int,
    *,
    time_budget: float | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RerunJob | None:
    """Work on a job until no item is pending (then finish it) or `time_budget` seconds have
    passed (then hand it back to the queue). Before anything is sent, every media file the
    pending items need must exist, else the job fails naming the first missing paths. Safe to call
    twice: a job another live worker holds, or a finished one, is left alone. Returns the job,
    or None if it was not claimed."""
    job = _claim(job_id)
    if job is None:
        return None
    try:
        _, rerun = benchmark_rerun(job.submission.benchmark)
        test_set = load_scoring_testset(job.test_set)
        pending = list(job.items.filter(state=ItemState.PENDING).order_by("sample_index"))
        root = media_root(job.submission.benchmark, rerun)
        indexes = [item.sample_index for item in pending]
        missing = rerun.missing_media(test_set, root, job.max_frames, indexes)
        if missing:
            return _fail_job(job, missing_media_message(missing, rerun.media_label, root))
        progress = _save_progress(job)
        if on_progress:
            on_progress(progress)
        complete = True
        if pending:
            questions = rerun.questions(test_set, root, job.max_frames, indexes)
            complete = _send(job, questions, pending, time_budget, on_progress)
        if not complete:
            if _still_running(job):
                _save_progress(job)
                lifecycle.end_slice(RERUN_JOBS, job.pk)
            return job
        return finish_job(job)
    except (EndpointError, DomainError) as error:
        return _fail_job(job, str(error))
    except Exception:
        logger.exception("re-run %s failed", job.pk)
        return _fail_job(job, "An internal error stopped the re-run; start it again.")


def missing_media_message(missing: list[str], label: str, root: Path) -> str:
    """ "2 frame files are missing under the frames folder (ROOT): a, b. ..." (the first
    `MISSING_MEDIA_SHOWN`, the rest counted)."""
    shown = ", ".join(missing[:MISSING_MEDIA_SHOWN])
    more = (
        f" and {len(missing) - MISSING_MEDIA_SHOWN} more"
        if len(missing) > MISSING_MEDIA_SHOWN
        else ""
    )
    return (
        f"{len(missing)} {label} files are missing under the {label}s folder "
        f"({root}): {shown}{more}. Nothing was sent to the model."
    )


def _send(
    job: RerunJob,
    questions: Iterable[tuple[int, Callable[[], Content]]],
    pending: list[RerunItem],
    time_budget: float | None,
    on_progress: Callable[[Progress], None] | None,
) -> bool:
    # As hosted evaluation: an answer longer than the benchmark takes is set aside as over-long.
    config = replace(
        job.endpoint.config(), max_answer_chars=job.submission.benchmark.max_prediction_chars
    )
    client = ModelClient(config)
    items = {item.sample_index: item for item in pending}

    def beat() -> None:
        progress = _save_progress(job)
        if on_progress:
            on_progress(progress)

    clock = lifecycle.Slice(
        budget=time_budget,
        heartbeat=heartbeat_seconds(),
        still_running=lambda: _still_running(job),
        beat=beat,
    )

    def on_answers(answers: list[Answer]) -> None:
        _record(answers, items)
        if on_progress:
            on_progress(_save_progress(job, heartbeat=False))

    try:
        return answer_many(
            questions,
            client=client,
            on_answers=on_answers,
            concurrency=config.concurrency,
            max_attempts=config.max_attempts,
            batch=max(1, config.concurrency // 2),
            backoff=backoff(),
            outage=outage(MODEL_ENDPOINT),
            should_stop=clock.should_stop,
            tick=clock.tick,
            tick_seconds=min(1.0, heartbeat_seconds()),
            thread_name="rerun",
        )
    finally:
        client.close()


ITEM_FIELDS = (
    "state",
    "answer",
    "attempts",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "last_error",
)


def _record(answers: list[Answer], items: dict[int, RerunItem]) -> None:
    """Write a batch of answers in one statement; an item whose attempts all failed keeps ""."""
    changed = []
    for answer in answers:
        item = items[answer.key]
        item.attempts += answer.attempts
        item.calls += answer.calls
        item.prompt_tokens += answer.prompt_tokens
        item.completion_tokens += answer.completion_tokens
        if answer.answer is None:
            item.state, item.answer, item.last_error = ItemState.FAILED, "", answer.error[:2000]
        else:
            # The model's text as the strict reader will take it: a NUL (which PostgreSQL
            # cannot store) or another control character from a hostile or broken model is
            # dropped here, so the batch is written and the item stays done.
            text = without_refused_characters(answer.answer)
            item.state, item.answer, item.last_error = ItemState.DONE, text, ""
        changed.append(item)
    with transaction.atomic():
        update_rows(RerunItem, changed, ITEM_FIELDS)


def _still_running(job: RerunJob) -> bool:
    return RerunJob.objects.filter(pk=job.pk, status=RerunStatus.RUNNING).exists()


# --- finishing: predictions file, scores, judge, report -----------------------------------------


def finish_job(job: RerunJob) -> RerunJob:
    """Collect the answers as a predictions file in the benchmark's format (its plugin's
    `rerun.predictions_file`, in test-set order), check and score it with the plugin in the
    convention the entry declared (its `options`, e.g. MedSG-Bench's box format), judge its
    captions when the benchmark has a judge step and a usable judge endpoint (else the judge
    metrics stay None: "pending"), build the discrepancy report and end the job. A file the
    plugin refuses fails the job with the plugin's problems."""
    progress = _save_progress(job, heartbeat=False)
    submission = job.submission
    plugin, rerun = benchmark_rerun(submission.benchmark)
    options = dict(submission.options or {})
    test_set = load_scoring_testset(job.test_set)
    answers = dict(job.items.values_list("sample_index", "answer"))
    raw = rerun.predictions_file(test_set, answers, options)
    try:
        predictions = plugin.check_predictions(
            raw, test_set, options=options, max_prediction_chars=None
        )
    except PredictionsError as error:
        problems = "; ".join(str(problem) for problem in error.problems[:MISSING_MEDIA_SHOWN])
        return _fail_job(job, f"The re-run's answers are not a file the scorer reads: {problems}.")
    scored, _ = plugin.score(test_set, predictions, options=options)
    result, metrics = scored.to_dict(), dict(scored.metrics)
    if plugin.judge is not None:
        # The benchmark's judge (MedVidBench's captions) with its endpoint and the verdict cache.
        outcome, judge_note = judge_captions(job, test_set, predictions)
        if outcome is not None:
            result = plugin.judge.with_outcome(result, outcome)
            metrics = dict(result["metrics"])
    else:
        judge_note = f"{submission.benchmark.name} has no judge step: every metric is scored."
    report = build_report(job.submission, metrics, failed_items=progress.failed)
    report["judge"] = judge_note
    # The file first, then the row that names it. A name of its own each time: a job finished
    # twice (a redelivered task) never writes over the file a row names; the loser deletes its
    # own again.
    stored = private_files.save(
        f"reruns/{submission.benchmark.slug}/rerun-{job.pk}-{uuid.uuid4().hex[:12]}.json", raw
    )
    with transaction.atomic():
        locked = RerunJob.objects.select_for_update().get(pk=job.pk)
        if locked.state != RerunStatus.RUNNING:
            transaction.on_commit(lambda: private_files.delete_unnamed(stored))
            return locked
        locked.predictions_file = stored
        locked.metrics = metrics
        locked.result = result
        locked.report = report
        locked.save(update_fields=["predictions_file", "metrics", "result", "report"])
        verdict = "all within" if report["all_within"] else "not all within"
        set_rerun_status(
            locked,
            RerunStatus.DONE,
            message=(
                f"Re-run complete: {progress.done} answered, {progress.failed} failed; "
                f"{verdict} the tolerance of {report['tolerance']:g}."
            ),
        )
    return locked


# --- failing, cancelling --------------------------------------------------------------


def _fail_job(job: RerunJob, message: str) -> RerunJob:
    """Fail the job with `message` and hand the entry back to `access_granted`."""
    with transaction.atomic():
        locked = RerunJob.objects.select_for_update().get(pk=job.pk)
        if locked.state.is_terminal:
            return locked
        set_rerun_status(locked, RerunStatus.FAILED, message=message)
        _back_to_access_granted(locked, actor=None, note=f"re-run {locked.pk} failed: {message}")
    return locked


def cancel_rerun(job: RerunJob, *, actor: Any) -> RerunJob:
    """Stop a job (its worker notices at its next heartbeat); the entry goes back to
    `access_granted`."""
    with transaction.atomic():
        locked = RerunJob.objects.select_for_update().get(pk=job.pk)
        if locked.state.is_terminal:
            return locked
        set_rerun_status(locked, RerunStatus.CANCELLED, actor=actor, message="Cancelled.")
        _back_to_access_granted(locked, actor=actor, note=f"re-run {locked.pk} cancelled")
    return locked


def _back_to_access_granted(job: RerunJob, *, actor: Any, note: str) -> None:
    submission = job.submission
    submission.refresh_from_db(fields=["verification_status"])
    if submission.verification_status == VerificationStatus.VERIFYING:
        set_verification_status(
            submission, VerificationStatus.ACCESS_GRANTED, actor=actor, note=note
        )


# --- the reaper ----------------------------------------------------------------------------------


def reap_stale_reruns(*, as_task: bool = False) -> int:
    """Hand jobs whose worker stopped beating back to the queue (or fail them once picked up
    too often), and queue again jobs that waited too long for a worker. Returns how many were
    touched. Scheduled every minute."""
    return lifecycle.reap(RERUN_JOBS, as_task=as_task)


def reap_dead_workers_reruns() -> int:
    """Only the stale half of `reap_stale_reruns`, for the workers' few-second watchdog."""
    return lifecycle.reap_stale(RERUN_JOBS)


RERUN_JOBS = lifecycle.JobKind(
    model=RerunJob,
    label="A re-run",
    audit_prefix="verifying.rerun",
    stale_after=stale_after,
    max_runs=max_runs,
    enqueue=lambda pk: enqueue_job(pk),
    fail=lambda job, message: _fail_job(job, message),
    too_many_runs=TOO_MANY_RUNS,
)
