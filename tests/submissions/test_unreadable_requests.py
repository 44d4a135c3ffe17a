"""Requests Django refuses before any form or serializer reads them (fields over the size a
form may send, more fields than it accepts, multipart data that cannot be parsed) and bodies
the API does not take: on both channels a 400 (415) that says what is wrong, JSON under /api/,
a page in the site's layout elsewhere, and nothing stored. Never a 500."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from submissions.models import Evaluation, Submission
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TOO_LARGE = (
    "The request's fields (other than its file) are larger than the 2.5 MB a form may send; "
    "nothing was stored. A name or a URL is far shorter: check what was sent."
)
TOO_MANY = (
    "The request sends more fields or files than a form accepts; nothing was stored. Send the "
    "form's fields and one predictions file."
)
MALFORMED = (
    "The request's form data could not be read (the upload was cut off, or it is not "
    "multipart/form-data as its header says); nothing was stored. Send it again."
)


def multipart_field(name: str, value: bytes) -> bytes:
    return (
        b'--b\r\nContent-Disposition: form-data; name="'
        + name.encode()
        + b'"\r\n\r\n'
        + value
        + b"\r\n--b--\r\n"
    )


CASES = [
    pytest.param(
        multipart_field("model_name", b"m" * 3_000_000),
        "multipart/form-data; boundary=b",
        TOO_LARGE,
        "request_too_large",
        id="a-3-mb-model-name",
    ),
    pytest.param(
        # Multipart, as an upload is sent (the API takes nothing else: 415 below).
        b"".join(
            b'--b\r\nContent-Disposition: form-data; name="f%d"\r\n\r\nx\r\n' % n
            for n in range(1_001)
        )
        + b"--b--\r\n",
        "multipart/form-data; boundary=b",
        TOO_MANY,
        "too_many_fields",
        id="1001-fields",
    ),
    pytest.param(
        b"garbage without a boundary",
        "multipart/form-data",
        MALFORMED,
        "malformed_request",
        id="multipart-without-a-boundary",
    ),
]


def nothing_stored() -> bool:
    return not Submission.objects.exists() and not Evaluation.objects.exists()


@pytest.fixture
def api():
    _, token = create_api_token(UserFactory(), name="script")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.mark.parametrize(("body", "content_type", "reason", "code"), CASES)
def test_the_api_answers_json_400_with_the_reason(benchmark, api, body, content_type, reason, code):
    response = api.generic(
        "POST", reverse("api:submit", args=[benchmark.slug]), body, content_type=content_type
    )

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    body = response.json()
    if code == "malformed_request":  # DRF reads the multipart body itself, and says why
        assert body == {
            "detail": "Multipart form parse error - Invalid boundary in multipart: None",
            "code": "parse_error",
        }
    else:
        assert body == {"detail": reason, "code": code}
    assert nothing_stored()


@pytest.mark.parametrize(("body", "content_type", "reason", "code"), CASES)
def test_the_site_answers_a_400_page_with_the_reason(benchmark, body, content_type, reason, code):
    client = Client(raise_request_exception=False)
    client.force_login(UserFactory())

    response = client.generic(
        "POST",
        reverse("submissions:submit", args=[benchmark.slug]),
        body,
        content_type=content_type,
    )

    assert response.status_code == 400
    page = response.content.decode()
    assert "<h1>The request could not be read</h1>" in page
    assert f"<p>{reason}</p>" in page.replace("&#x27;", "'")
    assert 'href="/static/css/podium.css"' in page  # the site's layout, not Django's bare page
    assert nothing_stored()


def test_a_urlencoded_body_to_the_submit_endpoint_is_refused_with_its_code(benchmark, api):
    response = api.generic(
        "POST",
        reverse("api:submit", args=[benchmark.slug]),
        b"model_name=x&predictions=y",
        content_type="application/x-www-form-urlencoded",
    )

    assert response.status_code == 415
    assert response.json() == {
        "detail": 'Unsupported media type "application/x-www-form-urlencoded" in request.',
        "code": "unsupported_media_type",
    }
    assert nothing_stored()


def test_a_json_body_to_the_submit_endpoint_is_refused_with_its_code(benchmark, api):
    response = api.post(
        reverse("api:submit", args=[benchmark.slug]), {"model_name": "x"}, format="json"
    )

    assert response.status_code == 415
    assert response.json() == {
        "detail": 'Unsupported media type "application/json" in request.',
        "code": "unsupported_media_type",
    }
    assert nothing_stored()


def test_drf_refusals_carry_their_code(benchmark):
    response = APIClient().get(reverse("api:submission-list"))

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
