"""Entries with intervals for tests (issue 12): a slice of the demo test set large enough that
every task spans many videos, so the bootstrap gives every automatic metric an interval, and
helpers that upload and score entries on it.

    def test_x(interval_benchmark, scored_entry):
        run = scored_entry("Model A", kind="noisy", seed=1)

`interval_benchmark` is MedVidBench as defined, public, with `interval_records()` active and
B = 200 replicates (the smallest allowed: fast, and enough for 95% intervals).
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from benchmark.services import ensure_plugin_benchmark, import_testset
from plugins.medvidbench.demo_testset import generate_testset, make_predictions
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import write_ground_truth

# Every 12th demo record: 521 samples over the eight tasks, a few dozen videos each.
STRIDE = 12
REPLICATES = 200


@cache
def _records() -> tuple[str, ...]:
    return tuple(json.dumps(record) for record in generate_testset(seed=0)[::STRIDE])


def interval_records() -> list[dict]:
    return [json.loads(record) for record in _records()]


def predictions_file(kind: str = "noisy", seed: int = 0) -> bytes:
    """An upload for `interval_records()`: the demo's `perfect`, `noisy` or `prose` model."""
    return json.dumps(make_predictions(interval_records(), kind, seed)).encode()


@pytest.fixture
def interval_benchmark(private_dir, tmp_path):
    benchmark = ensure_plugin_benchmark("medvidbench")
    import_testset(benchmark, write_ground_truth(tmp_path / "intervals.json", interval_records()))
    benchmark.is_public = True
    benchmark.bootstrap_replicates = REPLICATES
    benchmark.judge_auto_start = False
    benchmark.save(update_fields=["is_public", "bootstrap_replicates", "judge_auto_start"])
    return benchmark


@pytest.fixture
def scored_entry(interval_benchmark, django_capture_on_commit_callbacks):
    """A function: (model name, kind, seed, owner=None, publish=True) -> the scored run of a new
    entry (its board recomputed; rank intervals are not: call
    `submissions.intervals.compute_rank_intervals`)."""

    def score(name, kind="noisy", seed=0, *, owner=None, publish=True):
        with django_capture_on_commit_callbacks(execute=False):
            submission = create_submission(
                interval_benchmark,
                owner=owner or UserFactory(),
                details=SubmissionDetails(model_name=name, publish=publish),
                predictions=predictions_file(kind, seed),
            )
        with django_capture_on_commit_callbacks(execute=True):
            return score_evaluation(submission.evaluations.get())

    return score
