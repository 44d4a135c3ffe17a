"""`manage.py score`: the scorer from the command line."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.benchmark.scoring.factories import gt_record, make_test_set, rows_for

pytestmark = pytest.mark.unit
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path):
    records = [
        gt_record("tal", "0.0-10.0 seconds.", [{"spans": [{"start": 0, "end": 10}]}]),
        gt_record("next_action", "tying"),
        gt_record("video_summary_gpt", "The surgeon ties a knot."),
    ]
    test_set = make_test_set(*records)
    ground_truth = tmp_path / "gt.json"
    ground_truth.write_text(json.dumps(records))
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps(rows_for(test_set, ["0.0-5.0", "tying", "Knot tying."])))
    return ground_truth, predictions


def run_score(*args) -> str:
    out = StringIO()
    call_command("score", *args, stdout=out)
    return out.getvalue()


def test_json_output_has_all_ten_metrics_at_full_precision(files):
    ground_truth, predictions = files
    result = json.loads(
        run_score("--ground-truth", str(ground_truth), str(predictions), "--format", "json")
    )
    assert result["metrics"] == {
        "CVS_acc": None,
        "NAP_acc": 1.0,
        "SA_acc": None,
        "STG_mIoU": None,
        "TAG_mIoU@0.3": 0.5,
        "TAG_mIoU@0.5": 0.5,
        "DVC_F1": None,
        "DVC_llm": None,
        "VS_llm": None,
        "RC_llm": None,
    }
    assert result["per_dataset"]["TAG_mIoU@0.3"] == {"AVOS": 0.5}
    assert result["parsed"] == {
        "next_action": {"total": 1, "parsed": 1},
        "tal": {"total": 1, "parsed": 1},
        "video_summary": {"total": 1, "parsed": 1},
    }


def test_table_output_is_readable(files):
    ground_truth, predictions = files
    table = run_score("--ground-truth", str(ground_truth), str(predictions))
    assert "TAG_mIoU@0.3      0.500             1/1" in table
    assert "VS_llm          pending" in table
    assert "  tal                    1/1" in table


def test_bad_predictions_raise_the_precise_message(files, tmp_path):
    ground_truth, _ = files
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "x", "qa_type": "tal"}]))
    with pytest.raises(
        CommandError, match="expected 3 rows, one per test sample in test-set order, got 1"
    ):
        run_score("--ground-truth", str(ground_truth), str(bad))


def test_a_bad_file_exits_non_zero_without_a_traceback(files, tmp_path):
    ground_truth, _ = files
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    completed = subprocess.run(
        [sys.executable, "manage.py", "score", "--ground-truth", str(ground_truth), str(bad)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1
    assert "The predictions file was rejected (1 problem(s)):" in completed.stderr
    assert "row 0: the file ends early, at byte 2, inside the first row" in completed.stderr
    assert "Traceback" not in completed.stderr


@pytest.mark.parametrize(
    ("missing", "kind"), [("ground_truth", "ground-truth"), ("predictions", "predictions")]
)
def test_a_file_that_cannot_be_read_is_refused_as_its_loader_refuses_one(
    files, tmp_path, missing, kind
):
    ground_truth, predictions = files
    absent = tmp_path / "absent.json"
    if missing == "ground_truth":
        ground_truth = absent
    else:
        predictions = absent

    with pytest.raises(CommandError) as raised:
        run_score(str(predictions), "--ground-truth", str(ground_truth))

    assert str(raised.value) == (
        f"The {kind} file was rejected (1 problem(s)):\n"
        f"  - cannot read {absent}: No such file or directory"
    )
