"""The verification evidence in public (issue 33, points 4 and 5): a verified upload's entry page
and entry API show the re-run the maintainers verified it on (when it finished, the test-set and
scorer versions, per metric the submitted and re-run values, the difference, the tolerance and
whether within; a forced verify's note), and never the endpoint's address beyond its host, its
key or the model's answers. The re-runs here are real, against the stand-in model on loopback."""

import html as html_text
import re

import pytest
from django.test import Client
from django.urls import reverse

from core import audit
from plugins.medvidbench.scoring import SCORER_VERSION
from submissions.enums import VerificationStatus
from submissions.public_evidence import rerun_evidence, set_rerun_evidence_reader
from submissions.services import set_verification_status
from verifying import services
from verifying.enums import RerunStatus
from verifying.selectors import public_rerun_evidence
from verifying.standin import DEFAULT_ANSWER

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

KEY = "sk-test-very-secret-key-123"
# The small test set compares these four; the others are missing on both sides (pending).
COMPARED = ["CVS_acc", "STG_mIoU", "TAG_mIoU@0.3", "TAG_mIoU@0.5"]
FORCED_NOTE = "the authors' server changed its frame sampling after the upload"


def text_of(response):
    html = response.content.decode()
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return html_text.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip())


def page_url(entry):
    return reverse("submissions:entry", args=[entry.benchmark.slug, entry.pk])


def api_url(entry):
    return reverse("api:entry", args=[entry.benchmark.slug, entry.pk])


@pytest.fixture
def keyed_endpoint(access_granted, model, django_capture_on_commit_callbacks):
    """The stand-in model registered by the entry's owner with a key, at a path of its own."""
    return services.register_endpoint(
        access_granted,
        actor=access_granted.owner,
        base_url=model.base_url,
        model="surgvlm-7b",
        api_key=KEY,
        concurrency=2,
        max_attempts=3,
        timeout_seconds=5.0,
    )


def rerun(entry, maintainer, capture):
    with capture(execute=True):
        job = services.start_rerun(entry, actor=maintainer, enqueue=False)
    with capture(execute=True):
        services.run_job(job.pk)
    job.refresh_from_db()
    assert job.state == RerunStatus.DONE
    return job


@pytest.fixture
def verified(access_granted, keyed_endpoint, maintainer, django_capture_on_commit_callbacks):
    """The entry verified from an honest re-run's report (every compared metric within)."""
    job = rerun(access_granted, maintainer, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        services.verify_from_report(job, actor=maintainer, note="internal: checked on a Tuesday")
    access_granted.refresh_from_db()
    return access_granted, job


def test_a_verified_uploads_api_has_the_reruns_evidence(verified):
    entry, job = verified
    own = entry.evaluations.get().metrics

    body = Client().get(api_url(entry)).json()

    evidence = body["verification"]["evidence"]
    assert set(evidence) == {
        "rerun_finished_at", "testset_version", "scorer_version", "forced", "note", "metrics",
    }  # fmt: skip
    assert evidence["rerun_finished_at"] == job.finished_at.isoformat().replace("+00:00", "Z")
    assert (evidence["testset_version"], evidence["scorer_version"]) == (1, SCORER_VERSION)
    assert (evidence["forced"], evidence["note"]) == (False, None)  # a plain verify's note stays
    assert list(evidence["metrics"]) == list(entry.benchmark.metrics.values_list("key", flat=True))
    for key, line in evidence["metrics"].items():
        if key in COMPARED:
            assert line == {
                "submitted": own[key],
                "rerun": own[key],
                "difference": 0.0,
                "tolerance": 0.01,
                "within": True,
            }, key
        else:
            assert (line["difference"], line["within"], line["tolerance"]) == (None, None, 0.01)
    assert body["verification"]["source"] is None
    assert (body["verification"]["status"], body["board"]) == ("verified", "official")


def test_a_verified_uploads_page_shows_the_reruns_evidence(verified):
    entry, job = verified

    text = text_of(Client().get(page_url(entry)))

    assert "Verification evidence" in text
    assert f"Re-run finished {job.finished_at:%Y-%m-%d %H:%M} UTC" in text
    assert f"Test set version 1 Scorer {SCORER_VERSION} Tolerance ±0.01 on each metric" in text
    own = entry.evaluations.get().metrics
    value = f"{own['CVS_acc']:.4f}"
    assert f"CVS_acc CVS assessment accuracy yes {value} {value} 0.0000 ±0.01" in text
    assert "every compared metric within the tolerance" in text
    assert "internal: checked on a Tuesday" not in text  # a plain verify's note stays private


def test_neither_the_page_nor_the_api_carries_the_key_the_endpoint_or_the_answers(verified, model):
    entry, job = verified
    answers = [answer for answer in job.items.values_list("answer", flat=True) if len(answer) > 8]
    address = model.base_url.split("//")[1].split("/")[0]  # 127.0.0.1:port
    secrets = [KEY, model.base_url, address, *answers]
    maintainer_client = Client()
    maintainer_client.force_login(job.requested_by)

    for client in (Client(), maintainer_client):
        for response in (client.get(page_url(entry)), client.get(api_url(entry))):
            body = response.content.decode()
            assert response.status_code == 200
            assert [secret for secret in secrets if secret in body] == []


def test_a_forced_verify_shows_its_note(
    access_granted, keyed_endpoint, model, maintainer, django_capture_on_commit_callbacks
):
    model.table = {}  # every answer is the default one: the report is outside the tolerance
    job = rerun(access_granted, maintainer, django_capture_on_commit_callbacks)
    assert job.report["all_within"] is False
    with django_capture_on_commit_callbacks(execute=True):
        services.verify_from_report(job, actor=maintainer, force=True, note=FORCED_NOTE)

    body = Client().get(api_url(access_granted)).json()
    text = text_of(Client().get(page_url(access_granted)))

    evidence = body["verification"]["evidence"]
    assert (evidence["forced"], evidence["note"]) == (True, FORCED_NOTE)
    outside = [key for key, line in evidence["metrics"].items() if line["within"] is False]
    assert outside == [row["metric"] for row in job.report["rows"] if row["within"] is False]
    assert outside
    assert FORCED_NOTE in text
    assert "verified the entry anyway" in text
    assert "no, outside" in text
    assert DEFAULT_ANSWER not in text


def test_an_unverified_upload_has_no_evidence_even_with_a_done_rerun(
    access_granted, keyed_endpoint, maintainer, django_capture_on_commit_callbacks
):
    rerun(access_granted, maintainer, django_capture_on_commit_callbacks)  # verifying, not verified

    body = Client().get(api_url(access_granted)).json()
    text = text_of(Client().get(page_url(access_granted)))

    assert body["verification"] | {"changed_at": None} == {
        "status": "verifying",
        "label": "Being verified",
        "verified_at": None,
        "changed_at": None,
        "evidence": None,
        "source": None,
    }
    assert "Verification evidence" not in text
    assert "Re-run finished" not in text


def test_a_withdrawn_entry_loses_its_evidence(verified, maintainer):
    entry, _ = verified
    set_verification_status(
        entry, VerificationStatus.WITHDRAWN, actor=maintainer, reason="the licence changed"
    )
    entry.refresh_from_db()

    assert Client().get(api_url(entry)).json()["verification"]["evidence"] is None
    assert "Verification evidence" not in text_of(Client().get(page_url(entry)))


def test_the_evidence_is_the_rerun_the_verify_named_from_its_audit_row(verified):
    entry, job = verified
    event = audit.events_for(entry).filter(action="submissions.verification.verified").get()
    assert event.data["evidence"]["rerun"] == job.pk

    found = public_rerun_evidence(entry)

    assert found is not None
    assert (found.rerun_finished_at, found.forced, found.note) == (job.finished_at, False, "")
    assert found.all_within is True


def test_without_the_verifying_app_the_page_has_no_evidence(verified):
    entry, _ = verified
    try:
        set_rerun_evidence_reader(None)
        assert rerun_evidence(entry) is None
        assert "Verification evidence" not in text_of(Client().get(page_url(entry)))
    finally:
        set_rerun_evidence_reader(public_rerun_evidence)
