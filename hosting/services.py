"""Hosted evaluation's writes: submitting a request, its one status writer, cancelling it,
failing it, and the reaper (docs/hosted.md). The worker's run (asking every question,
finishing into an entry) is `hosting.runner`.

A request is checked before anything is stored, as an upload is: the benchmark takes model
endpoints, the names and options are the upload form's (`submissions.names`,
`check_options`), a published name is not taken, the endpoint is an address Podium may call,
and the daily quota (the same count as uploads', under a lock on the owner's row) has room.
The API key is encrypted at once (`inference.keys`), bound to the base URL's origin, and never
shown again; the audit row says only whether one was entered.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from benchmark.models import Benchmark
from benchmark.plugins import plugin_for
from benchmark.selectors import active_testset, load_scoring_testset
from core import audit
from core.exceptions import (
    DomainError,
    InvalidEndpoint,
    InvalidName,
    InvalidTransition,
    QuotaExceeded,
)
from core.text import confusable_key
from inference import keys, lifecycle
from submissions.names import clean_names, refuse_published_lookalike
from submissions.services import (
    SubmissionDetails,
    check_facts,
    check_options,
    evaluations_left_today,
)

from . import config
from .enums import ACTIVE_REQUEST_STATES, Failure, ItemState, RequestStatus
from .models import HostedEndpoint, HostedItem, HostedRequest
from .permissions import can_cancel_request, can_submit_request

logger = logging.getLogger(__name__)

BULK_BATCH = 1000
ENDPOINT_FIELDS = frozenset(
    {
        "base_url",
        "model",
        "concurrency",
        "max_attempts",
        "timeout_seconds",
        "input_price_per_million",
        "output_price_per_million",
    }
)
TOO_MANY_RUNS = (
    "The hosted evaluation's worker stopped too many times; nothing was published. Submit the "
    "request again."
)


# --- what a request says -----------------------------------------------------------------------


def request_details(request: HostedRequest) -> SubmissionDetails:
    """What the upload form would have said, for `create_submission`."""
    return SubmissionDetails(
        model_name=request.model_name,
        institution=request.institution,
        contact_email=request.contact_email,
        model_url=request.model_url,
        paper_url=request.paper_url,
        code_url=request.code_url,
        is_challenge_entry=request.is_challenge_entry,
        team_name=request.team_name,
        authors=request.authors,
        publish=request.publish,
        options=dict(request.options or {}),
        model_facts=dict(request.model_facts or {}),
    )


def _details_values(details: SubmissionDetails) -> dict[str, Any]:
    """`details` as the request's columns."""
    values = {
        name: getattr(details, name)
        for name in (
            "model_name",
            "institution",
            "contact_email",
            "model_url",
            "paper_url",
            "code_url",
            "is_challenge_entry",
            "team_name",
            "authors",
            "publish",
            "options",
            "model_facts",
        )
    }
    return values


def question_categories(benchmark: Benchmark, test_set: Any) -> list[str]:
    """The board category of each test question, in test-set order ("" each on a benchmark
    without categories): the plugin's `item_categories(test_set)` where the benchmark has
    categories and the plugin says which question belongs to which (docs/hosted.md)."""
    plugin = plugin_for(benchmark)
    count = len(test_set)
    reader = getattr(plugin, "item_categories", None)
    if not plugin.definition.categories or reader is None:
        return [""] * count
    categories = [str(category) for category in reader(test_set)]
    known = {category.key for category in plugin.definition.categories}
    unknown = sorted(set(categories) - known - {""})
    if len(categories) != count or unknown:
        raise DomainError(
            f"{benchmark.name}'s plugin names {len(categories)} question categories for "
            f"{count} questions{f' and unknown categories {unknown}' if unknown else ''}."
        )
    return categories


# --- submitting ---------------------------------------------------------------------------------


def _refuse_active_lookalike(benchmark: Benchmark, model_name: str) -> None:
    """A published request still running with a name that looks the same would fail when its
    entry is created: refuse the second one now (`InvalidName`)."""
    skeleton = confusable_key(model_name)
    active = HostedRequest.objects.filter(
        benchmark=benchmark, publish=True, status__in=ACTIVE_REQUEST_STATES
    ).values_list("model_name", flat=True)
    for name in active:
        if confusable_key(name) == skeleton:
            raise InvalidName(
                f"A hosted evaluation of “{name}” is in the queue of {benchmark.name}: a "
                "published name is unique per benchmark, look-alikes included. Choose "
                "another name, or wait for that request to end.",
                field="model_name",
            )


def _new_endpoint(owner: Any, api_key: str, **values: Any) -> HostedEndpoint:
    keys.check_fields(values, ENDPOINT_FIELDS, endpoint_name=HostedEndpoint.endpoint_name)
    values = {name: value for name, value in values.items() if value is not None}
    try:
        endpoint = keys.new_endpoint(HostedEndpoint, api_key=api_key, owner=owner, **values)
    except ValidationError as error:
        name, messages = next(iter(error.message_dict.items()))
        raise InvalidEndpoint(" ".join(messages), field=name) from None
    problem = config.endpoint_address_problem(endpoint.base_url)
    if problem:
        raise InvalidEndpoint(problem, field="base_url")
    return endpoint


@sensitive_variables("api_key")
def submit_request(
    benchmark: Benchmark,
    *,
    owner: Any,
    actor: Any,
    details: SubmissionDetails,
    base_url: str,
    model: str,
    api_key: str = "",
    concurrency: int | None = None,
    timeout_seconds: float | None = None,
    input_price_per_million: Decimal | None = None,
    output_price_per_million: Decimal | None = None,
    enqueue: bool = True,
) -> HostedRequest:
    """Queue a hosted evaluation of `owner`'s model endpoint on the benchmark's active test
    set: the endpoint (its key, "" for none, encrypted at once and bound to the base URL's
    origin), the request with the upload form's `details`, the benchmark's token cap and
    pace, and one pending item per test question (with its board category). `actor` is the
    person asking (the owner: the request counts against their daily quota) or None (the
    demo, a command: it does not).

    Refused before anything is stored: `DomainError` when the benchmark takes no model
    endpoints or has no test set; `InvalidName`, `InvalidOption`, `InvalidFact` as an
    upload's; `InvalidEndpoint` for an endpoint Podium cannot call;
    `QuotaExceeded`; `PermissionDenied` for an actor who is not the owner. Writes an audit row
    (the key only as "entered" or "none") and queues the request on commit. Returns it."""
    if actor is not None and (not can_submit_request(actor) or actor.pk != owner.pk):
        raise PermissionDenied("A hosted evaluation is submitted by its owner.")
    rules = config.hosted_rules(benchmark)
    if not rules.enabled:
        raise DomainError(
            f"{benchmark.name} does not evaluate model endpoints; upload a predictions file "
            "instead."
        )
    plugin = plugin_for(benchmark)
    if plugin.rerun is None:
        raise DomainError(f"{benchmark.name}'s plugin cannot ask a model its questions.")
    details = replace(details, **clean_names(vars(details)))
    details = replace(details, options=check_options(benchmark, details.options))
    details = replace(details, model_facts=check_facts(benchmark, details.model_facts))
    test_set = active_testset(benchmark)
    if test_set is None:
        raise DomainError(f"{benchmark.name} has no active test set yet; submissions are closed.")
    parsed = load_scoring_testset(test_set)
    categories = question_categories(benchmark, parsed)
    api_key = api_key.strip()
    endpoint = _new_endpoint(
        owner,
        api_key,
        base_url=base_url.strip(),
        model=model.strip(),
        concurrency=concurrency or config.concurrency(),
        timeout_seconds=timeout_seconds or config.DEFAULT_TIMEOUT_SECONDS,
        input_price_per_million=input_price_per_million,
        output_price_per_million=output_price_per_million,
    )
    with transaction.atomic():
        # The owner's row, locked: parallel requests and uploads by one person queue here, so
        # the quota below sees every one committed before this.
        get_user_model().objects.select_for_update().get(pk=owner.pk)
        counted = actor is not None
        if counted and evaluations_left_today(owner, benchmark) <= 0:
            raise QuotaExceeded(
                f"You have used all {benchmark.daily_submission_limit} evaluations for "
                f"{benchmark.name} today; the count resets at midnight UTC."
            )
        if details.publish:
            refuse_published_lookalike(benchmark, details.model_name)
            _refuse_active_lookalike(benchmark, details.model_name)
        endpoint.save()
        request = HostedRequest.objects.create(
            benchmark=benchmark,
            test_set=test_set,
            endpoint=endpoint,
            owner=owner,
            requested_by=owner if counted else None,
            max_tokens=rules.max_tokens,
            requests_per_minute=rules.requests_per_minute,
            max_frames=benchmark.rerun_max_frames,
            items_total=len(categories),
            **_details_values(details),
        )
        HostedItem.objects.bulk_create(
            [
                HostedItem(request=request, sample_index=index, category=category)
                for index, category in enumerate(categories)
            ],
            batch_size=BULK_BATCH,
        )
        audit.record(
            "hosting.request.created",
            actor=actor,
            target=request,
            benchmark=benchmark.slug,
            model_name=request.model_name,
            model=endpoint.model,
            base_url=endpoint.base_url,
            api_key="entered" if api_key else "none",
            questions=len(categories),
        )
        if enqueue:
            transaction.on_commit(lambda: enqueue_request(request.pk))
    return request


def enqueue_request(request_id: int) -> None:
    # Imported here: django_q pulls in its models, and this module is imported at start-up.
    from django_q.tasks import async_task

    async_task("hosting.tasks.task_run_hosted_request", request_id, q_options={"group": "hosted"})
    lifecycle.record_sent(HostedRequest, request_id)


# --- the request's one status writer -----------------------------------------------------------


def set_request_status(
    request: HostedRequest,
    new: RequestStatus,
    *,
    actor: Any = None,
    message: str | None = None,
    failure: Failure | str = "",
    note: str = "",
) -> HostedRequest:
    """The one writer of `HostedRequest.status` and `failure` (`inference.lifecycle.set_status`:
    the move checked, the times stamped, an audit row `hosting.request.<state>`). A failure
    needs its code, and only a failure has one; a request is never held. Call it inside the
    caller's transaction."""
    if new == RequestStatus.HELD:
        raise InvalidTransition("A hosted evaluation is never held for a maintainer.")
    if (new == RequestStatus.FAILED) != bool(failure):
        raise ValueError("a failed request needs its failure code, and only a failed one")
    with transaction.atomic():
        lifecycle.set_status(HOSTED_REQUESTS, request, new, actor=actor, message=message, note=note)
        if failure:
            request.failure = Failure(failure)
            request.save(update_fields=["failure"])
    return request


def fail_request(request: HostedRequest, message: str, failure: Failure) -> HostedRequest:
    """Fail the request with `message` (nothing is published). A request already ended is
    left as it is."""
    with transaction.atomic():
        locked = HostedRequest.objects.select_for_update().get(pk=request.pk)
        if locked.state.is_terminal:
            return locked
        set_request_status(locked, RequestStatus.FAILED, message=message, failure=failure)
    return locked


def cancel_request(request: HostedRequest, *, actor: Any) -> HostedRequest:
    """Stop a queued or running request (its worker notices at its next heartbeat and
    publishes nothing). Refused: `PermissionDenied` for someone who is neither its owner nor a
    maintainer, `InvalidTransition` for a request that has ended."""
    with transaction.atomic():
        locked = (
            HostedRequest.objects.select_for_update().select_related("owner").get(pk=request.pk)
        )
        if locked.state.is_terminal:
            raise InvalidTransition(
                f"Hosted request {locked.pk} is {locked.state.label.lower()}; there is nothing "
                "to cancel."
            )
        if actor is not None and not can_cancel_request(actor, locked):
            raise PermissionDenied("Only the request's owner or a maintainer may cancel it.")
        answered = locked.items.exclude(state=ItemState.PENDING).count()
        set_request_status(
            locked,
            RequestStatus.CANCELLED,
            actor=actor,
            message=(
                f"Cancelled after {answered:,} of {locked.items_total:,} questions; nothing "
                "was published."
            ),
        )
    return locked


# --- the reaper ---------------------------------------------------------------------------------


def reap_stale_requests(*, as_task: bool = False) -> int:
    """Hand requests whose worker stopped beating back to the queue (or fail them once picked
    up too often), and queue again those that waited too long for a worker. Scheduled every
    minute."""
    return lifecycle.reap(HOSTED_REQUESTS, as_task=as_task)


def reap_dead_workers_requests() -> int:
    """Only the stale half of `reap_stale_requests`, for the workers' few-second watchdog."""
    return lifecycle.reap_stale(HOSTED_REQUESTS)


HOSTED_REQUESTS = lifecycle.JobKind(
    model=HostedRequest,
    label="A hosted evaluation",
    audit_prefix="hosting.request",
    stale_after=config.stale_after,
    max_runs=config.max_runs,
    enqueue=lambda pk: enqueue_request(pk),
    fail=lambda request, message: fail_request(request, message, Failure.INTERRUPTED),
    too_many_runs=TOO_MANY_RUNS,
)
