"""The re-run's part of the demo: `load_demo` writes the frames and registers the stand-in
model for the demo entries (once), and the stand-in plays back a predictions file so that a
re-run reproduces it."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmark.plugins import get_plugin, plugin_for
from benchmark.selectors import active_testset, load_scoring_testset
from core import private_files
from core.models import AuditEvent
from plugins.medvidbench import rerun as frames
from plugins.medvidbench.rerun import FRAMES_STAMP
from plugins.medvidbench.scoring import load_ground_truth
from submissions.enums import VerificationStatus
from tests.submissions.test_demo import demo_dir  # noqa: F401  (a fixture)
from verifying import services
from verifying.demo import answer_tables
from verifying.enums import RerunStatus
from verifying.models import ModelEndpoint
from verifying.standin import StandinModel

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

MODEL_URL = "http://127.0.0.1:8766/v1"


def endpoints(slug="medvidbench"):
    """The model endpoints of a benchmark's entries (MedSG-Bench's demo entries get theirs
    too: tests/verifying/test_medsg_rerun.py)."""
    return sorted(
        ModelEndpoint.objects.filter(submission__benchmark__slug=slug).values_list(
            "submission__model_name", "base_url", "model", "is_active"
        )
    )


def test_load_demo_writes_the_frames_and_registers_the_standin_model_once(
    demo_dir,  # noqa: F811
    private_dir,
    settings,
):
    call_command("load_demo", demo_dir=demo_dir, standin_model_url=MODEL_URL, verbosity=0)

    root = Path(settings.PODIUM_PRIVATE_DIR) / "frames"
    test_set = load_ground_truth(demo_dir / "ground_truth.json")
    assert frames.rerun.missing_media(test_set, root, 8) == []
    assert (root / FRAMES_STAMP).read_text().endswith(" max_frames=8\n")
    # The demo entries meant for the boards, each with the stand-in model of its file.
    assert endpoints() == [
        ("ChattyVLM (synthetic)", MODEL_URL, "standin-prose", True),
        ("SurgiDemo-7B (synthetic)", MODEL_URL, "standin-noisy", True),
    ]
    assert all(endpoint.created_by is None for endpoint in ModelEndpoint.objects.all())

    audit_rows = AuditEvent.objects.count()
    first_frame = root / test_set.samples[0].frames[0]
    written_at = first_frame.stat().st_mtime_ns
    call_command("load_demo", demo_dir=demo_dir, standin_model_url=MODEL_URL, verbosity=0)
    assert AuditEvent.objects.count() == audit_rows
    assert first_frame.stat().st_mtime_ns == written_at  # the stamp: not written again

    # Another address (make run STANDIN_MODEL_PORT=...) replaces the active endpoints.
    other = "http://127.0.0.1:18766/v1"
    call_command("load_demo", demo_dir=demo_dir, standin_model_url=other, verbosity=0)
    assert endpoints() == [
        ("ChattyVLM (synthetic)", other, "standin-prose", True),
        ("ChattyVLM (synthetic)", MODEL_URL, "standin-prose", False),
        ("SurgiDemo-7B (synthetic)", other, "standin-noisy", True),
        ("SurgiDemo-7B (synthetic)", MODEL_URL, "standin-noisy", False),
    ]


def test_load_demo_without_a_standin_url_registers_nothing(
    demo_dir,  # noqa: F811
    private_dir,
):
    call_command("load_demo", demo_dir=demo_dir, verbosity=0)
    assert endpoints() == []


def playback(submission, root):
    """The stand-in's tables for one model that plays back the entry's own file."""
    test_set = load_scoring_testset(active_testset(submission.benchmark))
    return answer_tables(
        plugin_for(submission.benchmark),
        test_set,
        {"standin-entry": private_files.read(submission.predictions_file)},
        root,
        8,
    )


def test_a_rerun_against_the_playback_reproduces_the_entry_and_verifies_it(
    access_granted, maintainer, frames_dir, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    with StandinModel(models=playback(access_granted, frames_dir)) as model:
        endpoint = services.register_endpoint(
            access_granted, actor=maintainer, base_url=model.base_url, model="standin-entry"
        )
        with capture(execute=True):
            job = services.start_rerun(access_granted, endpoint, actor=maintainer, enqueue=False)
        with capture(execute=True):
            services.run_job(job.pk)
        job.refresh_from_db()

        assert job.state == RerunStatus.DONE
        assert job.items_done == 5
        own = access_granted.evaluations.get().metrics
        assert {row["metric"]: row["rerun"] for row in job.report["rows"]} == own
        assert job.report["all_within"] is True
        with capture(execute=True):
            services.verify_from_report(job, actor=maintainer)
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFIED


def test_a_model_the_standin_does_not_serve_fails_the_rerun_naming_it(
    access_granted, maintainer, frames_dir, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    with StandinModel(models=playback(access_granted, frames_dir)) as model:
        endpoint = services.register_endpoint(
            access_granted, actor=maintainer, base_url=model.base_url, model="standin-typo"
        )
        with capture(execute=True):
            job = services.start_rerun(access_granted, endpoint, actor=maintainer, enqueue=False)
        with capture(execute=True):
            services.run_job(job.pk)
    job.refresh_from_db()

    assert job.state == RerunStatus.FAILED
    assert "HTTP 404" in job.message
    assert "'standin-typo' does not exist here; this stand-in serves standin-entry" in job.message


def test_the_playback_answers_a_repeated_request_the_same_way(frames_dir, records):
    test_set = load_ground_truth([*records, dict(records[0])])
    rows = [
        {"id": sample.id, "qa_type": sample.qa_type, "prediction": f"answer {sample.index}"}
        for sample in test_set.samples
    ]
    plugin = get_plugin("medvidbench")
    tables = answer_tables(plugin, test_set, {"m": json.dumps(rows).encode()}, frames_dir, 8)
    # Six questions, the last asked exactly as the first: five requests, the first answer.
    assert sorted(tables["m"].values()) == [f"answer {n}" for n in range(5)]


def test_the_standin_model_command_needs_the_demo_files(tmp_path, settings):
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    with pytest.raises(CommandError, match=r"run `manage\.py load_demo` first"):
        call_command("standin_model", demo_dir=tmp_path / "nothing", stdout=io.StringIO())
