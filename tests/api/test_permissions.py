"""The permission matrix: every endpoint and method against anonymous, the submitter, another
user, a judge maintainer (the role, without staff) and staff; and no response of any endpoint
carries a reference answer of the test set."""

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from submissions.models import Submission
from submissions.services import (
    SubmissionDetails,
    create_submission,
    recompute_board,
    score_evaluation,
)
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ACTORS = ("anonymous", "submitter", "other", "maintainer", "staff")


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


@pytest.fixture
def world(benchmark, predictions_for, records):
    """A scored, published entry and an evaluate-only one, both the submitter's."""
    users = {
        "submitter": UserFactory(),
        "other": UserFactory(),
        "maintainer": UserFactory(),
        "staff": UserFactory(is_staff=True, is_superuser=True),
    }
    users["maintainer"].user_permissions.add(Permission.objects.get(codename="rerun_judgejob"))
    answers = predictions_for(["answer"] * len(records))
    entries = {}
    for name, publish in (("Published", True), ("Hidden", False)):
        submission = create_submission(
            benchmark,
            owner=users["submitter"],
            details=SubmissionDetails(model_name=name, publish=publish),
            predictions=answers,
        )
        score_evaluation(submission.evaluations.get())
        entries[name] = submission
    recompute_board(benchmark)
    clients = {"anonymous": APIClient()}
    for actor, user in users.items():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {create_api_token(user, name='t')[1]}")
        clients[actor] = client
    return clients, entries, answers


def upload(answers, name):
    # Each upload its own bytes (whitespace after the JSON spells the name): the same file from
    # another account than the published entry's would be refused as a copy.
    tail = "".join(
        "\n" if bit == "1" else " " for bit in format(int.from_bytes(name.encode()), "b")
    )
    answers = answers + tail.encode()
    return {
        "model_name": name,
        "institution": "Lab",
        "contact_email": "a@example.org",
        "model_url": "https://example.org/m",
        "predictions": SimpleUploadedFile("p.json", answers),
    }


def expected(anonymous, submitter, other, maintainer, staff):
    return dict(zip(ACTORS, (anonymous, submitter, other, maintainer, staff), strict=True))


READ_ONLY = expected(200, 200, 200, 200, 200)
NO_WRITE = expected(401, 405, 405, 405, 405)
SIGNED_IN = expected(401, 200, 200, 200, 200)


def compare(benchmark, a, b):
    return reverse("api:compare", args=[benchmark.slug]) + f"?a={a.pk}&b={b.pk}"


def matrix(benchmark, entry, hidden=None):
    slug = benchmark.slug
    mine = reverse("api:submission-detail", args=[entry.pk])
    judge = reverse("api:judge-start", args=[entry.pk])
    # An evaluate-only entry is compared for its owner and those who see every entry only.
    hidden_rows = []
    if hidden is not None:
        hidden_rows = [
            ("get", compare(benchmark, hidden, entry), expected(404, 200, 404, 404, 200)),
            ("get", compare(benchmark, entry, hidden), expected(404, 200, 404, 404, 200)),
        ]
    return [
        ("get", reverse("api:benchmark-list"), READ_ONLY),
        ("post", reverse("api:benchmark-list"), NO_WRITE),
        ("get", reverse("api:benchmark-detail", args=[slug]), READ_ONLY),
        ("put", reverse("api:benchmark-detail", args=[slug]), NO_WRITE),
        ("delete", reverse("api:benchmark-detail", args=[slug]), NO_WRITE),
        ("get", reverse("api:rankings", args=[slug]), READ_ONLY),
        ("post", reverse("api:rankings", args=[slug]), NO_WRITE),
        ("get", reverse("api:submit", args=[slug]), NO_WRITE),
        ("post", reverse("api:submit", args=[slug]), expected(401, 201, 201, 201, 201)),
        ("get", reverse("api:submission-list"), SIGNED_IN),
        ("post", reverse("api:submission-list"), NO_WRITE),
        ("get", mine, expected(401, 200, 404, 404, 200)),
        ("put", mine, expected(401, 405, 405, 405, 405)),
        ("delete", mine, expected(401, 405, 405, 405, 405)),
        # No judge endpoint is configured: whoever may start the judge learns that (503).
        ("post", judge, expected(401, 503, 404, 404, 503)),
        ("get", judge, expected(401, 405, 405, 405, 405)),
        ("get", compare(benchmark, entry, entry), READ_ONLY),
        ("post", compare(benchmark, entry, entry), NO_WRITE),
        *hidden_rows,
    ]


def test_every_endpoint_and_method_for_every_actor(world, benchmark):
    clients, entries, answers = world
    failures = []
    for method, url, statuses in matrix(benchmark, entries["Published"], entries["Hidden"]):
        for actor in ACTORS:
            data = upload(answers, f"{actor}-{method}") if url.endswith("/submissions/") else None
            kwargs = {"format": "multipart"} if data else {}
            response = getattr(clients[actor], method)(url, data, **kwargs)
            if response.status_code != statuses[actor]:
                failures.append(f"{method.upper()} {url} as {actor}: {response.status_code}")
    assert failures == []


def test_an_evaluate_only_entry_is_seen_by_its_owner_and_staff_only(world, benchmark):
    clients, entries, _ = world
    rankings = reverse("api:rankings", args=[benchmark.slug])
    detail = reverse("api:submission-detail", args=[entries["Hidden"].pk])

    for actor in ACTORS:
        rows = clients[actor].get(rankings, {"board": "all"}).json()["results"]
        assert [row["model"] for row in rows] == ["Published"], actor
        csv_text = clients[actor].get(rankings, {"board": "all", "format": "csv"}).content
        assert b"Hidden" not in csv_text
    assert clients["submitter"].get(detail).status_code == 200
    assert clients["staff"].get(detail).status_code == 200
    assert clients["other"].get(detail).status_code == 404


def test_verification_fields_cannot_be_set_through_the_api(world, benchmark):
    clients, _, answers = world
    data = {**upload(answers, "Sneaky"), "verified": "true", "verified_at": "2026-01-01T00:00Z"}

    response = clients["other"].post(
        reverse("api:submit", args=[benchmark.slug]), data, format="multipart"
    )

    assert response.status_code == 201
    assert response.json()["verified"] is False
    assert not Submission.objects.get(model_name="Sneaky").is_verified


def test_no_response_carries_a_reference_answer(world, benchmark, records):
    clients, entries, _ = world
    references = [record["conversations"][-1]["value"] for record in records]
    urls = [
        url
        for method, url, _ in matrix(benchmark, entries["Published"], entries["Hidden"])
        if method == "get"
    ]
    urls += [
        reverse("api:submission-detail", args=[entries["Hidden"].pk]),
        reverse("api:rankings", args=[benchmark.slug]) + "?board=all&format=csv",
        reverse("api:schema"),
    ]
    responses = [(url, clients[actor].get(url)) for url in urls for actor in ACTORS]
    assert all(response.content for _, response in responses)

    leaks = [
        (reference, url)
        for reference in references
        for url, response in responses
        if reference in response.content.decode()
    ]
    assert leaks == []
