"""Submitting by API token: the same checks, quota and errors as the web form, as JSON."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token, revoke_api_token
from core import private_files
from judging.services import configure_endpoint
from submissions.enums import EvaluationStatus, VerificationStatus
from submissions.models import Submission
from submissions.services import score_evaluation, set_verification_status
from tests.accounts.factories import UserFactory, maintainer_user

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

FIELDS = {
    "model_name": "ScriptModel",
    "institution": "Lab",
    "contact_email": "a@example.org",
    "model_url": "https://example.org/model",
}


def token_client(user):
    _, raw = create_api_token(user, name="gpu box")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def submit(client, benchmark, content, **fields):
    data = {**FIELDS, **fields, "predictions": SimpleUploadedFile("p.json", content)}
    return client.post(reverse("api:submit", args=[benchmark.slug]), data, format="multipart")


def test_a_valid_file_is_stored_queued_and_described(benchmark, perfect_predictions):
    user = UserFactory()

    response = submit(token_client(user), benchmark, perfect_predictions)

    assert response.status_code == 201
    body = response.json()
    submission = Submission.objects.get()
    assert submission.owner == user
    assert body["id"] == submission.pk
    assert response["Location"] == body["url"]
    assert body["url"].endswith(reverse("api:submission-detail", args=[submission.pk]))
    assert body["model_name"] == "ScriptModel"
    assert body["publish"] is True
    assert body["evaluation"]["status"] == EvaluationStatus.QUEUED
    assert private_files.read(submission.predictions_file) == perfect_predictions


def test_a_misaligned_file_is_refused_with_its_rows_and_nothing_is_stored(
    benchmark, predictions_for
):
    rows = json.loads(predictions_for(["a", "b", "c", "d", "e"]))
    rows[1]["id"], rows[3]["qa_type"] = "wrong-id", "wrong"

    response = submit(token_client(UserFactory()), benchmark, json.dumps(rows).encode())

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_predictions"
    assert body["total"] == 2
    assert [(p["row"], p["field"]) for p in body["problems"]] == [(1, "id"), (3, "qa_type")]
    assert "at this position" in body["problems"][0]["message"]
    assert not Submission.objects.exists()


def test_bad_json_outside_any_row_is_a_file_level_problem(benchmark):
    response = submit(token_client(UserFactory()), benchmark, b"{oops}")

    assert response.status_code == 400
    assert response.json()["problems"] == [
        {
            "row": None,
            "field": "",
            "message": "not valid JSON: Expecting property name enclosed in double quotes at "
            "byte 2",
        }
    ]


def test_a_cut_off_file_names_the_row_it_stops_in_0_based(benchmark):
    response = submit(token_client(UserFactory()), benchmark, b'[{"id": "x", "qa_type": "t')

    assert response.status_code == 400
    assert response.json()["problems"] == [
        {
            "row": 0,
            "field": "",
            "message": "the file ends early, at byte 26, inside the first row: it looks cut "
            "off (an interrupted upload or copy); upload the whole file",
        }
    ]


def test_missing_fields_are_listed_per_field(benchmark, perfect_predictions):
    client = token_client(UserFactory())
    data = {"predictions": SimpleUploadedFile("p.json", perfect_predictions)}

    response = client.post(reverse("api:submit", args=[benchmark.slug]), data, format="multipart")

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert set(body["errors"]) == {"model_name", "institution", "contact_email", "model_url"}


def test_a_challenge_entry_needs_team_and_authors(benchmark, perfect_predictions):
    response = submit(
        token_client(UserFactory()), benchmark, perfect_predictions, is_challenge_entry=True
    )

    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"team_name", "authors"}


def test_the_daily_quota_applies(benchmark, perfect_predictions):
    benchmark.daily_submission_limit = 1
    benchmark.save()
    client = token_client(UserFactory())
    assert submit(client, benchmark, perfect_predictions).status_code == 201

    response = submit(client, benchmark, perfect_predictions, model_name="Second")

    assert response.status_code == 429
    assert response.json()["code"] == "quota_exceeded"
    assert Submission.objects.count() == 1


def test_a_taken_model_name_is_refused(benchmark, perfect_predictions):
    assert submit(token_client(UserFactory()), benchmark, perfect_predictions).status_code == 201

    response = submit(token_client(UserFactory()), benchmark, perfect_predictions)

    assert response.status_code == 400
    # A field error since names are checked by the serializer too (as by the web form).
    assert response.json()["errors"] == {
        "model_name": [
            f"A published entry named 'ScriptModel' already exists on {benchmark.name}; "
            "choose another model name."
        ]
    }


def test_without_a_valid_token_nothing_is_accepted(benchmark, perfect_predictions):
    anonymous = submit(APIClient(), benchmark, perfect_predictions)
    user = UserFactory()
    token, raw = create_api_token(user, name="old")
    revoke_api_token(token, actor=user)
    revoked = APIClient()
    revoked.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    assert submit(revoked, benchmark, perfect_predictions).status_code == 401
    assert not Submission.objects.exists()


def test_status_and_results_are_the_owners_alone(benchmark, perfect_predictions):
    owner = UserFactory()
    client = token_client(owner)
    submission_id = submit(client, benchmark, perfect_predictions).json()["id"]
    score_evaluation(Submission.objects.get().evaluations.get())
    url = reverse("api:submission-detail", args=[submission_id])

    body = client.get(url).json()

    assert body["evaluation"]["status"] == EvaluationStatus.SCORED
    assert body["evaluation"]["metrics"]["TAG_mIoU@0.3"] == 1.0
    assert "VS_llm" in body["evaluation"]["metrics"]
    assert body["evaluation"]["parsed"]["tal"] == {"total": 1, "parsed": 1}
    assert body["judge"]["state"] == "not_applicable"  # no judged metrics here
    assert token_client(UserFactory()).get(url).status_code == 404
    assert token_client(UserFactory(is_staff=True)).get(url).status_code == 404
    assert token_client(maintainer_user()).get(url).status_code == 200


def test_the_submitter_reads_the_verification_state_and_reason(benchmark, perfect_predictions):
    owner = UserFactory()
    client = token_client(owner)
    submission_id = submit(client, benchmark, perfect_predictions).json()["id"]
    url = reverse("api:submission-detail", args=[submission_id])
    assert client.get(url).json()["verification"] == {
        "status": "community",
        "label": "Community",
        "explanation": "On the Community board, not verified. The maintainers contact top "
        "performers to verify their results.",
        "reason": "",
        "changed_at": None,
    }

    submission = Submission.objects.get()
    set_verification_status(submission, VerificationStatus.NOMINATED, actor=None)
    set_verification_status(
        submission, VerificationStatus.REJECTED, actor=None, reason="No model access."
    )
    verification = client.get(url).json()["verification"]

    assert (verification["status"], verification["label"], verification["reason"]) == (
        "rejected",
        "Rejected",
        "No model access.",
    )
    assert verification["changed_at"] is not None


def test_the_list_holds_only_ones_own_submissions(benchmark, perfect_predictions):
    mine = token_client(UserFactory())
    submit(mine, benchmark, perfect_predictions, model_name="Mine")
    submit(token_client(UserFactory()), benchmark, perfect_predictions, model_name="Theirs")

    rows = mine.get(reverse("api:submission-list")).json()

    assert [row["model_name"] for row in rows] == ["Mine"]
    assert rows[0]["status"] == EvaluationStatus.QUEUED


def test_the_judge_step_says_why_it_cannot_start(benchmark, perfect_predictions):
    owner = UserFactory()
    client = token_client(owner)
    submission_id = submit(client, benchmark, perfect_predictions).json()["id"]
    score_evaluation(Submission.objects.get().evaluations.get())
    url = reverse("api:judge-start", args=[submission_id])

    refused = client.post(url)  # this benchmark has no judged metrics
    someone_else = token_client(UserFactory()).post(url)

    assert refused.status_code == 503
    assert refused.json()["code"] == "judge_unavailable"
    assert someone_else.status_code == 404


def test_the_judge_step_is_queued_on_medvidbench(medvidbench_upload):
    client, submission_id = medvidbench_upload

    response = client.post(reverse("api:judge-start", args=[submission_id]))

    assert response.status_code == 202
    assert response.json()["evaluation"]["status"] == EvaluationStatus.JUDGING
    assert response.json()["judge"]["state"] == "running"


def test_a_queued_run_waits_for_the_judge_on_medvidbench(medvidbench_queued):
    # Issue 32, point 10: the run will be judged once scored, so not "not_applicable".
    client, submission_id = medvidbench_queued

    body = client.get(reverse("api:submission-detail", args=[submission_id])).json()

    assert body["evaluation"]["status"] == EvaluationStatus.QUEUED
    assert body["judge"] == {
        "state": "waiting",
        "message": "The LLM judge can start once the run is scored.",
        "job_status": None,
        "items_total": 0,
        "items_done": 0,
        "items_failed": 0,
        "calls": 0,
        "tokens": 0,
        "estimated_cost_usd": None,
    }


def test_a_queued_run_without_a_judge_step_is_not_applicable(benchmark, perfect_predictions):
    client = token_client(UserFactory())
    submission_id = submit(client, benchmark, perfect_predictions).json()["id"]

    body = client.get(reverse("api:submission-detail", args=[submission_id])).json()

    assert body["evaluation"]["status"] == EvaluationStatus.QUEUED
    assert (body["judge"]["state"], body["judge"]["message"]) == ("not_applicable", "")


@pytest.fixture
def medvidbench_upload(medvidbench_queued):
    client, submission_id = medvidbench_queued
    score_evaluation(Submission.objects.get().evaluations.get())
    return client, submission_id


@pytest.fixture
def medvidbench_queued(private_dir, records, tmp_path):
    """A MedVidBench entry uploaded by API, its run queued (not scored yet)."""
    from benchmark.services import ensure_plugin_benchmark, import_testset
    from tests.benchmark.factories import write_ground_truth

    benchmark = ensure_plugin_benchmark("medvidbench")
    benchmark.judge_auto_start = False
    benchmark.save()
    import_testset(benchmark, write_ground_truth(tmp_path / "gt.json", records))
    configure_endpoint(
        benchmark, name="local", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=""
    )
    from benchmark.selectors import active_testset, load_scoring_testset

    parsed = load_scoring_testset(active_testset(benchmark))
    rows = [
        {"id": s.id, "qa_type": s.qa_type, "prediction": r["conversations"][-1]["value"]}
        for s, r in zip(parsed.samples, records, strict=True)
    ]
    client = token_client(UserFactory())
    submission_id = submit(client, benchmark, json.dumps(rows).encode()).json()["id"]
    return client, submission_id
