"""Fixtures for the judge: the submissions fixtures (private folder, MedVidBench, the worker
cluster), a test set with caption tasks, the stand-in judge on loopback, and a scored run."""

import json

import pytest

from benchmark.selectors import active_testset, load_scoring_testset
from benchmark.services import ensure_plugin_benchmark, import_testset
from judging.services import configure_endpoint
from judging.standin import StandinJudge
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import write_ground_truth
from tests.benchmark.scoring.factories import gt_record
from tests.submissions.conftest import *  # noqa: F403  (private_dir, medvidbench, cluster, ...)

DVC = "dense_captioning_gpt"


def caption_ground_truth() -> list[dict]:
    """Dense captioning in two datasets (2 + 1 samples), two summaries, two region captions."""

    def segments(*triples):
        return [[{"start": s, "end": e, "caption": c} for s, e, c in triples]]

    return [
        gt_record("tal", "1.0-5.0 seconds.", [{"spans": [{"start": 1.0, "end": 5.0}]}]),
        gt_record(
            DVC,
            "0-10 seconds: dissection.\n10-20 seconds: clipping.",
            segments((0, 10, "Dissection of the triangle."), (10, 20, "Clipping the duct.")),
        ),
        gt_record(
            DVC,
            "0-30 seconds: suturing.",
            segments((0, 30, "Suturing the wound.")),
        ),
        gt_record(
            DVC,
            "0-8 seconds: irrigation.",
            segments((0, 8, "Irrigation of the field.")),
            dataset="CoPESD",
        ),
        gt_record("video_summary_gpt", "The surgeon dissects the cystic duct."),
        gt_record("video_summary_gemini", "A knot is tied.", dataset="CoPESD"),
        gt_record("region_caption_gpt", "A grasper holds the gallbladder."),
        gt_record("region_caption_gemini", "Scissors cut tissue.", dataset="CoPESD"),
    ]


CAPTION_PREDICTIONS = [
    "1.0-5.0 seconds.",
    "0.0-10.0 seconds: the surgeon dissects.\n10.0-20.0 seconds: a clip is applied.",
    "0.0-20.0 seconds: stitching the skin.",
    "",
    "The surgeon dissects tissue.",
    "",
    "A grasper.",
    "Scissors.",
]


@pytest.fixture
def records():
    return caption_ground_truth()


@pytest.fixture
def standin():
    with StandinJudge() as judge:
        yield judge


@pytest.fixture
def judged_benchmark(private_dir, records, tmp_path, standin):
    """MedVidBench with the caption test set and the stand-in as its active judge endpoint."""
    benchmark = ensure_plugin_benchmark("medvidbench")
    import_testset(benchmark, write_ground_truth(tmp_path / "gt.json", records))
    configure_endpoint(
        benchmark,
        name="stand-in",
        base_url=standin.base_url,
        model="standin-judge",
        api_key_env="",
        concurrency=4,
        max_attempts=5,
        timeout_seconds=5.0,
    )
    return benchmark


@pytest.fixture
def benchmark(judged_benchmark):
    # The submissions fixtures (cluster, predictions_for) use `benchmark`.
    return judged_benchmark


@pytest.fixture
def upload(judged_benchmark):
    """A function: prediction texts -> the bytes of a well-formed upload."""
    parsed = load_scoring_testset(active_testset(judged_benchmark))

    def build(texts=CAPTION_PREDICTIONS):
        rows = [
            {"id": sample.id, "qa_type": sample.qa_type, "prediction": text}
            for sample, text in zip(parsed.samples, texts, strict=True)
        ]
        return json.dumps(rows).encode()

    return build


@pytest.fixture
def submitter():
    return UserFactory()


@pytest.fixture
def scored_run(judged_benchmark, upload, submitter, django_capture_on_commit_callbacks):
    """A submission whose run is scored and waiting for the judge (auto-start switched off)."""
    judged_benchmark.judge_auto_start = False
    judged_benchmark.save(update_fields=["judge_auto_start"])
    with django_capture_on_commit_callbacks(execute=False):
        submission = create_submission(
            judged_benchmark,
            owner=submitter,
            details=SubmissionDetails(model_name="Captioner"),
            predictions=upload(),
        )
    with django_capture_on_commit_callbacks(execute=True):  # the board follows
        return score_evaluation(submission.evaluations.get())
