"""An entry stored before today's checks (a NUL, an unpaired surrogate, a prediction over the
length limit): "Start the judge" refuses it with the row and field, on the site and through the
API, and changes nothing; it never answers 500 (a NUL cannot be stored in a judge item)."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from judging.models import JudgeItem, JudgeJob
from judging.services import start_judge_if_automatic
from submissions.enums import EvaluationStatus
from tests.judging.conftest import CAPTION_PREDICTIONS

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SUMMARY_ROW = 4  # a video summary: judged as one prompt (tests/judging/conftest.py)


def refusal(problem: str) -> str:
    return (
        "The judge cannot run on this entry: its predictions file does not pass the checks a "
        f"new upload gets ({problem}). Submit a corrected file as a new entry."
    )


def rewrite_stored_file(run, prediction: str) -> None:
    """The file as an older, laxer check accepted it: the summary holds `prediction`."""
    path = Path(settings.PODIUM_PRIVATE_DIR) / run.submission.predictions_file
    rows = json.loads(path.read_bytes())
    rows[SUMMARY_ROW]["prediction"] = prediction
    path.write_text(json.dumps(rows), encoding="ascii")  # \\u escapes, as a client writes them


CASES = [
    pytest.param(
        "The surgeon\x00 dissects.",
        f"row {SUMMARY_ROW}, field 'prediction': holds a NUL character (U+0000) after 11 "
        "characters; text may hold no NUL, no control characters other than tab and line "
        "breaks, and no unpaired surrogates",
        id="nul",
    ),
    pytest.param(
        "The surgeon \ud83d dissects.",
        f"row {SUMMARY_ROW}, field 'prediction': holds an unpaired surrogate (U+D83D, half of "
        "a UTF-16 pair, not a character) after 12 characters; text may hold no NUL, no control "
        "characters other than tab and line breaks, and no unpaired surrogates",
        id="lone-surrogate",
    ),
    pytest.param(
        "x" * 20_001,
        f"row {SUMMARY_ROW}, field 'prediction': is 20,001 characters long; this benchmark "
        "accepts at most 20,000 characters per prediction",
        id="too-long",
    ),
]


def assert_nothing_changed(run) -> None:
    run.refresh_from_db()
    assert run.state == EvaluationStatus.SCORED
    assert (JudgeJob.objects.count(), JudgeItem.objects.count()) == (0, 0)


@pytest.mark.parametrize(("prediction", "problem"), CASES)
def test_the_site_refuses_with_the_row_and_changes_nothing(
    client, submitter, scored_run, prediction, problem
):
    assert CAPTION_PREDICTIONS[SUMMARY_ROW]  # a judged, non-empty summary
    rewrite_stored_file(scored_run, prediction)
    client.force_login(submitter)

    response = client.post(f"/submissions/{scored_run.submission.pk}/judge/start/", follow=True)

    assert response.status_code == 200
    assert f'<li class="error">{refusal(problem)}</li>' in response.content.decode().replace(
        "&#x27;", "'"
    )
    assert_nothing_changed(scored_run)


@pytest.mark.parametrize(("prediction", "problem"), CASES)
def test_the_api_refuses_with_the_row_and_changes_nothing(
    submitter, scored_run, prediction, problem
):
    rewrite_stored_file(scored_run, prediction)
    _, token = create_api_token(submitter, name="script")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    response = client.post(reverse("api:judge-start", args=[scored_run.submission.pk]))

    assert response.status_code == 400
    assert response.json() == {"detail": refusal(problem), "code": "refused"}
    assert_nothing_changed(scored_run)


def test_the_automatic_start_logs_the_refusal_as_a_warning_without_a_traceback(scored_run, caplog):

    benchmark = scored_run.submission.benchmark
    benchmark.judge_auto_start = True
    benchmark.save(update_fields=["judge_auto_start"])
    rewrite_stored_file(scored_run, "The surgeon\x00 dissects.")

    with caplog.at_level("WARNING", logger="judging"):
        start_judge_if_automatic(scored_run.pk)

    (record,) = [record for record in caplog.records if record.name.startswith("judging")]
    assert record.levelname == "WARNING"
    assert record.exc_info is None
    assert "holds a NUL character (U+0000)" in record.getMessage()
    assert_nothing_changed(scored_run)
