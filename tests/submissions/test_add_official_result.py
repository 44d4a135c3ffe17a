"""`manage.py add_official_result`: a maintainers' own result goes on the Official board, with
its source in the audit trail."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from core.models import AuditEvent
from submissions.enums import SubmissionSource, VerificationStatus
from submissions.models import Submission

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def run(*args):
    out = StringIO()
    call_command("add_official_result", *args, stdout=out)
    return out.getvalue()


def test_a_result_is_added_verified_with_its_source(medvidbench):
    output = run(
        "--model",
        "GPT-4o",
        "--values",
        json.dumps({"CVS_acc": 0.6, "NAP_acc": None}),
        "--source",
        "MedGRPO paper, table 2",
        "--baseline",
        "--verified-at",
        "2026-05-15",
    )

    submission = Submission.objects.get(model_name="GPT-4o")
    assert "is on the Official board" in output
    assert submission.source == SubmissionSource.IMPORTED
    assert submission.is_baseline
    assert submission.verification_status == VerificationStatus.VERIFIED
    assert submission.verified_at.date().isoformat() == "2026-05-15"
    assert submission.evaluations.get().metrics["CVS_acc"] == 0.6
    notes = AuditEvent.objects.filter(action="submissions.verification.verified")
    assert "source: MedGRPO paper, table 2" in notes.get().data["note"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--values", "{"], "--values is not JSON"),
        (["--values", '{"CVS_acc": "high"}'], "metric: number"),
        (["--values", '{"BLEU": 0.1}'], "has no metric BLEU"),
        (["--values", "{}", "--verified-at", "15/05/2026"], "YYYY-MM-DD"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_added(medvidbench, args, message):
    defaults = {"--values": "{}", "--source": "a paper"}
    given = dict(zip(args[::2], args[1::2], strict=True))
    flat = [item for pair in {**defaults, **given}.items() for item in pair]

    with pytest.raises(CommandError, match=message):
        run("--model", "X", *flat)
    assert not Submission.objects.exists()
