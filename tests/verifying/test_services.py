"""The re-run end to end against the stand-in model on loopback: the message sent, retries,
missing frames, resume after a crash, the discrepancy report and verifying from it."""

import json

import pytest
from django.urls import reverse

from core import private_files
from core.exceptions import DomainError, InvalidTransition
from judging.services import configure_endpoint
from judging.standin import StandinJudge
from plugins.medvidbench import rerun as frames
from submissions.enums import BoardKind, VerificationStatus
from submissions.models import BoardEntry
from submissions.services import recompute_board
from tests.submissions.factories import scored_entry
from verifying import services
from verifying.enums import ItemState, RerunStatus
from verifying.models import RerunJob
from verifying.standin import DEFAULT_ANSWER

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

AUTOMATIC = ["CVS_acc", "NAP_acc", "SA_acc", "STG_mIoU", "TAG_mIoU@0.3", "TAG_mIoU@0.5", "DVC_F1"]
JUDGED = ["DVC_llm", "VS_llm", "RC_llm"]


def start(submission, maintainer, capture):
    with capture(execute=True):
        return services.start_rerun(submission, actor=maintainer, enqueue=False)


def run(job, capture, **options):
    with capture(execute=True):
        services.run_job(job.pk, **options)
    job.refresh_from_db()
    return job


def test_community_entry_to_the_official_board_through_a_rerun(
    access_granted, endpoint, model, maintainer, client, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    benchmark = access_granted.benchmark
    ahead = scored_entry(benchmark, "Ahead", dict.fromkeys(AUTOMATIC, 1.0))
    scored_entry(benchmark, "Behind", dict.fromkeys(AUTOMATIC, 0.0))
    scored_entry(
        benchmark,
        "Published",
        dict.fromkeys(AUTOMATIC, 0.5),
        verification_status=VerificationStatus.VERIFIED,
    )
    recompute_board(benchmark)
    before = BoardEntry.objects.get(submission=access_granted)
    assert before.board == BoardKind.COMMUNITY

    job = start(access_granted, maintainer, capture)
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFYING

    job = run(job, capture)

    assert job.state == RerunStatus.DONE
    assert (job.items_total, job.items_done, job.items_failed) == (5, 5, 0)
    report = job.report
    assert [row["metric"] for row in report["rows"]] == list(
        benchmark.metrics.values_list("key", flat=True)
    )
    rows = {row["metric"]: row for row in report["rows"]}
    # The small test set has no skill-assessment, dense-captioning or scored next-action
    # sample: those metrics are null on both sides.
    compared = ["CVS_acc", "STG_mIoU", "TAG_mIoU@0.3", "TAG_mIoU@0.5"]
    for key in AUTOMATIC:
        status = "within" if key in compared else "pending"
        assert (rows[key]["difference"] == 0.0, rows[key]["status"]) == (key in compared, status)
    for key in JUDGED:
        assert (rows[key]["rerun"], rows[key]["status"]) == (None, "pending")
    assert report["all_within"] is True
    assert "No LLM judge endpoint" in report["judge"]
    written = json.loads(private_files.read(job.predictions_file))
    assert written == json.loads(private_files.read(access_granted.predictions_file))
    assert DEFAULT_ANSWER not in [received.text for received in model.received]

    with capture(execute=True):
        services.verify_from_report(job, actor=maintainer)

    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFIED
    row = BoardEntry.objects.get(submission=access_granted)
    assert row.board == BoardKind.OFFICIAL
    url = reverse("api:rankings", args=[benchmark.slug])
    everyone = client.get(url, {"board": "all"}).json()["results"]
    official = client.get(url, {"board": "official"}).json()["results"]
    assert {r["model"]: r["rank"] for r in everyone}["SurgVLM"] == row.rank
    assert {r["model"]: r["rank"] for r in official}["SurgVLM"] == row.rank
    assert row.rank == before.rank  # global scope: verifying moves the row, not its rank
    assert BoardEntry.objects.get(submission=ahead).rank < row.rank


def test_the_model_receives_every_sampled_frame_then_the_question(
    access_granted, endpoint, model, maintainer, frames_dir, django_capture_on_commit_callbacks
):
    job = run(
        start(access_granted, maintainer, django_capture_on_commit_callbacks),
        django_capture_on_commit_callbacks,
    )

    assert job.state == RerunStatus.DONE
    received = model.received
    assert len(received) == 5
    assert {r.model for r in received} == {"surgvlm-7b"}
    assert {r.text for r in received} == {"What happens in the video?"}
    parsed = services.load_scoring_testset(job.test_set)
    expected = sorted(tuple(frames.frame_urls(sample, frames_dir, 8)) for sample in parsed.samples)
    assert sorted(r.image_urls for r in received) == expected
    assert all(len(r.image_urls) == 8 for r in received)
    assert all(url.startswith("data:image/png;base64,") for r in received for url in r.image_urls)


def test_500s_are_retried(
    access_granted, endpoint, model, maintainer, django_capture_on_commit_callbacks
):
    model.fail_first = 2
    job = run(
        start(access_granted, maintainer, django_capture_on_commit_callbacks),
        django_capture_on_commit_callbacks,
    )

    assert job.state == RerunStatus.DONE
    assert job.calls == 15
    assert set(model.key_calls.values()) == {3}
    assert job.report["all_within"] is True


def test_500s_beyond_the_attempts_budget_are_an_outage_not_failed_items(
    access_granted, endpoint, model, maintainer, django_capture_on_commit_callbacks
):
    # The model's 500s cost no attempt (inference.client.ask_until_usable, shared with the
    # judge): the endpoint allows 3 attempts, each question gets 4 500s and is then answered.
    model.fail_first = 4
    job = run(
        start(access_granted, maintainer, django_capture_on_commit_callbacks),
        django_capture_on_commit_callbacks,
    )

    assert job.state == RerunStatus.DONE
    assert job.items_failed == 0
    assert set(job.items.values_list("state", flat=True)) == {ItemState.DONE}
    assert job.calls == 5 * 5
    assert job.report["failed_items"] == 0


def test_missing_frames_fail_the_job_before_anything_is_sent(
    access_granted, endpoint, model, maintainer, frames_dir, django_capture_on_commit_callbacks
):
    (frames_dir / "AVOS" / "clip000" / "000000.jpg").unlink()
    (frames_dir / "CoPESD" / "clip002" / "000011.jpg").unlink()

    job = run(
        start(access_granted, maintainer, django_capture_on_commit_callbacks),
        django_capture_on_commit_callbacks,
    )

    assert job.state == RerunStatus.FAILED
    assert job.message.startswith("2 frame files are missing")
    assert "AVOS/clip000/000000.jpg, CoPESD/clip002/000011.jpg" in job.message
    assert model.received == []
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.ACCESS_GRANTED


def test_a_time_slice_hands_the_job_back_and_the_next_run_continues(
    access_granted, endpoint, model, maintainer, django_capture_on_commit_callbacks
):
    endpoint.concurrency = 1
    endpoint.save()
    model.latency = 0.2
    job = start(access_granted, maintainer, django_capture_on_commit_callbacks)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.run_job(job.pk, time_budget=0.3)

    job.refresh_from_db()
    assert job.state == RerunStatus.QUEUED
    assert len(callbacks) == 1
    assert 0 < job.items.exclude(state=ItemState.PENDING).count() < 5
    model.latency = 0.0

    job = run(job, django_capture_on_commit_callbacks)

    assert job.state == RerunStatus.DONE
    assert len(model.received) == 5  # nothing asked twice
    assert job.runs == 2


class WorkerDied(BaseException):
    """Not an Exception: like a killed process, nothing in the job catches it."""


def test_a_crashed_job_resumes_and_repeats_at_most_concurrency_questions(
    access_granted, endpoint, model, maintainer, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_RERUN_STALE_SECONDS = 0
    job = start(access_granted, maintainer, django_capture_on_commit_callbacks)
    answered = []

    def die_after_first_batch(progress):
        answered.append(progress.finished)
        if progress.finished:
            raise WorkerDied

    with pytest.raises(WorkerDied):
        services.run_job(job.pk, on_progress=die_after_first_batch)
    job.refresh_from_db()
    assert job.state == RerunStatus.RUNNING  # the dead worker's job
    assert 0 < job.items.exclude(state=ItemState.PENDING).count() < 5

    with django_capture_on_commit_callbacks(execute=False):
        assert services.reap_stale_reruns() == 1
    job = run(job, django_capture_on_commit_callbacks)

    assert job.state == RerunStatus.DONE
    assert len(model.received) <= 5 + endpoint.concurrency
    assert job.report["all_within"] is True


def test_a_rerun_needs_access_granted(entry, maintainer):
    endpoint = services.register_endpoint(
        entry, actor=maintainer, base_url="http://127.0.0.1:9/v1", model="m"
    )
    with pytest.raises(InvalidTransition, match="community"):
        services.start_rerun(entry, endpoint, actor=maintainer, enqueue=False)
    assert RerunJob.objects.count() == 0


def test_verify_is_refused_when_the_report_is_not_within_tolerance(
    access_granted, endpoint, model, maintainer, django_capture_on_commit_callbacks
):
    model.table = {}  # every answer is the default one
    job = run(
        start(access_granted, maintainer, django_capture_on_commit_callbacks),
        django_capture_on_commit_callbacks,
    )
    assert job.state == RerunStatus.DONE
    assert job.report["all_within"] is False

    with pytest.raises(DomainError, match="beyond the tolerance"):
        services.verify_from_report(job, actor=maintainer)
    with pytest.raises(DomainError, match="Say in the note why"):
        services.verify_from_report(job, actor=maintainer, force=True)
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFYING

    with django_capture_on_commit_callbacks(execute=True):
        services.verify_from_report(
            job, actor=maintainer, force=True, note="the authors' server changed its sampling"
        )
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFIED


def test_verify_is_refused_until_the_job_is_done(
    access_granted, endpoint, maintainer, django_capture_on_commit_callbacks
):
    job = start(access_granted, maintainer, django_capture_on_commit_callbacks)
    with pytest.raises(DomainError, match="queued"):
        services.verify_from_report(job, actor=maintainer)


def test_cancelling_hands_the_entry_back(
    access_granted, endpoint, maintainer, django_capture_on_commit_callbacks
):
    job = start(access_granted, maintainer, django_capture_on_commit_callbacks)
    services.cancel_rerun(job, actor=maintainer)
    job.refresh_from_db()
    access_granted.refresh_from_db()
    assert job.state == RerunStatus.CANCELLED
    assert access_granted.verification_status == VerificationStatus.ACCESS_GRANTED


def test_the_reruns_captions_are_judged_with_the_benchmarks_judge_endpoint(
    access_granted, endpoint, maintainer, django_capture_on_commit_callbacks
):
    with StandinJudge() as judge:
        configure_endpoint(
            access_granted.benchmark,
            name="stand-in",
            base_url=judge.base_url,
            model="standin-judge",
            api_key_env="",
            concurrency=2,
            max_attempts=3,
            timeout_seconds=5.0,
        )
        job = run(
            start(access_granted, maintainer, django_capture_on_commit_callbacks),
            django_capture_on_commit_callbacks,
        )
        assert judge.calls == 1  # the one video summary

    rows = {row["metric"]: row for row in job.report["rows"]}
    assert rows["VS_llm"]["rerun"] is not None
    assert rows["VS_llm"]["status"] == "pending"  # the self-reported side was never judged
    assert job.report["judge"].startswith("Judged by standin-judge: 1 prompts sent")
    assert job.metrics["VS_llm"] == rows["VS_llm"]["rerun"]
