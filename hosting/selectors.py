"""Hosted evaluation's reads: the public queue of a benchmark (MEDIC's: model, submitted,
position, status per category, the entry once scored), a request's own page, a person's
requests, the evidence a hosted entry's verification rests on, and the quota's count.

Visibility is decided here (`hosting.permissions`): the queue lists published requests (an
evaluate-only one to its owner and the maintainers), and nothing here ever reads an
endpoint's base URL or key for the public: those are on the request's own page only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.urls import reverse

from accounts.roles import can_view_all_entries
from benchmark.models import Benchmark
from benchmark.plugins import plugin_for
from submissions.enums import STATES_WITH_SCORES, EvaluationStatus
from submissions.models import Evaluation, Submission

from .config import hosted_rules, outage_limit
from .enums import ACTIVE_REQUEST_STATES, PLATFORM_FAILURES, ItemState, QueueState, RequestStatus
from .models import HostedItem, HostedRequest
from .permissions import can_cancel_request, can_view_request

# Ended requests the queue shows below the active ones, newest first.
QUEUE_RECENT = 50


@dataclass(frozen=True)
class Category:
    key: str
    label: str


def queue_categories(benchmark: Benchmark) -> list[Category]:
    """The benchmark's board categories in their order, or one unnamed column for a benchmark
    without categories."""
    definition = plugin_for(benchmark).definition
    if not definition.categories:
        return [Category("", "Status")]
    return [Category(category.key, category.label) for category in definition.categories]


def takes_endpoints(benchmark: Benchmark) -> bool:
    """Whether the benchmark evaluates model endpoints (its Submit page offers the form)."""
    return hosted_rules(benchmark).enabled and plugin_for(benchmark).rerun is not None


@dataclass(frozen=True)
class CategoryStatus:
    """One cell of the queue: a category's state and its words ("running 12/40")."""

    label: str
    state: QueueState
    answered: int
    total: int
    reason: str = ""

    @property
    def text(self) -> str:
        if self.state == QueueState.RUNNING:
            return f"running {self.answered:,}/{self.total:,}"
        if self.state == QueueState.FAILED and self.reason:
            return f"failed: {self.reason}"
        return self.state.label


@dataclass(frozen=True)
class QueueRow:
    request_id: int
    model_name: str
    submitted_at: datetime
    status: RequestStatus
    position: int | None  # in the benchmark's queue, for a request waiting for its first run
    cells: list[CategoryStatus]
    entry_url: str  # the entry's page once it is scored ("" before)
    page_url: str  # the request's own page, for those who may see it ("" otherwise)
    publish: bool
    # Done, its entry's run still on its way to scores (the queue keeps polling for the link).
    entry_pending: bool = False

    @property
    def answered(self) -> int:
        return sum(cell.answered for cell in self.cells)

    @property
    def total(self) -> int:
        return sum(cell.total for cell in self.cells)


def _cell(request: HostedRequest, category: Category, answered: int, total: int) -> CategoryStatus:
    """A failed or cancelled request says so in every cell, also a category whose questions were
    all answered: nothing of it was published (issue 31, point 3: a request failed after its
    last answer read "finished / finished")."""
    state = request.state
    if state == RequestStatus.FAILED:
        reason = request.get_failure_display() if request.failure else ""
        return CategoryStatus(category.label, QueueState.FAILED, answered, total, reason)
    if state == RequestStatus.CANCELLED:
        return CategoryStatus(category.label, QueueState.CANCELLED, answered, total)
    if state == RequestStatus.DONE or (total and answered >= total):
        return CategoryStatus(category.label, QueueState.FINISHED, answered, total)
    if answered:
        return CategoryStatus(category.label, QueueState.RUNNING, answered, total)
    return CategoryStatus(category.label, QueueState.PENDING, answered, total)


def _visible(requests: QuerySet[HostedRequest], viewer: Any) -> QuerySet[HostedRequest]:
    if getattr(viewer, "is_authenticated", False) and can_view_all_entries(viewer):
        return requests
    if getattr(viewer, "is_authenticated", False):
        return requests.filter(Q(publish=True) | Q(owner=viewer))
    return requests.filter(publish=True)


def _with_entry_status(requests: QuerySet[HostedRequest]) -> QuerySet[HostedRequest]:
    newest = Evaluation.objects.filter(submission=OuterRef("submission_id")).order_by(
        "-created_at", "-id"
    )
    return requests.select_related("submission", "benchmark").annotate(
        entry_status=Subquery(newest.values("status")[:1])
    )


def _counts(requests: list[HostedRequest]) -> dict[tuple[int, str], tuple[int, int]]:
    """(request id, category) -> (answered, total), in one query."""
    rows = (
        HostedItem.objects.filter(request__in=[request.pk for request in requests])
        .values("request_id", "category")
        .annotate(total=Count("id"), answered=Count("id", filter=~Q(state=ItemState.PENDING)))
    )
    return {(row["request_id"], row["category"]): (row["answered"], row["total"]) for row in rows}


def queue_positions(benchmark: Benchmark, *, viewer: Any) -> dict[int, int]:
    """request id -> its place among the benchmark's requests waiting for their first run
    (1: next) that `viewer` may see (`_visible`): a request hidden from the viewer (another's
    evaluate-only one) takes no place, so the places shown have no gap that tells it exists
    (issue 31, point 3)."""
    waiting = _visible(
        HostedRequest.objects.filter(benchmark=benchmark, status=RequestStatus.QUEUED, runs=0),
        viewer,
    ).order_by("created_at", "id")
    return {pk: place for place, pk in enumerate(waiting.values_list("pk", flat=True), start=1)}


def _cells(
    request: HostedRequest,
    categories: list[Category],
    counts: dict[tuple[int, str], tuple[int, int]],
) -> list[CategoryStatus]:
    """A cell per category, or one for the whole request without categories."""
    if categories[0].key:
        cells = [
            _cell(request, category, *counts.get((request.pk, category.key), (0, 0)))
            for category in categories
        ]
    else:
        mine = [value for (pk, _), value in counts.items() if pk == request.pk]
        answered, total = sum(value[0] for value in mine), sum(value[1] for value in mine)
        cells = [_cell(request, categories[0], answered, total)]
    # A request a worker has just started has no answer yet: the category it asks first (the
    # questions go in test-set order) is the one running.
    states = [cell.state for cell in cells]
    starting = request.state == RequestStatus.RUNNING and QueueState.RUNNING not in states
    if starting and QueueState.PENDING in states:
        first = states.index(QueueState.PENDING)
        cells[first] = replace(cells[first], state=QueueState.RUNNING)
    return cells


def _entry_pending(request: HostedRequest) -> bool:
    """Done, and its entry's newest run neither has scores nor has ended."""
    if request.state != RequestStatus.DONE:
        return False
    status = getattr(request, "entry_status", None)
    if status is None:
        return request.submission_id is not None
    state = EvaluationStatus(status)
    return state not in STATES_WITH_SCORES and not state.is_terminal


def _entry_url(request: HostedRequest, viewer: Any) -> str:
    submission: Submission | None = request.submission
    status = getattr(request, "entry_status", None)
    if submission is None or status is None or EvaluationStatus(status) not in STATES_WITH_SCORES:
        return ""
    if not submission.publish and not can_view_request(viewer, request):
        return ""
    return reverse("submissions:entry", args=[request.benchmark.slug, submission.pk])


def queue_rows(benchmark: Benchmark, *, viewer: Any, recent: int = QUEUE_RECENT) -> list[QueueRow]:
    """The benchmark's public queue as `viewer` sees it: the running requests, then the
    queued ones in their order, then the `recent` newest that ended. A constant number of
    queries whatever the number of rows."""
    requests = _with_entry_status(
        _visible(HostedRequest.objects.filter(benchmark=benchmark), viewer)
    )
    active = list(requests.filter(status__in=ACTIVE_REQUEST_STATES).order_by("created_at", "id"))
    active.sort(key=lambda request: request.status != RequestStatus.RUNNING)  # stable
    ended = list(
        requests.exclude(status__in=ACTIVE_REQUEST_STATES).order_by("-finished_at", "-id")[:recent]
    )
    shown = active + ended
    counts = _counts(shown)
    positions = queue_positions(benchmark, viewer=viewer) if active else {}
    categories = queue_categories(benchmark)
    rows = []
    for request in shown:
        cells = _cells(request, categories, counts)
        rows.append(
            QueueRow(
                request_id=request.pk,
                model_name=request.model_name,
                submitted_at=request.created_at,
                status=request.state,
                position=positions.get(request.pk),
                cells=cells,
                entry_url=_entry_url(request, viewer),
                page_url=request.get_absolute_url() if can_view_request(viewer, request) else "",
                publish=request.publish,
                entry_pending=_entry_pending(request),
            )
        )
    return rows


def queue_is_moving(rows: list[QueueRow]) -> bool:
    """Whether the queue page should poll: a request is active, or done with its entry's run
    still on its way to scores."""
    return any(row.status in ACTIVE_REQUEST_STATES or row.entry_pending for row in rows)


# --- a request's own page -----------------------------------------------------------------------


def request_for_viewer(pk: int, *, viewer: Any) -> HostedRequest:
    """The request `pk` if `viewer` may see its page (its owner, the maintainers);
    `HostedRequest.DoesNotExist` otherwise (the page then 404s: another person's request is
    not even confirmed to exist)."""
    request = (
        _with_entry_status(HostedRequest.objects.all())
        .select_related("endpoint", "owner", "test_set")
        .get(pk=pk)
    )
    if not can_view_request(viewer, request):
        raise HostedRequest.DoesNotExist
    return request


def readable_request(benchmark: Benchmark, pk: int, *, viewer: Any) -> HostedRequest:
    """The request `pk` of `benchmark` if `viewer` may read it: its page (`can_view_request`)
    or, for a published one, its queue row; `HostedRequest.DoesNotExist` otherwise."""
    request = (
        _with_entry_status(HostedRequest.objects.filter(benchmark=benchmark))
        .select_related("endpoint")
        .get(pk=pk)
    )
    if not (request.publish or can_view_request(viewer, request)):
        raise HostedRequest.DoesNotExist
    return request


@dataclass(frozen=True)
class RequestPage:
    request: HostedRequest
    row: QueueRow
    can_cancel: bool
    tokens: int
    cost: Decimal | None
    polling: bool
    # When an unreachable endpoint's request fails if no answer comes meanwhile (None: the
    # endpoint answers).
    gives_up_at: datetime | None = None


def request_page(request: HostedRequest, *, viewer: Any) -> RequestPage:
    """What the owner's page shows: the queue's row for it (its place, its categories), its
    tokens and cost at the owner's prices, and whether it may be cancelled."""
    cells = _cells(request, queue_categories(request.benchmark), _counts([request]))
    position = (
        queue_positions(request.benchmark, viewer=viewer).get(request.pk)
        if request.state == RequestStatus.QUEUED
        else None
    )
    row = QueueRow(
        request_id=request.pk,
        model_name=request.model_name,
        submitted_at=request.created_at,
        status=request.state,
        position=position,
        cells=cells,
        entry_url=_entry_url(request, viewer),
        page_url=request.get_absolute_url(),
        publish=request.publish,
        entry_pending=_entry_pending(request),
    )
    return RequestPage(
        request=request,
        row=row,
        can_cancel=can_cancel_request(viewer, request),
        tokens=request.tokens,
        cost=request.cost,
        polling=queue_is_moving([row]),
        gives_up_at=request.unreachable_since + outage_limit()
        if request.unreachable_since
        else None,
    )


def requests_for_user(user: Any, *, benchmark: Benchmark | None = None) -> QuerySet[HostedRequest]:
    """The user's own requests, newest first (none for an anonymous user)."""
    if not getattr(user, "is_authenticated", False):
        return HostedRequest.objects.none()
    requests = HostedRequest.objects.filter(owner=user).select_related("benchmark", "submission")
    if benchmark is not None:
        requests = requests.filter(benchmark=benchmark)
    return requests.order_by("-created_at", "-id")


# --- for other apps -----------------------------------------------------------------------------


def hosted_request_of(submission: Submission) -> HostedRequest | None:
    """The done request an entry evaluated by Podium came from (None for any other entry)."""
    return (
        HostedRequest.objects.filter(submission=submission, status=RequestStatus.DONE)
        .select_related("endpoint")
        .first()
    )


def hosted_evaluations_since(user: Any, benchmark: Benchmark, since: datetime) -> int:
    """The hosted evaluations `user` asked for on `benchmark` since `since`, for the daily
    quota (`submissions.services.add_quota_use`): cancelled ones and those Podium failed
    itself do not count, as for uploads."""
    return (
        HostedRequest.objects.filter(
            benchmark=benchmark, owner=user, requested_by=user, created_at__gte=since
        )
        .exclude(status=RequestStatus.CANCELLED)
        .exclude(failure__in=PLATFORM_FAILURES)
        .count()
    )
