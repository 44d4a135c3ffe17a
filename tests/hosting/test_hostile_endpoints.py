"""Hosted evaluation against hostile endpoints on loopback (issue 31), end to end through the
worker's slice: a redirect to the internal network is not followed, a key the endpoint quotes
is shown, stored and logged nowhere, enormous answers are not stored, a dripping endpoint does
not hold a time slice past its end, and an endpoint that under-reports its tokens still meets
the token cap."""

import logging
import time

import pytest
from django.urls import reverse

from core.models import AuditEvent
from hosting.enums import Failure, ItemState, RequestStatus
from submissions.models import Submission
from tests.accounts.factories import UserFactory, maintainer_user
from tests.hostile_endpoint import (
    Behaviour,
    Drip,
    EchoKey,
    Giant,
    HostileEndpoint,
    LyingUsage,
    Redirect,
)

from .conftest import run, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

KEY = "sk-live-4f9Qz7Xc2Vb8Nm1Lk6Jh3Gf5Dsa0Pw"


def test_a_redirect_to_the_internal_network_is_not_followed(
    benchmark, owner, django_capture_on_commit_callbacks
):
    with (
        HostileEndpoint(Behaviour()) as internal,
        HostileEndpoint(Redirect(internal.base_url)) as endpoint,
    ):
        request = submit(benchmark, owner, base_url=endpoint.base_url, model="m")
        request = run(request, django_capture_on_commit_callbacks)
        asked = endpoint.requests

    assert internal.requests == []  # not one question reached the internal service
    assert 1 <= len(asked) <= 2  # the calls in flight when the first redirect came back
    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.ENDPOINT_REFUSED)
    assert request.message == (
        "The model endpoint answered with a redirect (HTTP 307) to "
        f"{internal.base_url}/chat/completions; Podium follows no redirect: give its final URL. "
        "Nothing was published; submit the request again."
    )
    assert request.submission is None


def test_a_quoted_key_is_masked_in_every_place_the_request_is_shown_stored_or_logged(
    benchmark, owner, client, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.DEBUG)
    with HostileEndpoint(EchoKey()) as endpoint:
        request = submit(benchmark, owner, base_url=endpoint.base_url, model="m", api_key=KEY)
        request = run(request, django_capture_on_commit_callbacks)
        assert endpoint.requests[0][1] == f"Bearer {KEY}"

    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.KEY_REFUSED)
    assert "Invalid API key: [masked]" in request.message
    superuser = UserFactory(is_staff=True, is_superuser=True)
    shown = [request.message, *(str(event.data) for event in AuditEvent.objects.all())]
    for viewer, url in [
        (owner, reverse("hosting:request", args=[request.pk])),
        (owner, reverse("api:hosted-detail", args=[benchmark.slug, request.pk])),
        (maintainer_user(), reverse("api:hosted-detail", args=[benchmark.slug, request.pk])),
        (superuser, reverse("admin:hosting_hostedrequest_change", args=[request.pk])),
        (superuser, reverse("admin:hosting_hostedrequest_changelist")),
        (superuser, reverse("admin:core_auditevent_changelist")),
    ]:
        client.force_login(viewer)
        response = client.get(url)
        assert response.status_code == 200, url
        shown.append(response.content.decode())
    shown.append(caplog.text)
    assert any("[masked]" in text for text in shown[2:])  # the pages show the masked message
    for text in shown:
        for start in range(len(KEY) - 7):
            assert KEY[start : start + 8] not in text


@pytest.mark.parametrize(
    # Each over-long answer is charged the ~51,000 tokens its 305 KB read imply: a cap the
    # default 2,000,000 would reach at question ~40 (and fail the request, storing nothing).
    "rules",
    [{"hosted_requests_per_minute": 60_000, "hosted_max_tokens": 10_000_000}],
)
def test_enormous_answers_are_not_stored(
    benchmark, owner, rules, django_capture_on_commit_callbacks
):
    giant = Giant(chars=500_000)
    with HostileEndpoint(giant) as endpoint:
        request = submit(benchmark, owner, base_url=endpoint.base_url, model="m")
        request = run(request, django_capture_on_commit_callbacks)

    assert request.state == RequestStatus.DONE, request.message  # over-long: scored as empty
    items = list(request.items.all())
    assert len(items) == 56
    assert {item.state for item in items} == {ItemState.FAILED}
    assert max(len(item.answer) for item in items) == 0
    assert items[0].last_error.startswith(
        f"the answer was longer than {benchmark.max_prediction_chars:,} characters"
    )
    assert {item.attempts for item in items} == {1}  # not asked again
    submission = Submission.objects.get()
    assert submission.predictions_size < 100_000


def test_a_dripping_endpoint_does_not_hold_a_time_slice_past_its_end(
    benchmark, owner, django_capture_on_commit_callbacks
):
    """Every answer would take ~40 s, a byte every 0.2 s, under a 120 s per-call timeout; the
    slice of 1 s ends and hands the request back soon after (the limit leaves a loaded
    machine room; the drip alone would take 40 s)."""
    with HostileEndpoint(Drip(interval=0.2)) as endpoint:
        request = submit(benchmark, owner, base_url=endpoint.base_url, model="m")
        started = time.monotonic()
        request = run(request, django_capture_on_commit_callbacks, time_budget=1.0)
        took = time.monotonic() - started

    assert request.state == RequestStatus.QUEUED  # handed back, for the next slice
    assert request.items.filter(state=ItemState.PENDING).count() == 56  # nothing half-done
    assert took < 15.0


@pytest.mark.parametrize(
    "rules", [{"hosted_requests_per_minute": 60_000, "hosted_max_tokens": 5_000}]
)
def test_the_token_cap_holds_against_an_endpoint_that_reports_no_tokens(
    benchmark, owner, rules, django_capture_on_commit_callbacks
):
    with HostileEndpoint(LyingUsage(chars=6_000)) as endpoint:
        request = submit(benchmark, owner, base_url=endpoint.base_url, model="m")
        request = run(request, django_capture_on_commit_callbacks)
        asked = len(endpoint.requests)

    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.TOKEN_CAP)
    assert request.completion_tokens >= 1_000 * request.items.filter(state=ItemState.DONE).count()
    assert asked < 56  # stopped by the cap, though the endpoint said it spent nothing
    assert not Submission.objects.exists()


def test_an_endpoint_moved_to_a_private_address_around_the_form_is_refused_at_connect_time(
    benchmark, owner, settings, django_capture_on_commit_callbacks
):
    """The rule is not only the form's: a row changed in a shell or the admin to point at the
    server's own network is refused before anything is sent (the worker checks the address
    again, and the client at every connection: tests/inference/test_outside_world.py)."""
    with HostileEndpoint(Behaviour()) as internal:
        request = submit(benchmark, owner, base_url="https://models.example.org/v1", model="m")
        type(request.endpoint).objects.filter(pk=request.endpoint.pk).update(
            base_url=internal.base_url
        )
        settings.PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = False
        request = run(request, django_capture_on_commit_callbacks)

    assert internal.requests == []
    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.ENDPOINT_REFUSED)
    assert "127.0.0.1" in request.message
    assert "an address of a private network" in request.message
