"""The synthetic MedSG-Bench demo: deterministic, well formed, scoring as its files promise."""

import json
import random
import struct
import zlib

import numpy as np
import pytest

from plugins.medsg.demo import PREDICTION_FILES, draw_image, png_bytes, write_demo
from plugins.medsg.scoring import TASKS, load_predictions, load_testset, score

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return write_demo(tmp_path_factory.mktemp("medsg"), seed=0)


def test_the_same_seed_writes_the_same_json(demo, tmp_path):
    again = write_demo(tmp_path, seed=0)
    for name in ("testset", *PREDICTION_FILES):
        assert again[name].read_bytes() == demo[name].read_bytes(), name
    other = write_demo(tmp_path / "other", seed=1)
    assert other["testset"].read_bytes() != demo["testset"].read_bytes()


def test_the_test_set_covers_every_task_and_its_images_exist(demo):
    test_set = load_testset(demo["testset"])
    assert test_set.task_counts() == dict.fromkeys(TASKS, 10)
    folder = demo["testset"].parent
    for entry in test_set.items:
        assert 2 <= len(entry.images) <= 4
        assert (entry.size is not None) == (entry.task == "multi_view")
        for relative in entry.images:
            data = (folder / relative).read_bytes()
            assert data.startswith(b"\x89PNG\r\n\x1a\n")
            width, height = struct.unpack(">II", data[16:24])
            assert (width, height) == tuple(int(value) for value in entry.image_size)


def test_the_png_decodes_to_its_pixels():
    pixels = np.arange(12, dtype=np.uint8).reshape(3, 4)
    data = png_bytes(pixels)
    length = struct.unpack(">I", data[33:37])[0]
    raw = zlib.decompress(data[41 : 41 + length])
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(3, 5)
    assert rows[:, 0].tolist() == [0, 0, 0]  # filter type none
    assert np.array_equal(rows[:, 1:], pixels)


def test_the_lesion_fills_the_reference_box():
    pixels = draw_image(random.Random("x"), 40, 30, (5, 6, 10, 12))
    assert (pixels[6:12, 5:10] == 220).all()
    assert (pixels[:6] != 220).all()


def test_each_predictions_file_loads_and_scores_as_described(demo):
    test_set = load_testset(demo["testset"])
    results = {
        box_format: score(test_set, load_predictions(demo[box_format], test_set), box_format)
        for box_format in PREDICTION_FILES
    }
    assert results["pixel"].metrics["IoU"] > 0.9
    assert results["pixel"].format_report.unparsed == 0
    assert results["pixel"].metrics["IoU"] > results["norm1000"].metrics["IoU"]
    assert results["norm1000"].metrics["IoU"] > results["unit"].metrics["IoU"] > 0.2
    gemini = results["yxyx_norm1000"].format_report
    assert 0 < gemini.unparsed < 40
    rows = json.loads(demo["norm1000"].read_text())
    assert all(isinstance(row["prediction"], list) for row in rows)
