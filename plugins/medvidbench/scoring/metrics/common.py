"""Shared result types and the per-dataset grouping every metric uses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..contributions import MetricContributions
from ..ground_truth import Sample

Item = tuple[Sample, str]


@dataclass(frozen=True, slots=True)
class MetricValue:
    """One metric: the value (None when nothing could be scored), per dataset, and counts.

    `scored` is how many samples entered the value, `total` how many the task has.
    """

    value: float | None
    per_dataset: dict[str, float] = field(default_factory=dict)
    scored: int = 0
    total: int = 0


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    metrics: dict[str, MetricValue]
    # One flag per item, in item order: did the answer parse? None where the item is
    # not scored for reasons of its reference (e.g. a next-action label outside its list).
    parsed: list[bool | None]
    # What each metric aggregated, per sample (plugins.medvidbench.scoring.contributions): private,
    # never copied into a ScoreResult.
    contributions: dict[str, MetricContributions] = field(default_factory=dict)


def by_dataset(items: Iterable[Item]) -> dict[str, list[Item]]:
    """Items grouped by source dataset, datasets in order of first appearance."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item[0].dataset, []).append(item)
    return groups


def mean(values: Sequence[float]) -> float:
    return float(np.mean(values))


def pooled_mean(per_dataset_values: dict[str, list[float]]) -> MetricValue:
    """Mean over all samples of all datasets, with each dataset's own mean."""
    pooled = [value for values in per_dataset_values.values() for value in values]
    return MetricValue(
        value=mean(pooled) if pooled else None,
        per_dataset={name: mean(values) for name, values in per_dataset_values.items() if values},
        scored=len(pooled),
    )
