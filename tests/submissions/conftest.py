"""Fixtures: a benchmark with a small imported test set, MedVidBench with it, the published
rows of spec 7, and a private folder per test."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from benchmark.selectors import clear_parsed_testsets
from benchmark.services import ensure_plugin_benchmark, import_testset
from plugins.medvidbench.plugin import plugin as medvidbench_plugin
from tests.benchmark.factories import BenchmarkFactory, small_ground_truth, write_ground_truth
from tests.processes import stop_process_group

# Entries with intervals (issue 12), for every test here.
from tests.submissions.intervals_data import interval_benchmark, scored_entry  # noqa: F401

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def private_dir(settings, tmp_path):
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    clear_parsed_testsets()
    yield settings.PODIUM_PRIVATE_DIR
    clear_parsed_testsets()


@pytest.fixture
def records():
    return small_ground_truth()


@pytest.fixture
def benchmark(private_dir, records, tmp_path):
    benchmark = BenchmarkFactory(daily_submission_limit=5)
    import_testset(benchmark, write_ground_truth(tmp_path / "gt.json", records))
    return benchmark


@pytest.fixture
def predictions_for(benchmark):
    """A function: predictions text per record -> the bytes of a well-formed upload."""
    from benchmark.selectors import active_testset, load_scoring_testset

    parsed = load_scoring_testset(active_testset(benchmark))

    def build(texts):
        rows = [
            {"id": sample.id, "qa_type": sample.qa_type, "prediction": text}
            for sample, text in zip(parsed.samples, texts, strict=True)
        ]
        return json.dumps(rows).encode()

    return build


@pytest.fixture
def perfect_predictions(predictions_for, records):
    return predictions_for([record["conversations"][-1]["value"] for record in records])


@pytest.fixture
def medvidbench(private_dir, records, tmp_path):
    """MedVidBench as defined (its ten metrics, ranking policy and quota) with the small test
    set active. A test module that needs it everywhere overrides `benchmark` with it, which
    `predictions_for` and `perfect_predictions` then use too."""
    benchmark = ensure_plugin_benchmark("medvidbench")
    import_testset(benchmark, write_ground_truth(tmp_path / "gt.json", records))
    return benchmark


@pytest.fixture
def published_rows():
    """The 15 published official rows of spec 7, from the demo data file."""
    return medvidbench_plugin.published_rows()


def start_cluster(workers: int = 1, **extra_env: str) -> subprocess.Popen:
    """`manage.py qcluster` in a child process on this test's database and folders, in its own
    process group (stop it with `stop_cluster`); `extra_env` adds environment variables (e.g.
    `Q_RETRY`)."""
    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": (
            f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
            f"{database['PORT'] or 5432}/{database['NAME']}"
        ),
        "PODIUM_PRIVATE_DIR": str(settings.PODIUM_PRIVATE_DIR),
        "Q_WORKERS": str(workers),
        **extra_env,
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_cluster(process: subprocess.Popen) -> None:
    stop_process_group(process)


@pytest.fixture
def cluster(private_dir, benchmark):
    """`manage.py qcluster` in a child process on this test's database and folders (PostgreSQL,
    with `django_db(transaction=True)`), in its own process group, all of it stopped afterwards."""
    process = start_cluster()
    try:
        yield process
    finally:
        stop_cluster(process)


def slow_next_action_records(count: int) -> list[dict]:
    """`count` next-action samples (AVOS: cutting, tying, suturing)."""
    from tests.benchmark.scoring.factories import gt_record

    return [gt_record("next_action", "tying", dataset="AVOS") for _ in range(count)]


def slow_answers(count: int) -> list[str]:
    """`count` distinct next-action answers of 255 tokens each: none is a class label, so each
    is embedded (about 75 ms apiece on a 2-core machine). A file of them makes scoring take
    seconds without touching the code under test. Each call's answers start with a word of
    their own: the encoder keeps the answers it embedded (in memory and in the label store,
    docs/nap-engine.md), so answers seen before would make scoring fast again."""
    nonce = secrets.token_hex(4)
    return [
        f"Answer {nonce} {n}: "
        + " ".join(
            f"the surgeon then moves instrument {n} towards tissue layer {k}" for k in range(25)
        )
        for n in range(count)
    ]
