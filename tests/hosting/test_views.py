"""Hosted evaluation's pages with Django's test client: the Submit page's offer, the endpoint
form (a key never sent back), the public queue (no address, no key, others' evaluate-only
requests hidden, a constant number of queries), a request's own page (its owner's), the
Cancel confirmation, the board's link, and the "evaluated by Podium" badge."""

import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.db import connection
from django.template import Context, Template
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from hosting.enums import RequestStatus
from hosting.models import HostedRequest
from submissions.services import recompute_board
from tests.accounts.factories import UserFactory, maintainer_user
from tests.benchmark.factories import BenchmarkFactory
from tests.submissions.pages import required_marks

from .conftest import FACTS, MODEL, run, score_entry, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "http://127.0.0.1:9/v1"
FORM = {
    "model_name": "Form-7B",
    "institution": "Form lab",
    "contact_email": "form@example.org",
    "model_url": "https://example.org/form",
    "base_url": "https://models.example.org/v1",
    "model": "form-7b-instruct",
    "api_key": "sk-form-secret",
    **FACTS,
}


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def test_the_submit_page_offers_a_model_endpoint_only_where_the_benchmark_takes_one(
    benchmark, signed_in
):
    page = signed_in.get(reverse("submissions:submit", args=[benchmark.slug])).content.decode()
    assert f'href="{reverse("hosting:submit", args=[benchmark.slug])}"' in page
    assert "Submit a model endpoint" in page

    other = BenchmarkFactory(plugin="medvidbench")
    offer = Template("{% load hosting %}{% hosted_offer benchmark %}").render(
        Context({"benchmark": other})
    )
    assert offer.strip() == ""
    assert signed_in.get(reverse("hosting:submit", args=[other.slug])).status_code == 404
    assert signed_in.get(reverse("hosting:queue", args=[other.slug])).status_code == 404


def test_the_required_fields_are_marked_and_the_mark_explained(benchmark, signed_in):
    # Issue 32, point 10.
    page = signed_in.get(reverse("hosting:submit", args=[benchmark.slug])).content.decode()

    marked, required, legend = required_marks(page)

    # The benchmark's required model facts too; the parameters are optional.
    assert (
        marked
        == required
        == [
            "id_model_name",
            "id_institution",
            "id_contact_email",
            "id_model_url",
            "id_type",
            "id_licence",
            "id_precision",
            "id_domain_specific",
            "id_base_url",
            "id_model",
        ]
    )
    assert legend


def test_the_form_queues_a_request_and_lands_on_its_page(benchmark, signed_in, owner, settings):
    settings.PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = True
    page = signed_in.get(reverse("hosting:submit", args=[benchmark.slug])).content.decode()
    assert re.search(r'<input type="password" name="api_key"[^>]*id="id_api_key"', page)
    assert 'name="predictions"' not in page

    response = signed_in.post(reverse("hosting:submit", args=[benchmark.slug]), FORM)

    request = HostedRequest.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("hosting:request", args=[request.pk])
    assert (request.model_name, request.owner, request.endpoint.model) == (
        "Form-7B",
        owner,
        "form-7b-instruct",
    )
    assert request.endpoint.has_api_key
    assert request.model_facts == {**FACTS, "parameters": 7.0}
    page = signed_in.get(response["Location"]).content.decode()
    assert "Your model endpoint is queued" in page
    assert "https://models.example.org/v1" in page  # its owner sees the address
    assert "sk-form-secret" not in page  # nobody sees the key
    assert "position 1 in the queue" in text(page)


def test_a_refused_form_stores_nothing_and_never_sends_the_key_back(benchmark, signed_in):
    response = signed_in.post(
        reverse("hosting:submit", args=[benchmark.slug]),
        {**FORM, "base_url": "https://user:pw@models.example.org/v1"},
    )

    assert response.status_code == 200
    assert not HostedRequest.objects.exists()
    page = response.content.decode()
    assert "sk-form-secret" not in page
    assert "Nothing was submitted" in page
    assert "without a user name, password, query or fragment" in page
    assert 'value="Form-7B"' in page  # the other fields kept


def test_the_queue_is_public_without_addresses_or_keys(benchmark, owner, client):
    published = submit(
        benchmark,
        owner,
        base_url=URL,
        model="secret-model",
        name="Public-7B",
        api_key="sk-queue-secret",
    )
    submit(benchmark, UserFactory(), base_url=URL, model="m", name="Second-7B")
    hidden = submit(
        benchmark, UserFactory(), base_url=URL, model="m", name="Private-7B", publish=False
    )

    page = client.get(reverse("hosting:queue", args=[benchmark.slug])).content.decode()

    assert "Public-7B" in page
    assert "Second-7B" in page
    assert "Private-7B" not in page
    for secret in (URL, "127.0.0.1:9", "secret-model", "sk-queue-secret"):
        assert secret not in page
    rows = re.findall(r'<tr class="queue-row[^"]*" data-request="(\d+)">(.*?)</tr>', page, re.S)
    second = HostedRequest.objects.get(model_name="Second-7B")
    assert [(int(pk), text(body)) for pk, body in rows] == [
        (published.pk, f"Public-7B {text_date(published)} 1 pending pending —"),
        (second.pk, f"Second-7B {text_date(second)} 2 pending pending —"),
    ]
    assert 'hx-get="' in page  # it polls while requests wait
    assert hidden.pk not in [int(pk) for pk, _ in rows]


def text_date(request) -> str:
    return request.created_at.strftime("%Y-%m-%d %H:%M")


def test_the_queue_reads_the_same_number_of_queries_for_one_and_three_requests(
    benchmark, owner, client
):
    url = reverse("hosting:queue_live", args=[benchmark.slug])
    submit(benchmark, owner, base_url=URL, model="m", name="One")
    with CaptureQueriesContext(connection) as one:
        client.get(url)
    submit(benchmark, owner, base_url=URL, model="m", name="Two")
    submit(benchmark, owner, base_url=URL, model="m", name="Three")
    with CaptureQueriesContext(connection) as three:
        response = client.get(url)
    assert response.content.decode().count('class="queue-row') == 3
    assert len(one) == len(three)


def test_a_request_page_is_its_owners_and_the_maintainers(benchmark, owner, client):
    request = submit(benchmark, owner, base_url=URL, model="m")
    url = reverse("hosting:request", args=[request.pk])

    assert client.get(url).status_code == 302  # sign in first
    client.force_login(UserFactory())
    assert client.get(url).status_code == 404
    client.force_login(maintainer_user())
    assert client.get(url).status_code == 200
    client.force_login(owner)
    assert client.get(url).status_code == 200
    assert client.get(reverse("hosting:request_live", args=[request.pk])).status_code == 200


def test_cancel_asks_first_then_stops_the_request(benchmark, owner, signed_in):
    request = submit(benchmark, owner, base_url=URL, model="m")
    url = reverse("hosting:cancel", args=[request.pk])
    assert signed_in.get(url).status_code == 405  # POST only

    confirm = signed_in.post(url)
    assert confirm.status_code == 200
    assert "Cancel the hosted evaluation of Hosted-7B?" in confirm.content.decode()
    request.refresh_from_db()
    assert request.status == RequestStatus.QUEUED

    done = signed_in.post(url, {"confirm": "yes"}, follow=True)
    request.refresh_from_db()
    assert request.status == RequestStatus.CANCELLED
    assert "The hosted evaluation is cancelled; nothing was published." in done.content.decode()
    again = signed_in.post(url, {"confirm": "yes"}, follow=True)
    assert "This request is cancelled; there is nothing to cancel." in again.content.decode()


def test_a_stranger_cannot_cancel(benchmark, owner, client):
    request = submit(benchmark, owner, base_url=URL, model="m")
    client.force_login(UserFactory())
    assert (
        client.post(reverse("hosting:cancel", args=[request.pk]), {"confirm": "yes"}).status_code
        == 404
    )
    request.refresh_from_db()
    assert request.status == RequestStatus.QUEUED


def test_the_address_the_issue_names_redirects_to_the_queue(benchmark, client):
    response = client.get(f"/benchmarks/{benchmark.slug}/queue/")
    assert (response.status_code, response["Location"]) == (
        301,
        reverse("hosting:queue", args=[benchmark.slug]),
    )


def test_the_board_links_the_queue_and_marks_an_entry_evaluated_by_podium(
    benchmark, owner, standin, client, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    request = run(
        submit(benchmark, owner, base_url=standin.base_url, model=MODEL["strong"]), capture
    )
    score_entry(request, capture)
    recompute_board(benchmark)

    board = client.get(reverse("submissions:community", args=[benchmark.slug])).content.decode()
    assert f'href="{reverse("hosting:queue", args=[benchmark.slug])}"' in board
    row = re.search(r"<th scope=\"row\" class=\"model\">(.*?)</th>", board, re.S).group(1)
    assert "Hosted-7B" in row
    assert '<span class="tag hosted"' in row
    entry = client.get(
        reverse("submissions:entry", args=[benchmark.slug, request.submission_id])
    ).content.decode()
    assert '<span class="tag hosted"' in entry
    queue = client.get(reverse("hosting:queue", args=[benchmark.slug])).content.decode()
    entry_url = reverse("submissions:entry", args=[benchmark.slug, request.submission_id])
    assert f'<a href="{entry_url}">entry</a>' in queue
    assert "hx-get" not in queue  # nothing moves any more: it stops polling


def test_an_unreachable_endpoint_says_until_when_podium_keeps_trying(
    benchmark, owner, signed_in, settings
):
    """The owner's page said "Podium keeps trying" with no end (issue 32's second walk waited
    seven minutes and cancelled): it names the moment the request fails, from the outage
    limit, and that it may be cancelled."""
    settings.PODIUM_HOSTED_OUTAGE_LIMIT_SECONDS = 1800
    request = submit(benchmark, owner, base_url=URL, model="m")
    since = datetime(2026, 12, 4, 9, 5, tzinfo=UTC)
    HostedRequest.objects.filter(pk=request.pk).update(
        status=RequestStatus.RUNNING,
        unreachable_since=since,
        last_transient_error="connection refused",
    )

    page = text(signed_in.get(reverse("hosting:request_live", args=[request.pk])).content.decode())

    assert (
        "The endpoint has been unreachable since 09:05 UTC; Podium keeps trying until 09:35 UTC, "
        "then the request fails and nothing is published. Nothing is counted as failed "
        "meanwhile. You may cancel it."
    ) in page
