"""Every error under /api/ answers JSON in the API's envelope, never Django's HTML page: a bug
in an API view or a plain view (500), a URL no route matches (404), a request Django refuses
before any view runs (400). The rest of the site keeps its HTML pages."""

import pytest
from django.test import Client

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db,
    pytest.mark.urls("tests.api.urls_raising"),
]

SERVER_ERROR = {
    "detail": "An internal error stopped this request; the maintainers have been told. "
    "Please try again later.",
    "code": "server_error",
}


@pytest.fixture
def client():
    # Answer as in production instead of re-raising the view's exception into the test.
    return Client(raise_request_exception=False)


@pytest.mark.parametrize("url", ["/api/v1/failing/", "/api/v1/failing-plain/"])
def test_a_bug_under_the_api_answers_json_500(client, url, caplog):
    response = client.get(url)

    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == SERVER_ERROR
    # Django still logs the error with its traceback, as for any 500.
    assert any(record.name == "django.request" and record.exc_info for record in caplog.records)


def test_a_bug_elsewhere_keeps_the_html_page(client):
    response = client.get("/failing/")

    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


def test_an_unknown_api_url_answers_json_404(client):
    response = client.get("/api/v1/no-such-thing/")

    assert response.status_code == 404
    assert response.json() == {
        "detail": "No such API endpoint; the endpoints are listed at /api/docs/.",
        "code": "not_found",
    }


def test_an_unknown_site_url_keeps_the_html_page(client):
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_request_refused_before_any_view_answers_json_400(client):
    response = client.get("/api/v1/benchmarks/", HTTP_HOST="evil.example\x00")

    assert response.status_code == 400
    assert response.json() == {
        "detail": "The request names a host this site does not serve.",
        "code": "bad_request",
    }
