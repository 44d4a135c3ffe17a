"""What the schema says the API does, and the API doing it (issue 31, point 5): the mismatches
a schema fuzzer found, each held here in a few requests (tests/api/fuzz runs the fuzzer)."""

import pytest
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from accounts.services import create_api_token
from submissions import services
from submissions.models import Submission
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def published_medvidbench(medvidbench, published_rows):
    """MedVidBench with the published official rows of spec 7 on its board."""
    for row in published_rows[:3]:
        services.import_published_result(
            medvidbench, model_name=row.model_name, values=row.values, verified_at=timezone.now()
        )
    services.recompute_board(medvidbench)
    return medvidbench


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield f"{method.upper()} {path}", operation


def rankings_parameters(schema):
    operation = schema["paths"]["/api/v1/benchmarks/{slug}/rankings/"]["get"]
    return {parameter["name"]: parameter["schema"] for parameter in operation["parameters"]}


def test_every_operation_says_it_may_answer_401_and_429_with_retry_after(schema):
    for name, operation in operations(schema):
        assert {"401", "429"} <= set(operation["responses"]), name
        assert "Retry-After" in operation["responses"]["429"]["headers"], name


def test_a_hosted_request_is_the_owners_view_or_anyone_elses_queue_row(schema):
    answer = schema["paths"]["/api/v1/benchmarks/{slug}/hosted/{id}/"]["get"]["responses"]["200"]

    assert answer["content"]["application/json"]["schema"] == {
        "anyOf": [
            {"$ref": "#/components/schemas/HostedRequest"},
            {"$ref": "#/components/schemas/QueueRow"},
        ]
    }


def test_empty_parameters_are_allowed_by_the_schema_and_mean_the_default(
    schema, client, published_medvidbench
):
    parameters = rankings_parameters(schema)
    for name in ("board", "type", "precision", "domain_specific", "tag", "direction"):
        assert "" in parameters[name]["enum"], name
        assert "minLength" not in parameters[name], name
    assert "minLength" not in parameters["sort"]
    assert {"type": "string", "enum": [""]} in parameters["page"]["anyOf"]

    url = reverse("api:rankings", args=[published_medvidbench.slug])
    default = client.get(url).json()
    empty = client.get(url + "?sort=&board=&type=&page=&direction=").json()
    assert empty["results"] == default["results"]
    assert empty["board"] == "official"


def test_free_strings_say_they_hold_no_nul_and_the_api_refuses_one(
    schema, client, published_medvidbench
):
    assert rankings_parameters(schema)["q"]["pattern"] == "^[^\\x00]*$"
    url = reverse("api:rankings", args=[published_medvidbench.slug])

    response = client.get(url + "?q=%00")

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["q"]


def test_a_file_is_uploaded_as_multipart_only(schema, published_medvidbench):
    body = schema["paths"]["/api/v1/benchmarks/{slug}/submissions/"]["post"]["requestBody"]
    assert list(body["content"]) == ["multipart/form-data"]
    _, token = create_api_token(UserFactory(), name="script")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    before = Submission.objects.count()

    response = client.post(
        reverse("api:submit", args=[published_medvidbench.slug]),
        "model_name=M&predictions=x",
        content_type="application/x-www-form-urlencoded",
    )

    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
    assert Submission.objects.count() == before


def test_a_key_of_blanks_is_no_key_of_the_benchmark_not_a_blank_field(
    client, published_medvidbench
):
    url = reverse("api:rankings", args=[published_medvidbench.slug])
    battles = reverse("api:battles", args=[published_medvidbench.slug])

    assert client.get(url + "?sort=%0D").status_code == 404
    assert client.get(battles + "?category=%20").status_code == 404
