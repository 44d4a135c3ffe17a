"""Hosted evaluation by API token: submit (the form's checks and errors, as JSON; the key
write-only), the public queue, one request (its owner's details, a stranger's queue row),
cancel; the OpenAPI schema's operations."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from hosting.enums import RequestStatus
from hosting.models import HostedRequest
from tests.accounts.factories import UserFactory

from .conftest import FACTS, MODEL, run, score_entry, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

BODY = {
    "model_name": "Scripted-7B",
    "institution": "API lab",
    "contact_email": "api@example.org",
    "model_url": "https://example.org/api-model",
    "base_url": "https://models.example.org/v1",
    "model": "scripted-7b",
    "api_key": "sk-api-secret",
    **FACTS,
}


def token_client(user):
    _, raw = create_api_token(user, name="laptop")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_a_request_is_submitted_by_token_and_its_key_never_returned(benchmark, owner):
    client = token_client(owner)

    response = client.post(reverse("api:hosted-list", args=[benchmark.slug]), BODY, format="json")

    assert response.status_code == 201
    body = response.json()
    request = HostedRequest.objects.get()
    assert response["Location"] == body["url"]
    assert body["url"].endswith(f"/api/v1/benchmarks/clinicalqa/hosted/{request.pk}/")
    assert (body["status"], body["position"], body["model"], body["api_key_set"]) == (
        "queued",
        1,
        "scripted-7b",
        True,
    )
    assert [cell["text"] for cell in body["categories"]] == ["pending", "pending"]
    assert [cell["category"] for cell in body["categories"]] == ["close_ended", "open_ended"]
    assert "sk-api-secret" not in response.content.decode()
    assert "api_key" not in body
    assert request.endpoint.has_api_key


def test_bad_fields_are_refused_per_field_and_nothing_is_stored(benchmark, owner):
    client = token_client(owner)
    response = client.post(
        reverse("api:hosted-list", args=[benchmark.slug]),
        {**BODY, "base_url": "not a url", "model_name": ""},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert (body["code"], sorted(body["errors"])) == ("invalid", ["base_url", "model_name"])
    assert not HostedRequest.objects.exists()

    refused = client.post(
        reverse("api:hosted-list", args=[benchmark.slug]),
        {**BODY, "base_url": "https://user:pw@models.example.org/v1"},
        format="json",
    )
    assert refused.status_code == 400
    assert list(refused.json()["errors"]) == ["base_url"]
    assert not HostedRequest.objects.exists()


def test_without_a_token_nothing_is_accepted(benchmark):
    response = APIClient().post(
        reverse("api:hosted-list", args=[benchmark.slug]), BODY, format="json"
    )
    assert response.status_code == 401
    assert not HostedRequest.objects.exists()


def test_the_queue_and_a_request_read_as_the_page_shows_them(
    benchmark, owner, standin, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    done = run(submit(benchmark, owner, base_url=standin.base_url, model=MODEL["fair"]), capture)
    score_entry(done, capture)
    waiting = submit(benchmark, owner, base_url=standin.base_url, model="m", name="Waiting-7B")
    submit(benchmark, owner, base_url=standin.base_url, model="m", name="Mine-only", publish=False)

    rows = APIClient().get(reverse("api:hosted-list", args=[benchmark.slug])).json()

    assert [(row["model_name"], row["status"], row["position"]) for row in rows] == [
        ("Waiting-7B", "queued", 1),
        ("Hosted-7B", "done", None),
    ]
    finished = rows[1]
    assert [cell["text"] for cell in finished["categories"]] == ["finished", "finished"]
    assert finished["entry_url"].endswith(f"/b/clinicalqa/entries/{done.submission_id}/")
    assert standin.base_url not in str(rows)

    url = reverse("api:hosted-detail", args=[benchmark.slug, done.pk])
    public = APIClient().get(url).json()
    assert set(public) == {
        "id", "url", "model_name", "submitted_at", "status", "position", "categories",
        "entry_url", "publish",
    }  # fmt: skip
    mine = token_client(owner).get(url).json()
    assert (mine["items_done"], mine["submission"], mine["base_url"]) == (
        56,
        done.submission_id,
        standin.base_url,
    )
    assert mine["message"].startswith("Evaluated by Podium")
    entry = token_client(owner).get(reverse("api:submission-detail", args=[done.submission_id]))
    assert (entry.json()["source"], entry.json()["source_label"]) == (
        "hosted",
        "Evaluated by Podium",
    )
    hidden = HostedRequest.objects.get(model_name="Mine-only")
    assert (
        APIClient().get(reverse("api:hosted-detail", args=[benchmark.slug, hidden.pk])).status_code
        == 404
    )
    assert waiting.pk in [row["id"] for row in rows]


def test_cancel_by_its_owner_and_not_by_a_stranger(benchmark, owner):
    request = submit(benchmark, owner, base_url="https://models.example.org/v1", model="m")
    url = reverse("api:hosted-cancel", args=[benchmark.slug, request.pk])

    assert token_client(UserFactory()).post(url).status_code == 403
    response = token_client(owner).post(url)

    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    request.refresh_from_db()
    assert request.status == RequestStatus.CANCELLED
    again = token_client(owner).post(url)
    assert (again.status_code, again.json()["code"]) == (409, "invalid_state")


def test_the_schema_describes_the_hosted_operations(client):
    schema = client.get(reverse("api:schema"), {"format": "json"}).json()
    operations = {
        operation["operationId"]
        for path, methods in schema["paths"].items()
        if "/hosted/" in path
        for operation in methods.values()
    }
    assert operations == {"hosted_list", "hosted_create", "hosted_retrieve", "hosted_cancel"}
    fields = schema["components"]["schemas"]["HostedSubmitRequest"]["properties"]
    assert "predictions" not in fields
    assert fields["api_key"]["writeOnly"] is True
