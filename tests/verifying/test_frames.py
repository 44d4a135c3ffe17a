"""The frame sampling rule (docs/verification.md), the data URLs, and the demo generator's
frames folder holding exactly the frames a re-run sends."""

import pytest

from benchmark.demo_testset import frames as demo_frames
from benchmark.scoring.ground_truth import load_ground_truth
from tests.benchmark.factories import small_ground_truth
from tests.verifying.conftest import with_frames
from verifying import frames

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("count", "limit", "expected"),
    [
        (0, 8, []),
        (3, 8, [0, 1, 2]),
        (8, 8, [0, 1, 2, 3, 4, 5, 6, 7]),
        (12, 8, [0, 2, 3, 5, 6, 8, 9, 11]),
        (16, 8, [0, 2, 4, 6, 9, 11, 13, 15]),
        (100, 4, [0, 33, 66, 99]),
        (5, 1, [0]),
    ],
)
def test_evenly_spaced_indices_include_the_first_and_the_last(count, limit, expected):
    assert frames.sampled_indices(count, limit) == expected


def test_the_demo_generator_picks_the_frames_the_rerun_sends():
    for count in range(40):
        for limit in range(1, 17):
            assert demo_frames.picked_indices(count, limit) == frames.sampled_indices(count, limit)


def test_the_demo_frames_folder_has_every_sent_frame_with_unique_content(tmp_path):
    records = with_frames(small_ground_truth())
    written = demo_frames.write_frames(tmp_path, records, max_frames=8)
    test_set = load_ground_truth(records)

    assert written == 5 * 8
    assert frames.missing_frames(test_set.samples, tmp_path, 8) == []
    urls = [url for sample in test_set.samples for url in frames.frame_urls(sample, tmp_path, 8)]
    assert len(set(urls)) == len(urls) == 40
    assert all(url.startswith("data:image/png;base64,") for url in urls)


def test_a_frame_path_outside_the_root_counts_as_missing(tmp_path):
    records = small_ground_truth()[:1]
    records[0]["video"] = ["../outside.png"]
    (tmp_path / "outside.png").write_bytes(demo_frames.tiny_png("x"))
    root = tmp_path / "frames"
    root.mkdir()
    sample = load_ground_truth(records).samples[0]
    assert frames.missing_frames([sample], root, 8) == ["../outside.png"]


def test_the_message_is_every_frame_then_the_question():
    assert frames.vision_content("Q?", ["data:a", "data:b"]) == [
        {"type": "image_url", "image_url": {"url": "data:a"}},
        {"type": "image_url", "image_url": {"url": "data:b"}},
        {"type": "text", "text": "Q?"},
    ]
