"""Duplicate files (issue 13, point 4): found by checksum per benchmark. Your own earlier file is
accepted and flagged (page, message, API); another account's published file is refused with a
clear message, storing nothing; another account's evaluate-only file is not revealed."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from accounts.services import create_api_token
from core.exceptions import DuplicatePredictions
from submissions.models import Evaluation, Submission
from submissions.services import SubmissionDetails, create_submission, evaluations_left_today
from tests.accounts.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


def entry(benchmark, owner, predictions, name, publish=True):
    return create_submission(
        benchmark,
        owner=owner,
        details=SubmissionDetails(model_name=name, publish=publish),
        predictions=predictions,
    )


def form_post(client, predictions, name):
    return client.post(
        "/b/medvidbench/submit/",
        {
            "model_name": name,
            "institution": "Lab",
            "contact_email": "me@example.org",
            "model_url": "https://example.org/model",
            "predictions": SimpleUploadedFile("p.json", predictions, "application/json"),
        },
        follow=True,
    )


def test_your_own_duplicate_is_accepted_and_flagged(client, benchmark, perfect_predictions):
    owner = UserFactory()
    first = entry(benchmark, owner, perfect_predictions, "First")
    client.force_login(owner)

    page = form_post(client, perfect_predictions, "Second").content.decode()

    second = Submission.objects.get(model_name="Second")
    assert second.predictions_sha256 == first.predictions_sha256
    assert "It is byte for byte the file of your entry “First”: it will score the same." in page
    assert "This file is byte for byte the one of your entry" in page
    assert f'<a href="/submissions/{first.pk}/">“First”</a>' in page


def test_another_accounts_published_file_is_refused_and_nothing_is_stored(
    client, benchmark, perfect_predictions, private_dir
):
    entry(benchmark, UserFactory(), perfect_predictions, "Theirs")
    copier = UserFactory()
    files_before = sorted(private_dir.rglob("*.json"))
    left = evaluations_left_today(copier, benchmark)

    with pytest.raises(DuplicatePredictions, match="“Theirs”, an entry another account"):
        entry(benchmark, copier, perfect_predictions, "Mine")

    assert not Submission.objects.filter(owner=copier).exists()
    assert Evaluation.objects.count() == 1
    assert sorted(private_dir.rglob("*.json")) == files_before
    assert evaluations_left_today(copier, benchmark) == left
    client.force_login(copier)
    page = form_post(client, perfect_predictions, "Mine").content.decode()
    assert "This file is byte for byte the predictions of “Theirs”" in page
    assert 'id="id_predictions"' in page  # the form is shown again, with the error


def test_another_accounts_evaluate_only_file_is_not_revealed(benchmark, perfect_predictions):
    entry(benchmark, UserFactory(), perfect_predictions, "Private", publish=False)
    mine = entry(benchmark, UserFactory(), perfect_predictions, "Mine")
    assert mine.pk


def test_the_api_flags_your_duplicate_and_refuses_a_copy_with_its_code(
    benchmark, perfect_predictions
):
    owner = UserFactory()
    first = entry(benchmark, owner, perfect_predictions, "First")
    api = APIClient()
    _, raw = create_api_token(owner, name="script")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    def submit(client, name):
        upload = SimpleUploadedFile("p.json", perfect_predictions, "application/json")
        return client.post(
            "/api/v1/benchmarks/medvidbench/submissions/",
            {
                "model_name": name,
                "institution": "Lab",
                "contact_email": "me@example.org",
                "model_url": "https://example.org/model",
                "predictions": upload,
            },
            format="multipart",
        )

    created = submit(api, "Second")
    assert created.status_code == 201, created.json()
    assert created.json()["duplicate_of"] == [first.pk]

    other = APIClient()
    _, raw = create_api_token(UserFactory(), name="script")
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    refused = submit(other, "Copy")
    assert refused.status_code == 409
    assert refused.json()["code"] == "duplicate_predictions"
    assert "“First”" in refused.json()["detail"]
