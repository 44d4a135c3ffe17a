"""The LLM judge's writes: configuring endpoints, starting a job, running it (in a worker or in
the foreground), finishing it, and reaping jobs whose worker died.

A job's life: `start_judge` builds its items from the run's predictions (spec 5) and moves the
run to `judging`; `run_job` claims the job, answers what it can from the verdict cache, sends
the rest with bounded concurrency, and writes each item's outcome as soon as it arrives; when no
item is pending it aggregates and publishes the three metrics (the run completes, the board
follows). A worker runs a job for a time slice and hands it back to the queue, so no django-q2
timeout ever kills it mid-flight; a worker that dies stops its heartbeat, and `reap_stale_jobs`
hands the job out again or fails it. A failed job returns the run to `scored`: the judge
metrics stay pending and the job can be rerun, paying only for what is not cached.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from benchmark import scoring
from benchmark.models import Benchmark
from benchmark.scoring.judge import Rubric, RubricError, aggregate, build_items
from benchmark.selectors import TestSetFileError, load_scoring_testset
from core import audit
from core.exceptions import InvalidTransition, JudgeUnavailable
from submissions.enums import EvaluationStatus
from submissions.judge_step import copy_for_rejudge, publish_judge_metrics
from submissions.models import Evaluation
from submissions.notifications import notify_judge_failed
from submissions.services import set_evaluation_status

from . import lifecycle
from .client import Backoff, ChatClient, EndpointError, Outcome, judge_many
from .enums import ACTIVE_JOB_STATES, ItemState, JobStatus
from .models import JudgeEndpoint, JudgeItem, JudgeJob, Verdict

logger = logging.getLogger(__name__)

BULK_BATCH = 1000


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def heartbeat_seconds() -> float:
    return _setting("PODIUM_JUDGE_HEARTBEAT_SECONDS", 5.0)


def stale_after() -> timedelta:
    """A running job whose heartbeat is older than this has lost its worker."""
    return timedelta(seconds=_setting("PODIUM_JUDGE_STALE_SECONDS", 60.0))


def max_runs() -> int:
    """How many times a job may be picked up after its worker died before it fails."""
    return _setting("PODIUM_JUDGE_MAX_RUNS", 20)


def backoff() -> Backoff:
    return Backoff(base=_setting("PODIUM_JUDGE_BACKOFF_SECONDS", 1.0))


worker_id = lifecycle.worker_id


# --- endpoints ---------------------------------------------------------------------------------


def active_endpoint(benchmark: Benchmark) -> JudgeEndpoint | None:
    return JudgeEndpoint.objects.filter(benchmark=benchmark, is_active=True).first()


def judge_unavailable_reason(benchmark: Benchmark) -> str:
    """Why the judge cannot run for this benchmark now ("" when it can)."""
    if not benchmark.has_judge:
        return f"{benchmark.name} has no judged metrics."
    endpoint = active_endpoint(benchmark)
    if endpoint is None:
        return (
            "No LLM judge endpoint is configured for this benchmark yet, so the caption metrics "
            "stay pending. The maintainers have to configure one; no substitute score is ever "
            "shown in its place."
        )
    if endpoint.missing_key:
        # Shown to submitters: which variable (or whether one is set) is for the superusers'
        # judge endpoint admin only.
        return (
            f"The judge endpoint {endpoint.name!r} has no API key configured, so the caption "
            "metrics stay pending until a superuser configures one."
        )
    return ""


def configure_endpoint(
    benchmark: Benchmark, *, name: str, actor: Any = None, **fields: Any
) -> JudgeEndpoint:
    """Create or update the benchmark's endpoint called `name` and make it the active one."""
    with transaction.atomic():
        JudgeEndpoint.objects.filter(benchmark=benchmark, is_active=True).exclude(name=name).update(
            is_active=False
        )
        endpoint, created = JudgeEndpoint.objects.update_or_create(
            benchmark=benchmark, name=name, defaults={**fields, "is_active": True}
        )
        endpoint.full_clean()
        audit.record(
            "judging.endpoint.created" if created else "judging.endpoint.updated",
            actor=actor,
            target=endpoint,
            base_url=endpoint.base_url,
            model=endpoint.model,
        )
    return endpoint


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
    try:
        test_set = load_scoring_testset(evaluation.test_set)
        predictions = scoring.load_predictions(
            evaluation.submission.predictions_path.read_bytes(), test_set
        )
    except (TestSetFileError, OSError, scoring.PredictionsError) as error:
        raise JudgeUnavailable(f"The run's files cannot be read: {error}") from None
    items = build_items(test_set, predictions)

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
    except Exception:
        # The run is scored and safe; the judge can be started by hand.
        logger.exception("starting the judge for evaluation %s failed", evaluation_id)


def enqueue_job(job_id: int) -> None:
    # Imported here: django_q pulls in its models, and this module is imported at start-up.
    from django_q.tasks import async_task

    async_task("judging.tasks.task_run_judge_job", job_id, q_options={"group": "judge"})


# --- the job's one status writer ---------------------------------------------------------------


def set_job_status(
    job: JudgeJob, new: JobStatus, *, actor: Any = None, message: str | None = None, note: str = ""
) -> JudgeJob:
    """The one writer of `JudgeJob.status` (`judging.lifecycle.set_status`)."""
    return lifecycle.set_status(JUDGE_JOBS, job, new, actor=actor, message=message, note=note)


# --- running a job -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    total: int
    done: int
    failed: int
    cached: int
    calls: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def finished(self) -> int:
        return self.done + self.failed


def job_progress(job: JudgeJob) -> Progress:
    """Counted from the items (the truth the job's counters cache)."""
    counts = job.items.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(state=ItemState.DONE)),
        failed=Count("id", filter=Q(state=ItemState.FAILED)),
        cached=Count("id", filter=Q(from_cache=True)),
        calls=Sum("calls", default=0),
        prompt_tokens=Sum("prompt_tokens", default=0),
        completion_tokens=Sum("completion_tokens", default=0),
    )
    return Progress(**counts)


def _save_progress(job: JudgeJob, *, heartbeat: bool = True) -> Progress:
    progress = job_progress(job)
    job.items_done, job.items_failed = progress.done, progress.failed
    job.items_cached, job.calls = progress.cached, progress.calls
    job.prompt_tokens, job.completion_tokens = progress.prompt_tokens, progress.completion_tokens
    job.cost = job.endpoint.cost(progress.prompt_tokens, progress.completion_tokens)
    fields = [
        "items_done",
        "items_failed",
        "items_cached",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "cost",
    ]
    if heartbeat:
        job.heartbeat_at = timezone.now()
        fields.append("heartbeat_at")
    JudgeJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(
        **{name: getattr(job, name) for name in fields}
    )
    return progress


def _claim(job_id: int) -> JudgeJob | None:
    return lifecycle.claim(JUDGE_JOBS, job_id)


def _use_cache(job: JudgeJob) -> None:
    """Pending items whose prompt is already judged take the cached verdict (no call)."""
    pending = list(job.items.filter(state=ItemState.PENDING).only("id", "prompt_sha256", "state"))
    hashes = sorted({item.prompt_sha256 for item in pending})
    cached: dict[str, int] = {}
    for start in range(0, len(hashes), BULK_BATCH):
        cached.update(
            Verdict.objects.filter(
                model=job.model,
                rubric_version=job.rubric_version,
                prompt_sha256__in=hashes[start : start + BULK_BATCH],
            ).values_list("prompt_sha256", "id")
        )
    hits = []
    for item in pending:
        verdict_id = cached.get(item.prompt_sha256)
        if verdict_id is not None:
            item.state, item.verdict_id, item.from_cache = ItemState.DONE, verdict_id, True
            hits.append(item)
    with transaction.atomic():
        JudgeItem.objects.bulk_update(
            hits, ["state", "verdict", "from_cache"], batch_size=BULK_BATCH
        )


ITEM_FIELDS = (
    "state",
    "verdict",
    "from_cache",
    "attempts",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "last_error",
)


def _record(
    job: JudgeJob,
    outcomes: list[Outcome],
    items: dict[str, JudgeItem],
    duplicates: dict[str, list[JudgeItem]],
) -> None:
    """Write a batch of outcomes in one transaction: the verdicts into the cache, each item (and
    the job's other items with the same prompt) done or failed, with what it cost. `items` are
    the job's pending items by key, loaded when the run started: only this worker writes them."""
    changed: list[JudgeItem] = []
    verdicts = []
    for outcome in outcomes:
        item = items[outcome.key]
        item.attempts += outcome.attempts
        item.calls += outcome.calls
        item.prompt_tokens += outcome.prompt_tokens
        item.completion_tokens += outcome.completion_tokens
        if outcome.scores is None:
            for target in (item, *duplicates.get(outcome.key, ())):
                target.state, target.last_error = ItemState.FAILED, outcome.error[:2000]
                changed.append(target)
            continue
        verdicts.append(
            Verdict(
                model=job.model,
                rubric_version=job.rubric_version,
                prompt_sha256=item.prompt_sha256,
                scores=outcome.scores,
                answer=outcome.answer,
                prompt_tokens=outcome.prompt_tokens,
                completion_tokens=outcome.completion_tokens,
                latency_ms=outcome.latency_ms,
                endpoint=job.endpoint,
            )
        )
    with transaction.atomic():
        if verdicts:
            # One statement; a verdict another job cached meanwhile is kept (and its id returned).
            Verdict.objects.bulk_create(
                verdicts,
                update_conflicts=True,
                unique_fields=["model", "rubric_version", "prompt_sha256"],
                update_fields=["model"],
            )
            by_hash = {verdict.prompt_sha256: verdict for verdict in verdicts}
            for outcome in outcomes:
                if outcome.scores is None:
                    continue
                item = items[outcome.key]
                item.state, item.verdict, item.last_error = (
                    ItemState.DONE,
                    by_hash[item.prompt_sha256],
                    "",
                )
                changed.append(item)
                for duplicate in duplicates.get(outcome.key, ()):
                    duplicate.state, duplicate.verdict = ItemState.DONE, item.verdict
                    duplicate.from_cache = True
                    changed.append(duplicate)
        JudgeItem.objects.bulk_update(changed, ITEM_FIELDS)


def run_job(
    job_id: int,
    *,
    time_budget: float | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> JudgeJob | None:
    """Work on a job until no item is pending (then finish it) or `time_budget` seconds have
    passed (then hand it back to the queue). Safe to call twice: a job another live worker
    holds, or a finished one, is left alone. Returns the job, or None if it was not claimed."""
    job = _claim(job_id)
    if job is None:
        return None
    _estimate.pop(job.pk, None)
    try:
        _use_cache(job)
        progress = _save_progress(job)
        if on_progress:
            on_progress(progress)
        pending = list(job.items.filter(state=ItemState.PENDING).order_by("id"))
        # Identical prompts in one job are sent once; the rest take the verdict.
        first_key: dict[str, str] = {}
        items: dict[str, JudgeItem] = {}
        duplicates: dict[str, list[JudgeItem]] = {}
        unique: list[tuple[str, str]] = []
        for item in pending:
            if item.prompt_sha256 in first_key:
                duplicates.setdefault(first_key[item.prompt_sha256], []).append(item)
            else:
                first_key[item.prompt_sha256] = item.key
                items[item.key] = item
                unique.append((item.key, item.prompt))
        complete = True
        if unique:
            complete = _send(job, unique, items, duplicates, time_budget, on_progress)
        if not complete:
            if _still_running(job):
                _save_progress(job)
                with transaction.atomic():
                    locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
                    if locked.state == JobStatus.RUNNING:
                        set_job_status(locked, JobStatus.QUEUED, note="time slice over")
                        transaction.on_commit(lambda: enqueue_job(job.pk))
            return job
        return finish_job(job)
    except EndpointError as error:
        return _fail_job(job, str(error))
    except Exception:
        logger.exception("judge job %s failed", job.pk)
        return _fail_job(job, "An internal error stopped the judge; a maintainer can rerun it.")


def _send(
    job: JudgeJob,
    unique: list[tuple[str, str]],
    items: dict[str, JudgeItem],
    duplicates: dict[str, list[JudgeItem]],
    time_budget: float | None,
    on_progress: Callable[[Progress], None] | None,
) -> bool:
    rubric = Rubric.from_dict(job.rubric_settings, template=job.rubric_template)
    config = job.endpoint.config()
    client = ChatClient(config)
    deadline = None if time_budget is None else time.monotonic() + time_budget
    last_beat = time.monotonic()
    cancelled = False

    def tick() -> None:
        nonlocal last_beat, cancelled
        if time.monotonic() - last_beat < heartbeat_seconds():
            return
        last_beat = time.monotonic()
        cancelled = not _still_running(job)
        progress = _save_progress(job)
        if on_progress:
            on_progress(progress)

    def should_stop() -> bool:
        return cancelled or (deadline is not None and time.monotonic() > deadline)

    def on_outcomes(outcomes: list[Outcome]) -> None:
        _record(job, outcomes, items, duplicates)
        if on_progress:
            for outcome in outcomes:
                estimate = _progress_estimate(job, outcome)
            on_progress(estimate)

    try:
        return judge_many(
            unique,
            client=client,
            rubric=rubric,
            on_outcomes=on_outcomes,
            concurrency=config.concurrency,
            max_attempts=config.max_attempts,
            batch=max(1, config.concurrency // 2),
            backoff=backoff(),
            should_stop=should_stop,
            tick=tick,
            tick_seconds=min(1.0, heartbeat_seconds()),
        )
    finally:
        client.close()


_estimate: dict[int, Progress] = {}


def _progress_estimate(job: JudgeJob, outcome: Outcome) -> Progress:
    """A cheap running count for a foreground progress bar (no query per item)."""
    previous = _estimate.get(job.pk) or job_progress(job)
    current = Progress(
        total=previous.total,
        done=previous.done + (outcome.scores is not None),
        failed=previous.failed + (outcome.scores is None),
        cached=previous.cached,
        calls=previous.calls + outcome.calls,
        prompt_tokens=previous.prompt_tokens + outcome.prompt_tokens,
        completion_tokens=previous.completion_tokens + outcome.completion_tokens,
    )
    _estimate[job.pk] = current
    return current


def _still_running(job: JudgeJob) -> bool:
    return JudgeJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).exists()


def finish_job(job: JudgeJob) -> JudgeJob:
    """Aggregate the verdicts (spec 5) and publish the metrics; a metric that had items and not
    one verdict fails the job instead (nothing is published, the metrics stay pending)."""
    _estimate.pop(job.pk, None)
    progress = _save_progress(job, heartbeat=False)
    evaluation = job.evaluation
    test_set = load_scoring_testset(evaluation.test_set)
    predictions = scoring.load_predictions(
        evaluation.submission.predictions_path.read_bytes(), test_set
    )
    items = build_items(test_set, predictions)
    rubric = Rubric.from_dict(job.rubric_settings, template=job.rubric_template)
    verdicts = dict(job.items.filter(state=ItemState.DONE).values_list("key", "verdict__scores"))
    outcome = aggregate(test_set, items, verdicts, rubric)
    if outcome.unavailable:
        errors = list(
            job.items.filter(state=ItemState.FAILED)
            .exclude(last_error="")
            .values_list("last_error", flat=True)[:1]
        )
        detail = f" The last error: {errors[0]}" if errors else ""
        return _fail_job(
            job,
            f"No {' or '.join(outcome.unavailable)} item could be judged after "
            f"{job.endpoint.max_attempts} attempts each.{detail}",
        )
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
        if locked.state != JobStatus.RUNNING:
            return locked
        locked.outcome = {**outcome.to_dict(), "calls": progress.calls}
        locked.save(update_fields=["outcome"])
        summary = ", ".join(
            f"{name} {counts['judged']}/{counts['items']}"
            for name, counts in outcome.counts.items()
        )
        set_job_status(locked, JobStatus.DONE, message=f"Judged: {summary}.")
        publish_judge_metrics(evaluation, outcome, note=f"judge job {job.pk}")
    return locked


def _fail_job(job: JudgeJob, message: str) -> JudgeJob:
    """Fail the job with `message` and hand the run back to `scored` (judge pending)."""
    _estimate.pop(job.pk, None)
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
        set_job_status(locked, JobStatus.CANCELLED, actor=actor, message="Cancelled.")
        evaluation = Evaluation.objects.select_for_update().get(pk=locked.evaluation_id)
        if evaluation.state == EvaluationStatus.JUDGING:
            set_evaluation_status(evaluation, EvaluationStatus.SCORED, actor=actor)
    return locked


# --- the reaper --------------------------------------------------------------------------------


def reap_stale_jobs() -> int:
    """Hand jobs whose worker stopped beating back to the queue (or fail them once they were
    picked up too often), and re-queue jobs that have waited too long for a worker. Returns
    how many were touched. Scheduled every minute."""
    return lifecycle.reap(JUDGE_JOBS)


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
