"""MedVidBench's frame sampling rule (docs/verification.md; plugins/medvidbench/rerun.py), the
data URLs and the message (benchmark/media.py), and the demo generator's frames folder holding
exactly the frames a re-run sends."""

import pytest

from benchmark import media
from plugins.medvidbench import rerun as frames
from plugins.medvidbench.demo_testset import frames as demo_frames
from plugins.medvidbench.scoring.ground_truth import load_ground_truth
from tests.benchmark.factories import small_ground_truth
from tests.verifying.conftest import with_frames

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


def test_the_demo_frames_folder_has_every_sent_frame_one_content_per_clip(tmp_path):
    records = with_frames(small_ground_truth())
    written = demo_frames.write_frames(tmp_path, records, max_frames=8)
    test_set = load_ground_truth(records)

    assert written == 5 * 8
    assert frames.rerun.missing_media(test_set, tmp_path, 8) == []
    clips = [frames.frame_urls(sample, tmp_path, 8) for sample in test_set.samples]
    # Every frame of a clip is the clip's one PNG (hard links), and no two clips look alike.
    assert [len(set(urls)) for urls in clips] == [1, 1, 1, 1, 1]
    assert len({urls[0] for urls in clips}) == 5
    assert all(url.startswith("data:image/png;base64,") for urls in clips for url in urls)
    first = tmp_path / test_set.samples[0].frames[0]
    assert first.stat().st_nlink == 8
    assert len({path.stat().st_ino for path in tmp_path.rglob("*.jpg")}) == 5


def test_writing_the_frames_again_replaces_links_and_never_writes_through_them(tmp_path):
    records = with_frames(small_ground_truth())[:1]
    demo_frames.write_frames(tmp_path, records, max_frames=8)
    sent = load_ground_truth(records).samples[0].frames
    sent = [sent[index] for index in frames.sampled_indices(len(sent), 8)]
    before = (tmp_path / sent[0]).read_bytes()
    # The clip changes its last frame: new content for its frames, while the dropped frame
    # (a link to the old content) keeps what it had.
    records[0]["video"][-1] = records[0]["video"][-1].replace(".jpg", "-new.jpg")
    demo_frames.write_frames(tmp_path, records, max_frames=8)

    after = {(tmp_path / path).read_bytes() for path in sent[:-1]}
    assert len(after) == 1
    assert after != {before}
    assert (tmp_path / sent[-1]).read_bytes() == before
    assert (tmp_path / sent[-1]).stat().st_nlink == 1
    assert not list(tmp_path.rglob("*.part"))


def test_a_frame_path_leading_outside_is_refused(tmp_path):
    records = small_ground_truth()[:1]
    records[0]["video"] = ["ok/1.jpg", "../outside.jpg"]
    with pytest.raises(ValueError, match="outside the frames folder"):
        demo_frames.write_frames(tmp_path / "frames", records, max_frames=8)
    assert not (tmp_path / "outside.jpg").exists()


def test_a_frame_path_outside_the_root_counts_as_missing(tmp_path):
    records = small_ground_truth()[:1]
    records[0]["video"] = ["../outside.png"]
    (tmp_path / "outside.png").write_bytes(demo_frames.tiny_png("x"))
    root = tmp_path / "frames"
    root.mkdir()
    test_set = load_ground_truth(records)
    assert frames.rerun.missing_media(test_set, root, 8, [0]) == ["../outside.png"]


def test_the_message_is_every_frame_then_the_question():
    assert media.vision_content("Q?", ["data:a", "data:b"]) == [
        {"type": "image_url", "image_url": {"url": "data:a"}},
        {"type": "image_url", "image_url": {"url": "data:b"}},
        {"type": "text", "text": "Q?"},
    ]
