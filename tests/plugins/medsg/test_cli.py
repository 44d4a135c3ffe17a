"""`manage.py score --benchmark medsg-bench` (issue 14's CLI contract): the JSON at full
precision on a hand-computed file, the box conventions, and clear refusals."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

pytestmark = [pytest.mark.integration]

GROUND_TRUTH = [
    {"task": "referring", "question": "q", "images": ["a.png"], "answer": [0, 0, 10, 10]},
    {"task": "patch", "question": "q", "images": ["b.png", "c.png"], "answer": [0, 0, 10, 10]},
    {
        "task": "multi_view",
        "question": "q",
        "images": ["d.png", "e.png"],
        "answer": [100, 100, 300, 200],
        "size": [1000, 500],
    },
]


def write(tmp_path, name, value):
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def score(tmp_path, predictions, *extra):
    out = StringIO()
    call_command(
        "score",
        str(write(tmp_path, "predictions.json", predictions)),
        "--benchmark",
        "medsg-bench",
        "--ground-truth",
        str(write(tmp_path, "gt.json", GROUND_TRUTH)),
        *extra,
        "--format",
        "json",
        stdout=out,
    )
    return json.loads(out.getvalue())


def rows(*predictions):
    return [
        {"index": index, "task": item["task"], "prediction": prediction}
        for index, (item, prediction) in enumerate(zip(GROUND_TRUTH, predictions, strict=True))
    ]


def test_pixel_boxes_give_the_hand_computed_metrics_at_full_precision(tmp_path):
    # referring: [0,0,10,5] in [0,0,10,10]: 50/100 = 0.5. patch: (5,0)-(15,10) against
    # (0,0)-(10,10): 50 / (100 + 100 - 50) = 1/3. multi_view: no box at all: 0.
    data = score(
        tmp_path,
        rows("[0, 0, 10, 5]", "(5,0),(15,10)", "I cannot tell."),
        "--box-format",
        "pixel",
    )

    # Unweighted over the three tasks present, summed in the benchmark's task order
    # (multi_view, patch, referring).
    assert data["metrics"] == {
        "IoU": (0.0 + 1 / 3 + 0.5) / 3,
        "ACC@0.3": 2 / 3,
        "ACC@0.5": 1 / 3,
        "ACC@0.7": 0.0,
    }
    assert data["item_weighted"]["IoU"] == (0.0 + 1 / 3 + 0.5) / 3
    assert list(data["per_task"]) == ["multi_view", "patch", "referring"]
    assert data["per_task"]["patch"] == {
        "n": 1,
        "IoU": 1 / 3,
        "ACC@0.3": 1.0,
        "ACC@0.5": 0.0,
        "ACC@0.7": 0.0,
    }
    assert data["per_task"]["referring"]["ACC@0.5"] == 1.0  # 0.5 counts: inclusive


def test_each_convention_converts_into_the_items_pixel_space(tmp_path):
    # multi_view's space is its size, 1000x500: its reference [100,100,300,200] is
    # [100,200,300,400] in norm1000, [0.1,0.2,0.3,0.4] in unit, [200,100,400,300] in yxyx.
    perfect = {
        "norm1000": [
            [0, 0, 29.761904761904763, 29.761904761904763],
            [0, 0, 1000 * 10 / 336, 1000 * 10 / 336],
            [100, 200, 300, 400],
        ],
        "unit": [[0, 0, 10 / 336, 10 / 336], [0, 0, 10 / 336, 10 / 336], [0.1, 0.2, 0.3, 0.4]],
        "yxyx_norm1000": [
            [0, 0, 1000 * 10 / 336, 1000 * 10 / 336],
            [0, 0, 1000 * 10 / 336, 1000 * 10 / 336],
            [200, 100, 400, 300],
        ],
    }
    for box_format, boxes in perfect.items():
        data = score(tmp_path, rows(*boxes), "--box-format", box_format)
        assert data["per_task"]["multi_view"]["IoU"] == 1.0, box_format
        for task in ("patch", "referring"):
            assert data["per_task"][task]["IoU"] == pytest.approx(1.0, abs=1e-12), box_format


def test_the_box_format_is_required_and_checked(tmp_path):
    with pytest.raises(CommandError, match="needs --box-format: one of pixel, norm1000"):
        score(tmp_path, rows("1 2 3 4", "1 2 3 4", "1 2 3 4"))
    with pytest.raises(CommandError, match="--box-format 'xywh' is not one of"):
        score(tmp_path, rows("1 2 3 4", "1 2 3 4", "1 2 3 4"), "--box-format", "xywh")


def test_a_bad_file_exits_with_its_rows_and_fields(tmp_path):
    bad = rows("1 2 3 4", "1 2 3 4", "1 2 3 4")
    bad[1]["task"] = "referring"
    bad[2]["prediction"] = [1, 2, 3]
    with pytest.raises(CommandError) as raised:
        score(tmp_path, bad, "--box-format", "pixel")
    message = str(raised.value)
    assert "row 1, field 'task'" in message
    assert "row 2, field 'prediction'" in message


def test_an_unknown_benchmark_names_the_installed_ones(tmp_path):
    with pytest.raises(
        CommandError, match=r"No benchmark plugin 'nope' .*medsg-bench, medvidbench"
    ):
        call_command("score", "p.json", "--benchmark", "nope", "--ground-truth", "g.json")
