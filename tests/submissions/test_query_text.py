"""A NUL in what a page reads from its address or a view reads from a form itself (issue 31,
point 5): `GET /b/<slug>/?q=%00` answered 500 on PostgreSQL (a NUL reached the query). Every
page's parameters now get the API's treatment, a 400 that names the parameter; nothing
changes."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from core.models import AuditEvent
from submissions.models import Submission
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


@pytest.fixture
def entry(benchmark, perfect_predictions):
    owner = UserFactory()
    submission = create_submission(
        benchmark,
        owner=owner,
        details=SubmissionDetails(model_name="Mine", publish=False, institution="Lab"),
        predictions=perfect_predictions,
    )
    score_evaluation(submission.evaluations.get())
    return submission


def page_paths() -> list[str]:
    """Every page route of the site (the API's excepted), its arguments filled in: the check
    runs before a route is even resolved, so a pk that names nothing is as good as any."""
    fillers = {"slug": "medvidbench", "pk": "1", "int": "1", "str": "x", "path": "x"}
    found = []

    def walk(patterns, prefix):
        for pattern in patterns:
            route = str(pattern.pattern)
            if prefix + route in ("api/", "static/"):
                continue
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + route)
            elif isinstance(pattern, URLPattern):
                found.append(prefix + route)

    walk(get_resolver().url_patterns, "")
    paths = []
    for route in found:
        if route.startswith("^") or "(?P" in route:  # admin's regex routes: one literal path
            route = route.strip("^$").split("(?P")[0].split("(")[0]
        parts = []
        for piece in route.split("<"):
            if ">" in piece:
                converter, _, rest = piece.partition(">")
                kind = converter.split(":")[0] if ":" in converter else "str"
                parts.append(fillers.get(kind, "1") + rest)
            else:
                parts.append(piece)
        paths.append("/" + "".join(parts))
    return sorted(set(paths))


def test_every_page_refuses_a_nul_in_any_parameter_with_400_naming_it(client):
    paths = page_paths()
    # The walk found the site: its boards, its entries' pages and the admin's.
    assert "/b/medvidbench/" in paths
    assert "/submissions/1/" in paths
    assert len(paths) > 40
    for path in paths:
        response = client.get(path + "?page=2&q=a%00b")
        assert response.status_code == 400, path
        assert "The address&#x27;s parameter &#x27;q&#x27; holds a NUL character (U+0000) at " \
            "character 2" in response.content.decode(), path  # fmt: skip


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("q=%00", "q"),
        ("q=%00&sort=rank", "q"),
        ("sort=%00", "sort"),
        ("tag=%00", "tag"),
        ("type=%00", "type"),
        ("category=%00", "category"),
        ("page=%00", "page"),
    ],
)
def test_the_board_answers_400_for_a_nul_where_it_answered_500(
    client, benchmark, entry, query, name
):
    response = client.get(f"/b/{benchmark.slug}/?{query}")

    assert response.status_code == 400
    page = response.content.decode()
    assert (
        f"The address&#x27;s parameter &#x27;{name}&#x27; holds a NUL character (U+0000) at "
        "character 1, which no text may hold; remove it from the address. Nothing was changed."
    ) in page
    assert "<title>The request could not be read" in page


def test_a_nul_in_a_parameters_name_is_refused_too(client, benchmark):
    response = client.get(f"/b/{benchmark.slug}/?q%00x=1")

    assert response.status_code == 400
    assert "The address&#x27;s parameter name &#x27;q\\\\x00x&#x27; holds a NUL" in (
        response.content.decode()
    )


def test_a_board_search_without_a_nul_still_works(client, benchmark):
    assert client.get(f"/b/{benchmark.slug}/?q=a%01b&sort=%ff").status_code == 200


def test_the_api_keeps_its_own_400_for_a_nul(client, benchmark):
    response = client.get(f"/api/v1/benchmarks/{benchmark.slug}/rankings/?q=%00")

    assert response.status_code == 400
    assert response.json()["code"] != "invalid_text"  # its serializer's, naming the field


def test_a_nul_in_the_publication_note_is_refused_and_nothing_changes(client, entry):
    client.force_login(entry.owner)

    response = client.post(
        f"/submissions/{entry.pk}/publication/", {"publish": "1", "note": "first\x00run"}
    )

    assert response.status_code == 400
    assert (
        "The form field &#x27;note&#x27; holds a NUL character (U+0000) at character 6, which no "
        "text may hold; remove it and send the form again. Nothing was changed."
    ) in response.content.decode()
    entry.refresh_from_db()
    assert not entry.publish
    assert not AuditEvent.objects.filter(action="submissions.submission.published").exists()
    assert Submission.objects.get(pk=entry.pk).publish is False
