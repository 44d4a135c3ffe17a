"""End to end through the API, with a real worker cluster: a token from the account page, the
demo-format file submitted by script, polled until scored, and the entry found in the CSV
export with the same values as in the JSON export."""

import csv
import io
import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from submissions.enums import EvaluationStatus
from tests.accounts.factories import UserFactory
from tests.submissions.conftest import start_cluster, stop_cluster

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the cluster needs a shared PostgreSQL database"
    ),
]

TOKEN = re.compile(r"pod_[A-Za-z0-9_-]{40,}")


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


def test_a_script_submits_by_token_and_finds_its_entry_in_both_exports(
    client, medvidbench, perfect_predictions
):
    user = UserFactory()
    client.force_login(user)
    page = client.post(reverse("accounts:tokens"), {"name": "gpu box"}, follow=True)
    raw = TOKEN.search(page.content.decode()).group(0)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    created = api.post(
        reverse("api:submit", args=[medvidbench.slug]),
        {
            "model_name": "ScriptedModel",
            "institution": "Lab",
            "contact_email": "a@example.org",
            "model_url": "https://example.org/m",
            "predictions": SimpleUploadedFile("predictions.json", perfect_predictions),
        },
        format="multipart",
    )
    assert created.status_code == 201
    status_url = created.json()["url"]

    cluster = start_cluster()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            body = api.get(status_url).json()
            if body["evaluation"]["status"] in (EvaluationStatus.SCORED, EvaluationStatus.FAILED):
                break
            time.sleep(0.5)
    finally:
        stop_cluster(cluster)
    assert body["evaluation"]["status"] == EvaluationStatus.SCORED, body["evaluation"]
    metrics = body["evaluation"]["metrics"]

    rankings = reverse("api:rankings", args=[medvidbench.slug])
    rows = APIClient().get(rankings, {"board": "all", "page_size": 1000}).json()["results"]
    row = next(row for row in rows if row["model"] == "ScriptedModel")
    exported = APIClient().get(rankings, {"board": "all", "format": "csv"})
    assert exported.status_code == 200
    table = list(csv.DictReader(io.StringIO(exported.content.decode())))
    line = next(line for line in table if "ScriptedModel" in line.values())

    for key, value in metrics.items():
        assert row["metrics"][key]["value"] == value
        cell = line[key]
        assert (cell == "") if value is None else (float(cell) == value), key
