"""Submitting a hosted evaluation (every refusal before anything is stored, the key encrypted
and never shown, the quota shared with uploads), the request's one status writer over every
(from, to) pair, cancelling, and the reaper handing back a request whose worker died."""

from datetime import timedelta
from itertools import product

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from core import encryption
from core.exceptions import (
    DomainError,
    InvalidEndpoint,
    InvalidName,
    InvalidOption,
    InvalidTransition,
    QuotaExceeded,
)
from core.models import AuditEvent
from hosting import services
from hosting.enums import REQUEST_STATES, Failure, RequestStatus
from hosting.models import HostedEndpoint, HostedItem, HostedRequest
from hosting.permissions import can_cancel_request
from inference import keys
from inference.enums import JOB_TRANSITIONS
from submissions.services import (
    SubmissionDetails,
    create_submission,
    evaluations_left_today,
)
from tests.accounts.factories import UserFactory, maintainer_user

from .conftest import FACTS, demo_file, details, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "http://127.0.0.1:9/v1"


def nothing_stored():
    return (
        HostedRequest.objects.count(),
        HostedEndpoint.objects.count(),
        HostedItem.objects.count(),
    ) == (0, 0, 0)


def test_a_request_has_an_item_per_question_with_its_category_and_an_encrypted_key(
    benchmark, owner, test_set
):
    request = submit(benchmark, owner, base_url=URL, model="m-7b", api_key="sk-live-123")

    categories = list(request.items.order_by("sample_index").values_list("category", flat=True))
    assert categories == ["close_ended"] * 40 + ["open_ended"] * 16
    assert (request.requested_by, request.max_frames, request.requests_per_minute) == (
        owner,
        benchmark.rerun_max_frames,
        60_000,
    )
    endpoint = request.endpoint
    assert "sk-live-123" not in endpoint.api_key_encrypted
    assert encryption.decrypt(endpoint.api_key_encrypted) == "sk-live-123"
    assert (endpoint.api_key_origin, endpoint.owner) == ("http://127.0.0.1:9", owner)
    created = AuditEvent.objects.get(action="hosting.request.created")
    assert created.data["api_key"] == "entered"
    assert "sk-live-123" not in str(created.data)


def test_rotating_the_encryption_keys_re_encrypts_a_hosted_endpoints_key(
    benchmark, owner, settings
):
    request = submit(benchmark, owner, base_url=URL, model="m", api_key="sk-rotate")
    (old,) = settings.PODIUM_FIELD_ENCRYPTION_KEYS
    new = Fernet.generate_key().decode()
    settings.PODIUM_FIELD_ENCRYPTION_KEYS = [new, old]

    assert keys.rotate_keys() == 1

    request.endpoint.refresh_from_db()
    assert Fernet(new).decrypt(request.endpoint.api_key_encrypted.encode()) == b"sk-rotate"
    assert request.endpoint.config().api_key == "sk-rotate"


@pytest.mark.parametrize("rules", [{"hosted_evaluation": False}])
def test_a_benchmark_without_hosted_evaluation_refuses_a_request(benchmark, owner, rules):
    with pytest.raises(DomainError, match=r"^Demo clinical QA does not evaluate model endpoints"):
        submit(benchmark, owner, base_url=URL, model="m")
    assert nothing_stored()


@pytest.mark.parametrize(
    ("base_url", "field", "message"),
    [
        ("ftp://example.org/v1", "base_url", "Enter a valid URL."),
        (
            "https://user:sk-1@example.org/v1",
            "base_url",
            "Give the base URL without a user name, password, query or fragment",
        ),
        ("https://example.org/v1?key=sk-1", "base_url", "without a user name, password, query"),
    ],
)
def test_an_endpoint_podium_cannot_call_is_refused_naming_the_field(
    benchmark, owner, base_url, field, message
):
    with pytest.raises(InvalidEndpoint) as refused:
        submit(benchmark, owner, base_url=base_url, model="m")
    assert refused.value.field == field
    assert message in str(refused.value)
    assert nothing_stored()


def test_a_private_address_is_refused_unless_private_endpoints_are_allowed(
    benchmark, owner, settings
):
    settings.PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = False
    for url, address in (
        ("http://127.0.0.1:8000/v1", "127.0.0.1"),
        ("http://10.1.2.3/v1", "10.1.2.3"),
        ("http://169.254.169.254/latest", "169.254.169.254"),
        ("http://localhost:8000/v1", "127.0.0.1"),
    ):
        with pytest.raises(InvalidEndpoint, match=f"is at {address}, an address of a private"):
            submit(benchmark, owner, base_url=url, model="m")
    assert nothing_stored()


def test_names_and_options_are_checked_as_an_uploads(benchmark, owner):
    with pytest.raises(InvalidName, match=r"invisible|control|bidi"):
        services.submit_request(
            benchmark,
            owner=owner,
            actor=owner,
            details=details("Bad\u202ename"),
            base_url=URL,
            model="m",
        )
    with pytest.raises(InvalidOption, match="takes no option 'box_format'"):
        services.submit_request(
            benchmark,
            owner=owner,
            actor=owner,
            details=details("Fine", options={"box_format": "norm1"}),
            base_url=URL,
            model="m",
        )
    assert nothing_stored()


def test_a_published_name_taken_or_queued_is_refused(benchmark, owner, demo_files):
    create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Taken-7B", model_facts=FACTS),
        predictions=demo_file(demo_files, "weak").read_bytes(),
    )
    with pytest.raises(InvalidName, match="A published entry named 'taken-7b' already exists"):
        submit(benchmark, owner, base_url=URL, model="m", name="taken-7b")
    submit(benchmark, UserFactory(), base_url=URL, model="m", name="Queued-7B")
    with pytest.raises(InvalidName, match="A hosted evaluation of “Queued-7B” is in the queue"):
        submit(benchmark, owner, base_url=URL, model="m", name="QUEUED-7B")
    # Evaluate only: no name to reserve.
    assert submit(benchmark, owner, base_url=URL, model="m", name="Queued-7B", publish=False)


def test_the_daily_quota_counts_requests_and_uploads_together(benchmark, owner, demo_files):
    benchmark.daily_submission_limit = 3
    benchmark.save(update_fields=["daily_submission_limit"])
    create_submission(
        benchmark,
        owner=owner,
        details=SubmissionDetails(model_name="Upload-1", model_facts=FACTS),
        predictions=demo_file(demo_files, "weak").read_bytes(),
    )
    first = submit(benchmark, owner, base_url=URL, model="m", name="Hosted-1")
    assert evaluations_left_today(owner, benchmark) == 1
    cancelled = submit(benchmark, owner, base_url=URL, model="m", name="Hosted-2")
    services.cancel_request(cancelled, actor=owner)
    assert evaluations_left_today(owner, benchmark) == 1  # a cancelled request does not count
    submit(benchmark, owner, base_url=URL, model="m", name="Hosted-3")

    with pytest.raises(QuotaExceeded, match="You have used all 3 evaluations for Demo clinical"):
        submit(benchmark, owner, base_url=URL, model="m", name="Hosted-4")
    with pytest.raises(QuotaExceeded):
        create_submission(
            benchmark,
            owner=owner,
            details=SubmissionDetails(model_name="Upload-2", model_facts=FACTS),
            predictions=demo_file(demo_files, "good").read_bytes(),
        )
    # A request Podium itself failed gives its evaluation back.
    services.set_request_status(first, RequestStatus.RUNNING)
    services.fail_request(first, "internal", Failure.INTERNAL_ERROR)
    assert evaluations_left_today(owner, benchmark) == 1
    # The demo's (and a command's) requests are nobody's: they take nothing.
    services.submit_request(
        benchmark, owner=owner, actor=None, details=details("Demo-1"), base_url=URL, model="m"
    )
    assert evaluations_left_today(owner, benchmark) == 1


def test_only_the_owner_submits_their_request(benchmark, owner):
    with pytest.raises(PermissionDenied):
        services.submit_request(
            benchmark,
            owner=owner,
            actor=UserFactory(),
            details=details(),
            base_url=URL,
            model="m",
        )
    assert nothing_stored()


# --- the status writer --------------------------------------------------------------------------


def request_in(benchmark, status: RequestStatus) -> HostedRequest:
    request = submit(benchmark, UserFactory(), base_url=URL, model="m", name=f"M-{status}")
    HostedRequest.objects.filter(pk=request.pk).update(status=status)  # the state under test
    request.refresh_from_db()
    return request


@pytest.mark.parametrize(("current", "new"), list(product(REQUEST_STATES, RequestStatus)))
def test_the_status_writer_takes_exactly_the_allowed_moves(benchmark, current, new):
    request = request_in(benchmark, current)
    before = AuditEvent.objects.count()
    last = AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first()
    failure = Failure.INTERNAL_ERROR if new == RequestStatus.FAILED else ""
    allowed = new in JOB_TRANSITIONS[current] and new != RequestStatus.HELD

    if allowed:
        services.set_request_status(request, new, message="m", failure=failure)
        request.refresh_from_db()
        assert (request.status, request.failure) == (new, failure)
        event = AuditEvent.objects.get(pk__gt=last)
        assert event.action == f"hosting.request.{new.value}"
        assert event.data["from"] == current.value
    else:
        with pytest.raises(InvalidTransition):
            services.set_request_status(request, new, message="m", failure=failure)
        request.refresh_from_db()
        assert request.status == current
        assert AuditEvent.objects.count() == before


def test_a_failure_needs_its_code_and_only_a_failure_has_one(benchmark):
    request = request_in(benchmark, RequestStatus.RUNNING)
    with pytest.raises(ValueError, match="needs its failure code"):
        services.set_request_status(request, RequestStatus.FAILED, message="m")
    with pytest.raises(ValueError, match="needs its failure code"):
        services.set_request_status(request, RequestStatus.DONE, failure=Failure.TOKEN_CAP)


# --- cancelling -------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["owner", "maintainer", "stranger"])
def test_the_owner_or_a_maintainer_cancels_a_queued_request(benchmark, owner, who):
    request = submit(benchmark, owner, base_url=URL, model="m")
    actor = {"owner": owner, "maintainer": maintainer_user(), "stranger": UserFactory()}[who]
    assert can_cancel_request(actor, request) == (who != "stranger")

    if who == "stranger":
        with pytest.raises(PermissionDenied):
            services.cancel_request(request, actor=actor)
        request.refresh_from_db()
        assert request.status == RequestStatus.QUEUED
        return
    services.cancel_request(request, actor=actor)
    request.refresh_from_db()
    assert request.status == RequestStatus.CANCELLED
    assert request.message == "Cancelled after 0 of 56 questions; nothing was published."
    event = AuditEvent.objects.get(action="hosting.request.cancelled")
    assert event.actor == actor


def test_an_ended_request_cannot_be_cancelled(benchmark, owner):
    request = request_in(benchmark, RequestStatus.DONE)
    with pytest.raises(InvalidTransition, match="is done; there is nothing to cancel"):
        services.cancel_request(request, actor=maintainer_user())


# --- the reaper -------------------------------------------------------------------------------


def test_the_reaper_hands_back_a_request_whose_worker_stopped_beating(benchmark, settings):
    settings.PODIUM_HOSTED_STALE_SECONDS = 5
    request = request_in(benchmark, RequestStatus.QUEUED)
    services.set_request_status(request, RequestStatus.RUNNING)
    HostedRequest.objects.filter(pk=request.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=30), worker="elsewhere:1"
    )

    assert services.reap_dead_workers_requests() == 1

    request.refresh_from_db()
    assert (request.status, request.interruptions) == (RequestStatus.QUEUED, 1)
    assert services.reap_dead_workers_requests() == 0
