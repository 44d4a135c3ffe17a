"""Running a judge job in a worker: claim it, answer what the verdict cache holds, send the rest
with bounded concurrency, write each outcome as it arrives, and hand the job back to the queue
when its time slice is over."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

from django.db import transaction

from benchmark.scoring.rubric import Rubric
from core.bulk import update_rows
from inference import lifecycle
from inference.client import EndpointError, EndpointUnreachable, OutageState
from inference.settings import JUDGE

from ..client import ENDPOINT_NAME, JudgeClient, Outcome, judge_many
from ..enums import ItemState, JobStatus
from ..models import JudgeItem, JudgeJob, Verdict
from .claims import cached_verdicts, claim_keys, release_keys
from .endpoints import (
    BULK_BATCH,
    backoff,
    claim_poll_seconds,
    heartbeat_seconds,
)
from .jobs import JUDGE_JOBS, _fail_job, finish_job
from .progress import Progress, forget_estimate, progress_estimate, save_progress

logger = logging.getLogger(__name__)


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
        update_rows(JudgeItem, hits, ["state", "verdict", "from_cache"])


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


def _take_cached(
    job: JudgeJob,
    hits: dict[str, int],
    items: dict[str, JudgeItem],
    duplicates: dict[str, list[JudgeItem]],
    keys: dict[str, str],
) -> None:
    """Items (and their duplicates) whose prompt another job judged meanwhile take its verdict;
    `hits` maps prompt hashes to verdict ids, `keys` hashes to the item keys sent for them."""
    changed = []
    for digest, verdict_id in hits.items():
        key = keys[digest]
        for target in (items[key], *duplicates.get(key, ())):
            target.state, target.verdict_id, target.from_cache = ItemState.DONE, verdict_id, True
            changed.append(target)
    with transaction.atomic():
        update_rows(JudgeItem, changed, ["state", "verdict", "from_cache"])
        release_keys(job, hits)


def _claimed(
    job: JudgeJob,
    pairs: list[tuple[str, str]],
    items: dict[str, JudgeItem],
    duplicates: dict[str, list[JudgeItem]],
    deferred: list[tuple[str, str]],
    chunk: int,
) -> Iterator[tuple[str, str]]:
    """The `(key, prompt)` pairs this job may send now, claimed `chunk` at a time just before
    they go (so at most `chunk` claims wait unsent): a prompt the cache holds by now is taken
    from it, one another live job holds goes to `deferred` (this job comes back to it)."""
    for start in range(0, len(pairs), chunk):
        batch = {
            items[key].prompt_sha256: (key, prompt) for key, prompt in pairs[start : start + chunk]
        }
        held = claim_keys(job, list(batch))
        hits = cached_verdicts(job, held) if held else {}
        if hits:
            _take_cached(job, hits, items, duplicates, {d: batch[d][0] for d in hits})
        for digest, pair in batch.items():
            if digest in hits:
                continue
            if digest in held:
                yield pair
            else:
                deferred.append(pair)


def _record(
    job: JudgeJob,
    outcomes: list[Outcome],
    items: dict[str, JudgeItem],
    duplicates: dict[str, list[JudgeItem]],
) -> None:
    """Write a batch of outcomes in one transaction: the verdicts into the cache, each item (and
    the job's other items with the same prompt) done or failed, with what it cost, and the
    job's claims on those prompts released. `items` are the job's pending items by key, loaded
    when the run started: only this worker writes them."""
    changed: list[JudgeItem] = []
    verdicts = []
    for outcome in outcomes:
        item = items[outcome.key]
        item.attempts += outcome.attempts
        item.calls += outcome.calls
        item.prompt_tokens += outcome.prompt_tokens
        item.completion_tokens += outcome.completion_tokens
        if outcome.scores is None:
            # Only answers that were unusable every time fail an item; one cut short by the end
            # of the run (after a refusal) stays pending.
            done_trying = outcome.attempts >= job.endpoint.max_attempts
            for target in (item, *duplicates.get(outcome.key, ())):
                if done_trying:
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
        update_rows(JudgeItem, changed, ITEM_FIELDS)
        release_keys(job, {items[outcome.key].prompt_sha256 for outcome in outcomes})


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
    forget_estimate(job)
    try:
        _use_cache(job)
        progress = save_progress(job)
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
                save_progress(job)
                lifecycle.end_slice(JUDGE_JOBS, job.pk)
            return job
        return finish_job(job)
    except EndpointUnreachable as error:
        return _fail_job(
            job,
            f"{str(error).rstrip('.')}. Nothing was published: the caption metrics stay pending, and judging "
            f"again pays only for what is not cached.",
        )
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
    """Judge the job's distinct pending prompts until none is left (True) or the slice ends or
    the job is cancelled (False). Prompts another job is judging are visited again in rounds
    until their verdict is cached or their claim is free. The endpoint's outage state carries
    over from the previous slice and is saved at every heartbeat."""
    rubric = Rubric.from_dict(job.rubric_settings, template=job.rubric_template)
    config = job.endpoint.config()
    client = JudgeClient(config)
    retry = backoff()
    outage = JUDGE.outage(
        ENDPOINT_NAME,
        OutageState(job.unreachable_since, job.next_try_at, job.last_transient_error),
    )

    def beat() -> None:
        progress = save_progress(job, outage=outage.state())
        if on_progress:
            on_progress(progress)

    clock = lifecycle.Slice(
        budget=time_budget,
        heartbeat=heartbeat_seconds(),
        still_running=lambda: _still_running(job),
        beat=beat,
    )
    should_stop, tick = clock.should_stop, clock.tick

    def on_outcomes(outcomes: list[Outcome]) -> None:
        _record(job, outcomes, items, duplicates)
        if on_progress:
            for outcome in outcomes:
                estimate = progress_estimate(job, outcome)
            on_progress(estimate)

    remaining = unique
    try:
        while True:
            deferred: list[tuple[str, str]] = []
            complete = judge_many(
                _claimed(job, remaining, items, duplicates, deferred, config.concurrency),
                client=client,
                rubric=rubric,
                on_outcomes=on_outcomes,
                concurrency=config.concurrency,
                max_attempts=config.max_attempts,
                batch=max(1, config.concurrency // 2),
                backoff=retry,
                outage=outage,
                should_stop=should_stop,
                tick=tick,
                tick_seconds=min(1.0, heartbeat_seconds()),
            )
            if not complete:
                return False
            if not deferred:
                return True
            # Another job is judging these: wait a moment (beating), then look again.
            remaining = deferred
            pause_until = time.monotonic() + claim_poll_seconds()
            while time.monotonic() < pause_until and not should_stop():
                time.sleep(0.05)
                tick()
            if should_stop():
                return False
    finally:
        release_keys(job)
        client.close()
        save_progress(job, heartbeat=False, outage=outage.state())


def _still_running(job: JudgeJob) -> bool:
    return JudgeJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).exists()
