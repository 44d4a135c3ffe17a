"""`manage.py rate_battles BATTLES.jsonl --format json`: the contract the hidden battle sets
call, run as a real process (issue 15, point 3; docs/ratings.md)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.scoring.battles_file import read_battles
from benchmark.scoring.ratings import rate_battles
from tests.benchmark.scoring.test_ratings import random_battles

pytestmark = pytest.mark.integration
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def run(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "manage.py", "rate_battles", *map(str, args)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def write(path, rows):
    path.write_text(
        "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)
    )
    return path


def battle(model_a, model_b, winner, **extra):
    return {"model_a": model_a, "model_b": model_b, "winner": winner, **extra}


@pytest.fixture
def three_of_four(tmp_path):
    return write(
        tmp_path / "battles.jsonl",
        [
            battle("A", "B", "model_a", question="q1", positions=["A", "B"]),
            battle("B", "A", "model_b", question="q1", positions=["B", "A"]),
            "",
            battle("A", "B", "model_a"),
            battle("A", "B", "model_b"),
        ],
    )


def test_json_prints_exactly_the_contract_on_one_line(three_of_four):
    done = run(three_of_four, "--format", "json")

    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    half_gap = 200 * math.log10(3)
    assert json.loads(done.stdout) == {
        "ratings": {
            "A": {
                "rating": round(1000 + half_gap, 2),
                "ci_low": round(1000 - half_gap, 2),
                "ci_high": None,
                "battles": 4,
            },
            "B": {
                "rating": round(1000 - half_gap, 2),
                "ci_low": None,
                "ci_high": round(1000 + half_gap, 2),
                "battles": 4,
            },
        }
    }
    assert "bootstrap rounds left some model without a finite rating" in done.stderr


def test_json_is_the_rating_functions_output_for_a_real_board(tmp_path):
    battles = random_battles(models=7, battles=900, seed=21)
    path = write(tmp_path / "board.jsonl", [battle(*row) for row in battles])

    done = run(path, "--format", "json", "--rounds", "300", "--seed", "4")

    assert done.returncode == 0, done.stderr
    expected = rate_battles(read_battles(path.read_bytes()), rounds=300, seed=4).to_dict()
    assert done.stdout == json.dumps(expected) + "\n"
    assert done.stderr == ""


def test_anchor_rounds_and_seed_reach_the_rating(tmp_path):
    battles = random_battles(models=5, battles=600, seed=22)
    path = write(tmp_path / "board.jsonl", [battle(*row) for row in battles])

    default = json.loads(run(path, "--format", "json").stdout)["ratings"]
    anchored = json.loads(run(path, "--format", "json", "--anchor", "model-02").stdout)["ratings"]
    reseeded = json.loads(run(path, "--format", "json", "--seed", "9").stdout)["ratings"]
    fewer = json.loads(run(path, "--format", "json", "--rounds", "100").stdout)["ratings"]

    assert anchored["model-02"] == {
        "rating": 1000.0,
        "ci_low": 1000.0,
        "ci_high": 1000.0,
        "battles": default["model-02"]["battles"],
    }
    shift = 1000.0 - default["model-02"]["rating"]
    for model, row in default.items():
        assert anchored[model]["rating"] == pytest.approx(row["rating"] + shift, abs=0.011)
        assert reseeded[model]["rating"] == fewer[model]["rating"] == row["rating"]
    assert reseeded != default
    assert fewer != default


def test_the_default_format_is_a_readable_table(three_of_four):
    done = run(three_of_four)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "Bradley-Terry ratings, Elo scale (mean 1000); 95% percentile bootstrap intervals "
        "from 1,000 rounds, seed 0"
    )
    assert lines[2].split() == ["model", "rating", "ci_low", "ci_high", "margins", "battles"]
    assert lines[3].split() == ["A", "1095.42", "904.58", "unbounded", "+inf/-190.84", "4"]
    assert lines[4].split() == ["B", "904.58", "unbounded", "1095.42", "+190.84/-inf", "4"]


BAD_FILES = {
    "bad JSON": (['{"model_a": "A" "model_b": "B"}'], "line 1: not valid JSON: Expecting"),
    "cut off": (
        ['{"model_a": "A", "model_b": "B"'],
        "line 1: the file ends early, at byte 32, inside this line: it looks cut off",
    ),
    "missing key": (
        [battle("A", "B", "tie"), {"model_a": "A", "winner": "tie"}],
        "line 2, field 'model_b': missing",
    ),
    "unknown winner": (
        [battle("A", "B", "tie"), "", battle("A", "B", "draw")],
        'line 3, field \'winner\': expected "model_a", "model_b" or "tie", got "draw"',
    ),
    "a model against itself": (
        [battle("A", "A", "model_a")],
        'line 1: model_a and model_b are both "A": a model cannot battle itself',
    ),
    "empty file": ([], "the file holds no battles: expected one JSON object per line"),
    "unbounded": (
        [battle("A", "B", "model_a"), battle("B", "A", "model_b")],
        "model 'A' never lost or tied: its rating is unbounded above",
    ),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_file_exits_non_zero_with_the_reason_and_prints_nothing(tmp_path, case):
    rows, reason = BAD_FILES[case]
    path = write(tmp_path / "battles.jsonl", rows)

    done = run(path, "--format", "json")

    assert done.returncode != 0
    assert done.stdout == ""
    assert reason in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_anchor_and_a_missing_file_are_refused(three_of_four, tmp_path):
    unknown = run(three_of_four, "--format", "json", "--anchor", "C")
    missing = run(tmp_path / "nowhere.jsonl", "--format", "json")

    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert "the anchor 'C' is not one of the 2 models of the battles" in unknown.stderr
    assert (missing.returncode, missing.stdout) == (1, "")
    assert "nowhere.jsonl: No such file or directory" in missing.stderr
