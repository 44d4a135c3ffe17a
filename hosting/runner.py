"""The worker's part of a hosted evaluation (docs/hosted.md): claim the request, ask the model
every pending question through the engine (`inference.answering.answer_many`: bounded
concurrency, the endpoint's outage backed off as a whole, calls paced at the benchmark's
requests per minute), store the answers in batches as they arrive, beat, hand the request
back at the end of a time slice, stop at the token cap; then write the predictions file
(the plugin's `rerun.predictions_file`) and submit it as an upload
(`submissions.services.create_submission`: the same checks, storage and scoring), the entry
marked "evaluated by Podium".

A crash loses at most the answers in flight: a question answered is stored before it counts,
and a request picked up again (the reaper hands out a request whose worker stopped beating)
asks only its pending questions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from benchmark.plugins import plugin_for
from benchmark.scoring.strict_json import without_refused_characters
from benchmark.selectors import load_scoring_testset
from core.bulk import update_rows
from core.exceptions import DomainError, InvalidPredictions
from inference import lifecycle
from inference.answering import ENDPOINT_NAME as MODEL_ENDPOINT
from inference.answering import Answer, Content, ModelClient, answer_many
from inference.client import (
    AddressNotAllowed,
    EndpointError,
    EndpointUnreachable,
    OutageState,
    Redirected,
)
from inference.models import EndpointKeyError
from inference.pacing import RateLimiter
from submissions.enums import SubmissionSource
from submissions.services import create_submission

from . import config
from .enums import Failure, ItemState, RequestStatus
from .models import HostedItem, HostedRequest
from .services import HOSTED_REQUESTS, fail_request, request_details, set_request_status

logger = logging.getLogger(__name__)

NOTHING_PUBLISHED = "Nothing was published; submit the request again"
MISSING_SHOWN = 5


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

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


# How long a time slice waits, after its end, for the answers of the calls already sent
# (kept, not asked again) before it cuts them: a few seconds covers a normal answer; a
# dripping endpoint is cut (tests/hosting/test_hostile_endpoints.py).
DRAIN_SECONDS = 5.0


def request_progress(request: HostedRequest) -> Progress:
    """Counted from the items (the truth the request's counters cache)."""
    counts = request.items.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(state=ItemState.DONE)),
        failed=Count("id", filter=Q(state=ItemState.FAILED)),
        calls=Sum("calls", default=0),
        prompt_tokens=Sum("prompt_tokens", default=0),
        completion_tokens=Sum("completion_tokens", default=0),
    )
    return Progress(**counts)


def save_progress(
    request: HostedRequest, *, heartbeat: bool = True, outage: OutageState | None = None
) -> Progress:
    """Refresh the request's counters from its items (and its heartbeat, and the endpoint's
    outage when given) while it runs."""
    progress = request_progress(request)
    values = {
        "items_done": progress.done,
        "items_failed": progress.failed,
        "calls": progress.calls,
        "prompt_tokens": progress.prompt_tokens,
        "completion_tokens": progress.completion_tokens,
    }
    if heartbeat:
        values["heartbeat_at"] = timezone.now()
    if outage is not None:
        values["unreachable_since"] = outage.since
        values["next_try_at"] = outage.next_try_at
        values["last_transient_error"] = outage.last_error
    for name, value in values.items():
        setattr(request, name, value)
    HostedRequest.objects.filter(pk=request.pk, status=RequestStatus.RUNNING).update(**values)
    return progress


def token_cap_message(request: HostedRequest, progress: Progress) -> str:
    return (
        f"The token cap of {request.max_tokens:,} was reached: nothing was published. The "
        f"model used {progress.tokens:,} prompt and completion tokens on "
        f"{progress.finished:,} of {progress.total:,} questions; {request.benchmark.name} "
        "allows one request at most the cap."
    )


def refusal(error: EndpointError, request: HostedRequest) -> tuple[Failure, str]:
    """An endpoint's refusal in the submitter's words, by its HTTP status."""
    model = request.endpoint.model
    if isinstance(error, EndpointUnreachable):
        return Failure.UNREACHABLE, f"The endpoint is unreachable: {error}. {NOTHING_PUBLISHED}."
    if error.status in (401, 403):
        return (
            Failure.KEY_REFUSED,
            f"The endpoint refused the API key (HTTP {error.status}): {error}. "
            f"{NOTHING_PUBLISHED} with a key that may use {model!r}.",
        )
    if error.status == 404:
        return (
            Failure.MODEL_NOT_FOUND,
            f"Model {model!r} not found at the endpoint (HTTP 404): {error}. "
            f"{NOTHING_PUBLISHED} with the right base URL and model name.",
        )
    if isinstance(error, Redirected | AddressNotAllowed):
        text = str(error)
        return Failure.ENDPOINT_REFUSED, f"{text[:1].upper()}{text[1:]}. {NOTHING_PUBLISHED}."
    if isinstance(error, EndpointKeyError):
        return Failure.ENDPOINT_REFUSED, f"{error}. {NOTHING_PUBLISHED}."
    return (
        Failure.ENDPOINT_REFUSED,
        f"The endpoint refused the request: {error}. {NOTHING_PUBLISHED}.",
    )


def run_request(
    request_id: int,
    *,
    time_budget: float | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> HostedRequest | None:
    """Work on a request until no question is pending (then finish it into an entry) or
    `time_budget` seconds have passed (then hand it back to the queue). Safe to call twice: a
    request another live worker holds, or an ended one, is left alone. Returns the request,
    or None if it was not claimed."""
    request = lifecycle.claim(HOSTED_REQUESTS, request_id)
    if request is None:
        return None
    try:
        benchmark = request.benchmark
        plugin = plugin_for(benchmark)
        rerun = plugin.rerun
        if not config.hosted_rules(benchmark).enabled or rerun is None:
            return fail_request(
                request,
                f"{benchmark.name} no longer evaluates model endpoints. {NOTHING_PUBLISHED} "
                "as a predictions file.",
                Failure.NOT_HOSTED,
            )
        problem = config.endpoint_address_problem(request.endpoint.base_url)
        if problem:
            return fail_request(
                request, f"{problem} {NOTHING_PUBLISHED}.", Failure.ENDPOINT_REFUSED
            )
        test_set = load_scoring_testset(request.test_set)
        pending = list(request.items.filter(state=ItemState.PENDING).order_by("sample_index"))
        progress = save_progress(request)
        if on_progress:
            on_progress(progress)
        if progress.tokens >= request.max_tokens:
            return fail_request(request, token_cap_message(request, progress), Failure.TOKEN_CAP)
        root = config.media_root(benchmark, rerun)
        indexes = [item.sample_index for item in pending]
        missing = rerun.missing_media(test_set, root, request.max_frames, indexes)
        if missing:
            shown = ", ".join(missing[:MISSING_SHOWN])
            more = (
                f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
            )
            return fail_request(
                request,
                f"{len(missing)} {rerun.media_label} files the questions send are missing on "
                f"the server: {shown}{more}. Nothing was sent to the model; the maintainers "
                "have been told.",
                Failure.MEDIA_MISSING,
            )
        outcome = "complete"
        if pending:
            questions = rerun.questions(test_set, root, request.max_frames, indexes)
            outcome = _send(request, questions, pending, time_budget, on_progress, progress)
        if outcome == "capped":
            progress = save_progress(request, heartbeat=False)
            return fail_request(request, token_cap_message(request, progress), Failure.TOKEN_CAP)
        if outcome == "stopped":
            if _still_running(request):
                save_progress(request)
                lifecycle.end_slice(HOSTED_REQUESTS, request.pk)
            return request
        return finish_request(request)
    except EndpointError as error:
        failure, message = refusal(error, request)
        return fail_request(request, message, failure)
    except Exception:
        logger.exception("hosted request %s failed", request.pk)
        return fail_request(
            request,
            f"An internal error stopped the hosted evaluation. {NOTHING_PUBLISHED}.",
            Failure.INTERNAL_ERROR,
        )


def _send(
    request: HostedRequest,
    questions: Iterable[tuple[int, Callable[[], Content]]],
    pending: list[HostedItem],
    time_budget: float | None,
    on_progress: Callable[[Progress], None] | None,
    progress: Progress,
) -> str:
    """Ask the pending questions: "complete" when every one was answered, "stopped" at the
    end of the time slice or a cancel, "capped" once the tokens spent reach the cap (the
    answers in flight are still stored). The endpoint's outage carries over between slices
    and is saved at every heartbeat."""
    # An answer longer than the benchmark takes is set aside as over-long, and no more of a
    # reply is read than such an answer needs (`inference.client.EndpointConfig`).
    endpoint_config = replace(
        request.endpoint.config(), max_answer_chars=request.benchmark.max_prediction_chars
    )
    client = ModelClient(endpoint_config)
    items = {item.sample_index: item for item in pending}
    outage = config.HOSTED.outage(
        MODEL_ENDPOINT,
        OutageState(request.unreachable_since, request.next_try_at, request.last_transient_error),
    )
    limiter = RateLimiter(request.requests_per_minute)
    spent = [progress.tokens]

    def beat() -> None:
        current = save_progress(request, outage=outage.state())
        if on_progress:
            on_progress(current)

    clock = lifecycle.Slice(
        budget=time_budget,
        heartbeat=config.heartbeat_seconds(),
        still_running=lambda: _still_running(request),
        beat=beat,
    )

    def capped() -> bool:
        return spent[0] >= request.max_tokens

    def on_answers(answers: list[Answer]) -> None:
        _record(answers, items)
        spent[0] += sum(answer.prompt_tokens + answer.completion_tokens for answer in answers)
        if on_progress:
            on_progress(save_progress(request, heartbeat=False))

    try:
        complete = answer_many(
            questions,
            client=client,
            on_answers=on_answers,
            concurrency=endpoint_config.concurrency,
            max_attempts=endpoint_config.max_attempts,
            batch=max(1, endpoint_config.concurrency // 2),
            backoff=config.HOSTED.backoff(),
            outage=outage,
            should_stop=lambda: capped() or clock.should_stop(),
            # The slice's end and the cap drain (the answers being computed are paid for:
            # cut, they were asked again next slice) for DRAIN_SECONDS at most, so an endpoint
            # that drips its answers does not hold the worker; a cancel cuts them at once.
            should_abort=lambda: clock.cancelled or clock.overdue(DRAIN_SECONDS),
            tick=clock.tick,
            tick_seconds=min(1.0, config.heartbeat_seconds()),
            thread_name="hosted",
            limiter=limiter,
        )
    finally:
        client.close()
        save_progress(request, heartbeat=False, outage=outage.state())
    if capped():
        return "capped"
    return "complete" if complete else "stopped"


ITEM_FIELDS = (
    "state",
    "answer",
    "attempts",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "last_error",
)


def _record(answers: list[Answer], items: dict[int, HostedItem]) -> None:
    """Write a batch of answers in one statement; a question whose attempts all failed keeps
    "" (the predictions file has a row for it)."""
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
            # As the strict reader will take it: a NUL (which PostgreSQL cannot store) or
            # another control character from a hostile or broken model is dropped here.
            text = without_refused_characters(answer.answer)
            item.state, item.answer, item.last_error = ItemState.DONE, text, ""
        changed.append(item)
    with transaction.atomic():
        update_rows(HostedItem, changed, ITEM_FIELDS)


def _still_running(request: HostedRequest) -> bool:
    return HostedRequest.objects.filter(pk=request.pk, status=RequestStatus.RUNNING).exists()


# --- finishing: the predictions file, submitted as an upload ----------------------------------


def predictions_bytes(request: HostedRequest) -> bytes:
    """The model's answers as a predictions file in the benchmark's format (its plugin's
    `rerun.predictions_file`, every row in test-set order)."""
    rerun = plugin_for(request.benchmark).rerun
    assert rerun is not None
    test_set = load_scoring_testset(request.test_set)
    answers = dict(request.items.values_list("sample_index", "answer"))
    return rerun.predictions_file(test_set, answers, dict(request.options or {}))


def finish_request(request: HostedRequest) -> HostedRequest:
    """Write the predictions file from the answers and submit it as the owner's upload
    (`create_submission` with the source "hosted": the upload's checks, storage, scoring
    queue), then end the request done with its entry. An entry the writer refuses (a name
    published meanwhile, a test set replaced meanwhile; never the copy rule, which is the
    uploads', docs/hosted.md) fails the request with the writer's reason. A request cancelled
    meanwhile is left as it is (the row lock keeps a cancel from crossing the submission)."""
    progress = save_progress(request, heartbeat=False)
    raw = predictions_bytes(request)
    with transaction.atomic():
        locked = (
            HostedRequest.objects.select_for_update()
            .select_related("benchmark", "owner")
            .get(pk=request.pk)
        )
        if locked.state != RequestStatus.RUNNING:
            return locked
        try:
            submission = create_submission(
                locked.benchmark,
                owner=locked.owner,
                details=request_details(locked),
                predictions=raw,
                source=SubmissionSource.HOSTED,
            )
        except InvalidPredictions as error:
            problems = "; ".join(error.messages[:MISSING_SHOWN])
            set_request_status(
                locked,
                RequestStatus.FAILED,
                message=f"The model's answers are not a file the benchmark reads: {problems}. "
                f"{NOTHING_PUBLISHED}.",
                failure=Failure.ENTRY_REFUSED,
            )
            return locked
        except DomainError as error:
            set_request_status(
                locked,
                RequestStatus.FAILED,
                message=f"The answers were not accepted as an entry: {error} {NOTHING_PUBLISHED}.",
                failure=Failure.ENTRY_REFUSED,
            )
            return locked
        locked.submission = submission
        locked.save(update_fields=["submission"])
        set_request_status(
            locked,
            RequestStatus.DONE,
            message=(
                f"Evaluated by Podium: {progress.done:,} of {progress.total:,} questions "
                f"answered ({progress.failed:,} without a usable answer, scored as empty), "
                f"{progress.tokens:,} tokens in {progress.calls:,} calls; entry "
                f"{submission.pk} is scored as an upload."
            ),
        )
    return locked
