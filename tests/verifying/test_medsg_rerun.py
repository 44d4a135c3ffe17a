"""MedSG-Bench's re-run end to end against the stand-in model on loopback (real HTTP, real
database): each item's images and question in one user message, the answers written as a
MedSG-Bench predictions file and scored in the box convention the entry declared, missing
images refused with their list; and the demo's MedSG-Bench entries re-run against the demo
stand-in reproduce their numbers."""

import json
from pathlib import Path

import numpy as np
import pytest

from benchmark import media
from benchmark.plugins import get_plugin
from benchmark.services import ensure_benchmark, import_testset
from core import private_files
from plugins.medsg.definition import MEDSG
from plugins.medsg.demo import png_bytes
from plugins.medsg.rerun import item_content
from submissions.demo import load_plugin_demo
from submissions.enums import VerificationStatus
from submissions.models import Submission
from submissions.services import (
    SubmissionDetails,
    create_submission,
    score_evaluation,
    set_verification_status,
)
from tests.accounts.factories import UserFactory
from verifying import services
from verifying.demo import demo_answer_tables
from verifying.enums import RerunStatus
from verifying.models import ModelEndpoint
from verifying.standin import StandinModel, request_key

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SIDE = 336
# Three items, one per task; the first two name their images with placeholders, the third
# does not (its images go first). The multi_view item has its own size, 200 x 100.
RECORDS = [
    {
        "task": "referring",
        "question": "Image-1: <image>\nImage-2: <image>\nLocate the bright lesion.",
        "images": ["images/referring_1.png", "images/referring_2.png"],
        "answer": [84, 84, 252, 252],
    },
    {
        "task": "patch",
        "question": "Image-1: <image>\nImage-2: <image>\nImage-3: <image>\nFind the patch.",
        "images": ["images/patch_1.png", "images/patch_2.png", "images/patch_3.png"],
        "answer": [0, 0, 168, 168],
    },
    {
        "task": "multi_view",
        "question": "Locate the structure in the last image.",
        "images": ["images/view_1.png", "images/view_2.png"],
        "answer": [20, 10, 120, 60],
        "size": [200, 100],
    },
]
# The entry's answers, on the 0-1000 scale it declares (norm1000):
# - referring: [250, 250, 750, 750] x 336/1000 = [84, 84, 252, 252], the reference: IoU 1;
# - patch: [0, 0, 250, 500] -> [0, 0, 84, 168] inside [0, 0, 168, 168]: 84*168 / 168*168 = 0.5;
# - multi_view: x by 200/1000, y by 100/1000 -> [20, 10, 70, 35] inside [20, 10, 120, 60]:
#   50*25 / 100*50 = 0.25.
# Read as pixels instead, the first box would be [250, 250, 750, 750] (IoU 4 / 278,220).
PREDICTIONS = ["[250, 250, 750, 750]", [0, 0, 250, 500], "<box>100 100 350 350</box>"]
ANSWERS = ["[250, 250, 750, 750]", "[0, 0, 250, 500]", "<box>100 100 350 350</box>"]
# Mean IoU over the three tasks present: (1 + 0.5 + 0.25) / 3; ACC@0.5: referring and patch
# (0.5 counts, inclusive), not multi_view: 2/3. One item per task: the item-weighted means
# are the same.
EXPECTED = {
    "IoU": 1.75 / 3,
    "ACC@0.5": 2 / 3,
    "IoU_items": 1.75 / 3,
    "ACC@0.5_items": 2 / 3,
    "IoU_referring": 1.0,
    "IoU_patch": 0.5,
    "IoU_multi_view": 0.25,
}


def image(number):
    """A distinct tiny grayscale PNG per image (the pixels say which one it is)."""
    return png_bytes(np.full((4, 4), 10 * number + 5, dtype=np.uint8))


@pytest.fixture
def medsg(private_dir, tmp_path):
    benchmark = ensure_benchmark(MEDSG)
    path = tmp_path / "upload" / "medsg.json"
    path.parent.mkdir()
    path.write_text(json.dumps(RECORDS))
    import_testset(benchmark, path)
    return benchmark


@pytest.fixture
def images_dir(medsg, settings):
    """The images where the re-run reads them: the private store's frames/<slug>/, at the test set's
    relative paths."""
    root = Path(settings.PODIUM_PRIVATE_DIR) / "frames" / medsg.slug
    number = 0
    for record in RECORDS:
        for relative in record["images"]:
            number += 1
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(image(number))
    return root


@pytest.fixture
def maintainer():
    return UserFactory(is_staff=True, is_superuser=True)


def grant_access(submission, maintainer, capture):
    with capture(execute=True):
        for status in (
            VerificationStatus.NOMINATED,
            VerificationStatus.CONTACTED,
            VerificationStatus.ACCESS_GRANTED,
        ):
            set_verification_status(submission, status, actor=maintainer)
    submission.refresh_from_db()
    return submission


@pytest.fixture
def entry(medsg, images_dir, maintainer, django_capture_on_commit_callbacks):
    """A published MedSG-Bench entry declaring norm1000, scored, its authors' access granted."""
    rows = [
        {"index": index, "task": record["task"], "prediction": prediction}
        for index, (record, prediction) in enumerate(zip(RECORDS, PREDICTIONS, strict=True))
    ]
    with django_capture_on_commit_callbacks(execute=False):
        submission = create_submission(
            medsg,
            owner=UserFactory(),
            details=SubmissionDetails(
                model_name="GroundVLM",
                options={"box_format": "norm1000", "zero_shot": "declared"},
            ),
            predictions=json.dumps(rows).encode(),
        )
    with django_capture_on_commit_callbacks(execute=True):
        score_evaluation(submission.evaluations.get())
    return grant_access(submission, maintainer, django_capture_on_commit_callbacks)


def urls(*numbers):
    return [media.data_url(image(number)) for number in numbers]


# What the model is sent for each item, as the stand-in reads it: the text parts joined by
# newlines, the images in order.
SENT = [
    ("Image-1: \n\nImage-2: \n\nLocate the bright lesion.", urls(1, 2)),
    ("Image-1: \n\nImage-2: \n\nImage-3: \n\nFind the patch.", urls(3, 4, 5)),
    ("Locate the structure in the last image.", urls(6, 7)),
]


@pytest.fixture
def model():
    table = {
        request_key(text, sent): answer for (text, sent), answer in zip(SENT, ANSWERS, strict=True)
    }
    with StandinModel(table) as server:
        yield server


@pytest.fixture
def endpoint(entry, model, maintainer):
    return services.register_endpoint(
        entry, actor=maintainer, base_url=model.base_url, model="groundvlm-7b", concurrency=2
    )


def rerun(submission, maintainer, capture):
    with capture(execute=True):
        job = services.start_rerun(submission, actor=maintainer, enqueue=False)
    with capture(execute=True):
        services.run_job(job.pk)
    job.refresh_from_db()
    return job


def test_each_item_sends_its_images_in_place_of_its_placeholders():
    item = get_plugin("medsg-bench").read_test_set(json.dumps(RECORDS).encode()).items
    assert item_content(item[0], ["data:1", "data:2"]) == [
        {"type": "text", "text": "Image-1: "},
        {"type": "image_url", "image_url": {"url": "data:1"}},
        {"type": "text", "text": "\nImage-2: "},
        {"type": "image_url", "image_url": {"url": "data:2"}},
        {"type": "text", "text": "\nLocate the bright lesion."},
    ]
    # No placeholders (or not one per image): every image, then the question as written.
    assert item_content(item[2], ["data:6", "data:7"]) == [
        {"type": "image_url", "image_url": {"url": "data:6"}},
        {"type": "image_url", "image_url": {"url": "data:7"}},
        {"type": "text", "text": "Locate the structure in the last image."},
    ]


def test_a_medsg_rerun_sends_images_and_question_and_scores_in_the_declared_convention(
    entry, endpoint, model, maintainer, django_capture_on_commit_callbacks
):
    job = rerun(entry, maintainer, django_capture_on_commit_callbacks)

    assert (job.state, job.message) == (
        RerunStatus.DONE,
        "Re-run complete: 3 answered, 0 failed; all within the tolerance of 0.01.",
    )
    received = sorted(model.received, key=lambda request: request.text)
    assert [(r.model, r.text, list(r.image_urls)) for r in received] == sorted(
        ("groundvlm-7b", text, sent) for text, sent in SENT
    )
    assert all(url.startswith("data:image/png;base64,") for r in received for url in r.image_urls)
    # The platform's own file, in MedSG-Bench's format, the answers' text as predictions.
    assert json.loads(private_files.read(job.predictions_file)) == [
        {"index": 0, "task": "referring", "prediction": ANSWERS[0]},
        {"index": 1, "task": "patch", "prediction": ANSWERS[1]},
        {"index": 2, "task": "multi_view", "prediction": ANSWERS[2]},
    ]
    assert job.result["box_format"] == "norm1000"
    for key, value in EXPECTED.items():
        assert job.metrics[key] == pytest.approx(value, abs=1e-12), key
    rows = {row["metric"]: row for row in job.report["rows"]}
    assert (rows["IoU"]["self_reported"], rows["IoU"]["difference"]) == (
        pytest.approx(1.75 / 3, abs=1e-12),
        0.0,
    )
    assert job.report["all_within"] is True
    assert job.report["judge"] == "MedSG-Bench has no judge step: every metric is scored."

    with django_capture_on_commit_callbacks(execute=True):
        services.verify_from_report(job, actor=maintainer)
    entry.refresh_from_db()
    assert entry.verification_status == VerificationStatus.VERIFIED


def test_missing_images_fail_the_rerun_with_their_list_before_anything_is_sent(
    entry, endpoint, model, maintainer, images_dir, django_capture_on_commit_callbacks
):
    (images_dir / "images" / "patch_2.png").unlink()
    (images_dir / "images" / "view_1.png").unlink()

    job = rerun(entry, maintainer, django_capture_on_commit_callbacks)

    assert job.state == RerunStatus.FAILED
    assert job.message == (
        f"2 image files are missing under the images folder ({images_dir}): "
        "images/patch_2.png, images/view_1.png. Nothing was sent to the model."
    )
    assert model.received == []
    entry.refresh_from_db()
    assert entry.verification_status == VerificationStatus.ACCESS_GRANTED


def test_the_medsg_demo_entries_rerun_against_the_demo_standin_reproduce_their_numbers(
    private_dir, tmp_path, settings, maintainer, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    plugin = get_plugin("medsg-bench")
    demo_dir = tmp_path / "demo" / "medsg-bench"
    url = "http://127.0.0.1:8766/v1"
    with capture(execute=True):
        benchmark = load_plugin_demo(
            plugin, demo_dir, user=UserFactory(), log=lambda message: None, standin_model_url=url
        ).benchmark

    # The images the test set names, copied where the re-run reads them.
    root = Path(settings.PODIUM_PRIVATE_DIR) / "frames" / benchmark.slug
    test_set = plugin.read_test_set((demo_dir / "medsg_testset.json").read_bytes())
    names = plugin.rerun.media_paths(test_set, 8)
    assert len(names) == len(list((demo_dir / "images").glob("*.png")))
    assert all((root / name).read_bytes() == (demo_dir / name).read_bytes() for name in names)
    registered = sorted(
        ModelEndpoint.objects.filter(submission__benchmark=benchmark).values_list(
            "submission__model_name", "base_url", "model"
        )
    )
    assert registered == [
        ("BoxChat (synthetic, 0-1000)", url, "standin-medsg-bench-norm1000_noisy"),
        (
            "GemLike (synthetic, y-x order)",
            url,
            "standin-medsg-bench-gemini_yxyx_some_unparsed",
        ),
        ("GroundDemo-7B (synthetic)", url, "standin-medsg-bench-pixel_near_perfect"),
    ]

    with StandinModel(
        models=demo_answer_tables(None, lambda plugin: 8, only="medsg-bench")
    ) as model:
        for name, _, model_name in registered:
            submission = grant_access(
                Submission.objects.get(benchmark=benchmark, model_name=name), maintainer, capture
            )
            services.register_endpoint(
                submission, actor=maintainer, base_url=model.base_url, model=model_name
            )
            job = rerun(submission, maintainer, capture)

            assert (job.state, job.items_done) == (RerunStatus.DONE, len(test_set)), name
            own = submission.evaluations.get().metrics
            assert job.metrics == own, name
            assert job.report["all_within"] is True, name
