"""Running a battle job in a worker: claim it, take what the verdict cache holds, send the rest
with bounded concurrency, write each reading as it arrives, and hand the job back to the queue
when its time slice is over (`inference.lifecycle`). When no call is pending the job finishes
(`jobs.finish_job`: the battles stored, the category rated)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from benchmark.plugins import plugin_for
from core.bulk import update_rows
from inference import lifecycle
from inference.client import EndpointError, EndpointUnreachable, OutageState
from judging.client import ENDPOINT_NAME, JudgeClient
from judging.models import Verdict

from ..client import Reading, read_many
from ..enums import ItemState, JobStatus
from ..models import VERDICT_CACHE_VERSION, BattleItem, BattleJob
from .jobs import ARENA, BATTLE_JOBS, fail_job, finish_job

logger = logging.getLogger(__name__)
BULK_BATCH = 1000
ITEM_FIELDS = (
    "state",
    "verdict",
    "reading",
    "from_cache",
    "attempts",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "last_error",
)


def save_progress(
    job: BattleJob, *, heartbeat: bool = True, outage: OutageState | None = None
) -> None:
    """Refresh the job's counters from its items (and its heartbeat, and the endpoint's outage
    when given) while it runs."""
    counts = job.items.aggregate(
        done=Count("id", filter=Q(state=ItemState.DONE)),
        failed=Count("id", filter=Q(state=ItemState.FAILED)),
        cached=Count("id", filter=Q(from_cache=True)),
        calls=Sum("calls", default=0),
        prompt_tokens=Sum("prompt_tokens", default=0),
        completion_tokens=Sum("completion_tokens", default=0),
    )
    values = {
        "items_done": counts["done"],
        "items_failed": counts["failed"],
        "items_cached": counts["cached"],
        "calls": counts["calls"],
        "prompt_tokens": counts["prompt_tokens"],
        "completion_tokens": counts["completion_tokens"],
    }
    if heartbeat:
        values["heartbeat_at"] = timezone.now()
    if outage is not None:
        values["unreachable_since"], values["next_try_at"] = outage.since, outage.next_try_at
        values["last_transient_error"] = outage.last_error
    for name, value in values.items():
        setattr(job, name, value)
    BattleJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(**values)


def _use_cache(job: BattleJob, read_verdict: Callable[[str], str | None]) -> None:
    """Pending calls whose prompt the judge model answered before (in any job) take that
    verdict: no call. A cached reply the plugin no longer reads as a verdict is asked again."""
    pending = list(job.items.filter(state=ItemState.PENDING))
    hashes = sorted({item.prompt_sha256 for item in pending})
    cached: dict[str, tuple[int, str]] = {}
    for start in range(0, len(hashes), BULK_BATCH):
        for digest, verdict_id, answer in Verdict.objects.filter(
            model=job.model,
            rubric_version=VERDICT_CACHE_VERSION,
            prompt_sha256__in=hashes[start : start + BULK_BATCH],
        ).values_list("prompt_sha256", "id", "answer"):
            cached[digest] = (verdict_id, answer)
    hits = []
    for item in pending:
        if item.prompt_sha256 not in cached:
            continue
        verdict_id, answer = cached[item.prompt_sha256]
        reading = read_verdict(answer)
        if reading is None:
            continue
        item.state, item.verdict_id, item.reading, item.from_cache = (
            ItemState.DONE,
            verdict_id,
            reading,
            True,
        )
        hits.append(item)
    update_rows(BattleItem, hits, ["state", "verdict", "reading", "from_cache"])


def _record(
    job: BattleJob,
    readings: list[Reading],
    items: dict[int, BattleItem],
    duplicates: dict[int, list[BattleItem]],
) -> None:
    """Write a batch of readings in one transaction: each verdict into the judge's cache (one
    another job cached meanwhile is kept), each call (and the job's other calls with the same
    prompt) judged or failed, with what it cost. Only a call whose every answer was unusable
    fails; one cut short by the end of the run stays pending."""
    changed: list[BattleItem] = []
    verdicts = []
    for reading in readings:
        item = items[reading.key]
        item.attempts += reading.attempts
        item.calls += reading.calls
        item.prompt_tokens += reading.prompt_tokens
        item.completion_tokens += reading.completion_tokens
        if reading.reading is None:
            if reading.attempts >= job.endpoint.max_attempts:
                for target in (item, *duplicates.get(reading.key, ())):
                    target.state, target.last_error = ItemState.FAILED, reading.error[:2000]
                    changed.append(target)
            else:
                changed.append(item)
            continue
        verdicts.append(
            Verdict(
                model=job.model,
                rubric_version=VERDICT_CACHE_VERSION,
                prompt_sha256=item.prompt_sha256,
                scores={"reading": reading.reading},
                answer=reading.answer,
                prompt_tokens=reading.prompt_tokens,
                completion_tokens=reading.completion_tokens,
                latency_ms=reading.latency_ms,
                endpoint=job.endpoint,
            )
        )
    with transaction.atomic():
        if verdicts:
            Verdict.objects.bulk_create(
                verdicts,
                update_conflicts=True,
                unique_fields=["model", "rubric_version", "prompt_sha256"],
                update_fields=["model"],
            )
            by_hash = {verdict.prompt_sha256: verdict for verdict in verdicts}
            for reading in readings:
                if reading.reading is None:
                    continue
                item = items[reading.key]
                for target in (item, *duplicates.get(reading.key, ())):
                    target.state, target.verdict = ItemState.DONE, by_hash[item.prompt_sha256]
                    target.reading, target.last_error = reading.reading, ""
                    target.from_cache = target is not item
                    changed.append(target)
        update_rows(BattleItem, changed, ITEM_FIELDS)


def _still_running(job: BattleJob) -> bool:
    return BattleJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).exists()


def run_job(job_id: int, *, time_budget: float | None = None) -> BattleJob | None:
    """Work on a job until no judge call is pending (then finish it) or `time_budget` seconds
    have passed (then hand it back to the queue). Safe to call twice: a job another live
    worker holds, or a finished one, is left alone. Returns the job, or None if it was not
    claimed. An endpoint that refuses the calls, or stays unreachable past the outage limit,
    fails the job (nothing is stored from it; its verdicts stay cached)."""
    job = lifecycle.claim(BATTLE_JOBS, job_id)
    if job is None:
        return None
    try:
        pairwise = plugin_for(job.benchmark).pairwise
        if pairwise is None:
            return fail_job(job, f"{job.benchmark.name} has no pairwise battles any more.")
        _use_cache(job, pairwise.read_verdict)
        save_progress(job)
        pending = list(job.items.filter(state=ItemState.PENDING).order_by("id"))
        # Identical prompts in one job (two opponents with the same answer) are sent once.
        first: dict[str, int] = {}
        items: dict[int, BattleItem] = {}
        duplicates: dict[int, list[BattleItem]] = {}
        unique: list[tuple[int, str]] = []
        for item in pending:
            if item.prompt_sha256 in first:
                duplicates.setdefault(first[item.prompt_sha256], []).append(item)
                continue
            first[item.prompt_sha256] = item.pk
            items[item.pk] = item
            unique.append((item.pk, item.prompt))
        complete = True
        if unique:
            complete = _send(job, unique, items, duplicates, pairwise.read_verdict, time_budget)
        if not complete:
            if _still_running(job):
                save_progress(job)
                lifecycle.end_slice(BATTLE_JOBS, job.pk)
            return job
        save_progress(job, heartbeat=False)
        return finish_job(job)
    except EndpointUnreachable as error:
        return fail_job(
            job,
            f"{str(error).rstrip('.')}. No battle was stored from this job; running it again "
            "pays only for what is not cached.",
        )
    except EndpointError as error:
        return fail_job(job, str(error))
    except Exception:
        logger.exception("battle job %s failed", job.pk)
        return fail_job(job, "An internal error stopped the battles; a maintainer can rerun them.")


def _send(
    job: BattleJob,
    unique: list[tuple[int, str]],
    items: dict[int, BattleItem],
    duplicates: dict[int, list[BattleItem]],
    read_verdict: Callable[[str], str | None],
    time_budget: float | None,
) -> bool:
    """Judge the job's distinct pending prompts until none is left (True) or the slice ends or
    the job is cancelled (False). The endpoint's outage carries over from the previous slice
    and is saved at every heartbeat."""
    config = job.endpoint.config()
    client = JudgeClient(config)
    outage = ARENA.outage(
        ENDPOINT_NAME,
        OutageState(job.unreachable_since, job.next_try_at, job.last_transient_error),
    )
    clock = lifecycle.Slice(
        budget=time_budget,
        heartbeat=ARENA.heartbeat_seconds(),
        still_running=lambda: _still_running(job),
        beat=lambda: save_progress(job, outage=outage.state()),
    )
    try:
        return read_many(
            unique,
            client=client,
            read_verdict=read_verdict,
            on_readings=lambda readings: _record(job, readings, items, duplicates),
            concurrency=config.concurrency,
            max_attempts=config.max_attempts,
            batch=max(1, config.concurrency // 2),
            backoff=ARENA.backoff(),
            outage=outage,
            should_stop=clock.should_stop,
            tick=clock.tick,
            tick_seconds=min(1.0, ARENA.heartbeat_seconds()),
        )
    finally:
        client.close()
        save_progress(job, heartbeat=False, outage=outage.state())
