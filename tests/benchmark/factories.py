"""Factories for benchmark definitions and test sets, and tiny ground-truth files.

A ``TestSetFactory`` row has no file behind it; a test that needs the file imports one with
``benchmark.services.import_testset`` and ``write_ground_truth``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import factory

from benchmark.enums import MetricDirection
from benchmark.models import Benchmark, Metric, TestSet
from plugins.medvidbench.scoring import SCORER_VERSION
from tests.benchmark.scoring.factories import gt_record


class BenchmarkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Benchmark

    slug = factory.Sequence(lambda n: f"bench{n}")
    name = factory.Sequence(lambda n: f"Bench {n}")
    description = "A benchmark for tests."
    is_public = True


class MetricFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Metric

    benchmark = factory.SubFactory(BenchmarkFactory)
    key = factory.Sequence(lambda n: f"metric_{n}")
    label = factory.LazyAttribute(lambda metric: metric.key.replace("_", " ").title())
    task = "tal"
    direction = MetricDirection.HIGHER
    position = factory.Sequence(lambda n: n)


class TestSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TestSet

    __test__ = False  # not a pytest test class, despite the name

    benchmark = factory.SubFactory(BenchmarkFactory)
    version = factory.Sequence(lambda n: n + 1)
    checksum = factory.Sequence(lambda n: hashlib.sha256(f"test set {n}".encode()).hexdigest())
    file_name = factory.LazyAttribute(
        lambda test_set: (
            f"testsets/{test_set.benchmark.slug}/v{test_set.version}-{test_set.checksum[:12]}.json"
        )
    )
    record_count = 3
    qa_type_counts = factory.LazyFunction(lambda: {"tal": 2, "stg": 1})
    task_counts = factory.LazyFunction(lambda: {"stg": 1, "tal": 2})
    dataset_counts = factory.LazyFunction(lambda: {"AVOS": 3})
    scorer_version = SCORER_VERSION
    is_active = False


def small_ground_truth() -> list[dict[str, Any]]:
    """Five records in the official format, one per kind of reference answer."""
    return [
        gt_record("tal", "1.0-5.0 seconds.", [{"spans": [{"start": 1.0, "end": 5.0}]}]),
        gt_record(
            "stg",
            "1.0 seconds: [10, 20, 30, 40]",
            [{"bbox_dict": {"1.0": [10, 20, 30, 40]}}],
            dataset="CholecTrack20",
        ),
        gt_record("next_action", "tying", dataset="CoPESD"),
        gt_record(
            "cvs_assessment",
            "Two structures: 2, Cystic plate: 1, Hepatocystic triangle: 0",
            [{"cvs_scores": {"two_structures": 2, "cystic_plate": 1, "hepatocystic_triangle": 0}}],
            dataset="Cholec80_CVS",
        ),
        gt_record("video_summary_gpt", "The surgeon dissects the cystic duct.", dataset="AVOS"),
    ]


def write_ground_truth(path: Path, records: list[dict[str, Any]]) -> Path:
    """Write ``records`` as a ground-truth JSON file and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return path
