"""Fixtures for the re-run: MedVidBench with a small test set whose records carry frame paths,
the synthetic frames folder the demo generator writes, a published and scored community entry,
and a stand-in model whose table answers exactly that entry's predictions."""

import json

import pytest

from benchmark.selectors import active_testset, load_scoring_testset
from core import private_files
from plugins.medvidbench.demo_testset.frames import write_frames
from plugins.medvidbench.rerun import frame_urls
from submissions.enums import VerificationStatus
from submissions.services import (
    SubmissionDetails,
    create_submission,
    score_evaluation,
    set_verification_status,
)
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import small_ground_truth
from tests.submissions.conftest import *  # noqa: F403  (private_dir, medvidbench, ...)
from verifying.services import register_endpoint
from verifying.standin import StandinModel, request_key

FRAMES_PER_CLIP = 12  # more than rerun_max_frames (8): the sampler has to pick


def with_frames(records):
    """Each record gets its own clip's frame paths (as the demo test set has them)."""
    for number, record in enumerate(records):
        dataset = record["data_source"]
        record["video"] = [
            f"{dataset}/clip{number:03d}/{frame:06d}.jpg" for frame in range(FRAMES_PER_CLIP)
        ]
    return records


# A few wrong answers, so the metrics are not all 1.0; next_action stays an exact label (no
# sentence encoder needed).
PREDICTIONS = [
    "1.0-4.0 seconds.",
    "1.0 seconds: [10, 20, 30, 40]",
    "tying",
    "Two structures: 2, Cystic plate: 0, Hepatocystic triangle: 0",
    "The surgeon dissects the duct.",
]


@pytest.fixture
def records():
    return with_frames(small_ground_truth())


@pytest.fixture
def frames_dir(private_dir, records):
    """The frames in the local private store's frames/ (docs/storage.md)."""
    directory = private_dir / "frames"
    write_frames(directory, records, max_frames=8)
    return directory


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


@pytest.fixture
def maintainer():
    return UserFactory(is_staff=True, is_superuser=True)


@pytest.fixture
def entry(medvidbench, predictions_for, frames_dir, django_capture_on_commit_callbacks):
    """A published community entry, scored (the judge stays pending: no judge endpoint)."""
    with django_capture_on_commit_callbacks(execute=False):
        submission = create_submission(
            medvidbench,
            owner=UserFactory(),
            details=SubmissionDetails(model_name="SurgVLM"),
            predictions=predictions_for(PREDICTIONS),
        )
    with django_capture_on_commit_callbacks(execute=True):
        score_evaluation(submission.evaluations.get())
    submission.refresh_from_db()
    return submission


@pytest.fixture
def access_granted(entry, maintainer, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        for status in (
            VerificationStatus.NOMINATED,
            VerificationStatus.CONTACTED,
            VerificationStatus.ACCESS_GRANTED,
        ):
            set_verification_status(entry, status, actor=maintainer)
    entry.refresh_from_db()
    return entry


def answer_table(submission, root, max_frames=8):
    """request key -> the entry's own prediction, for every test question with its frames."""
    parsed = load_scoring_testset(active_testset(submission.benchmark))
    rows = json.loads(private_files.read(submission.predictions_file))
    return {
        request_key(sample.question, frame_urls(sample, root, max_frames)): row["prediction"]
        for sample, row in zip(parsed.samples, rows, strict=True)
    }


@pytest.fixture
def model(access_granted, frames_dir):
    with StandinModel(answer_table(access_granted, frames_dir)) as server:
        yield server


@pytest.fixture
def endpoint(access_granted, model, maintainer):
    return register_endpoint(
        access_granted,
        actor=maintainer,
        base_url=model.base_url,
        model="surgvlm-7b",
        concurrency=2,
        max_attempts=3,
        timeout_seconds=5.0,
    )
