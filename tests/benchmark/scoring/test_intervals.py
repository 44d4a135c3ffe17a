"""The two halves of issue 12's numbers joined: the clustered bootstrap's weights (bootstrap.py)
applied to a run's per-sample contributions (contributions.py) give every metric's replicate
values, its percentile interval and paired comparisons, deterministically.

Nothing here is stored or served yet; a later step keeps the replicate values per run."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark.scoring.bootstrap import (
    paired_difference,
    percentile_interval,
    replicate_weights,
)
from plugins.medvidbench.scoring import METRIC_NAMES
from plugins.medvidbench.scoring.clusters import video_clusters
from plugins.medvidbench.scoring.contributions import metric_values

from .test_contributions import demo, demo_scored, rubric  # noqa: F401  (module fixtures)

pytestmark = pytest.mark.unit

REPLICATES = 200


@pytest.fixture(scope="module")
def weights(demo):  # noqa: F811
    _, test_set, _ = demo
    clusters = video_clusters([sample.id for sample in test_set.samples])
    return replicate_weights(clusters, replicates=REPLICATES, seed=test_set.checksum)


def test_every_metric_gets_an_interval_around_a_plausible_value(demo_scored, weights):  # noqa: F811
    result, contributions = demo_scored["noisy"]

    values = metric_values(contributions, weights)

    for name in METRIC_NAMES:
        assert values[name].shape == (REPLICATES,)
        low, high = percentile_interval(values[name])
        published = result.metrics[name]
        assert low <= high
        # The bootstrap's spread is that of a mean over ~300 videos: far narrower than the
        # metric's range, and (for these smooth metrics) around the published value.
        assert high - low < 0.25 * max(abs(published), 1.0), name
        assert low - (high - low) <= published <= high + (high - low), name


def test_the_same_test_set_resamples_every_entry_alike(demo, demo_scored):  # noqa: F811
    _, test_set, _ = demo
    clusters = video_clusters([sample.id for sample in test_set.samples])
    first = replicate_weights(clusters, replicates=50, seed=test_set.checksum)
    again = replicate_weights(clusters, replicates=50, seed=test_set.checksum)
    _, contributions = demo_scored["prose"]

    assert np.array_equal(first, again)
    for name, row in metric_values(contributions, first).items():
        assert np.array_equal(row, metric_values(contributions, again)[name], equal_nan=True)


def test_paired_comparisons_tell_a_perfect_entry_from_a_noisy_one(demo_scored, weights):  # noqa: F811
    perfect, perfect_contributions = demo_scored["perfect"]
    noisy, noisy_contributions = demo_scored["noisy"]
    a = metric_values(perfect_contributions, weights)
    b = metric_values(noisy_contributions, weights)

    for name in ("CVS_acc", "NAP_acc", "TAG_mIoU@0.3", "DVC_F1"):
        same = paired_difference(a[name], a[name], perfect.metrics[name], perfect.metrics[name])
        assert (same.difference, same.interval, same.p_value) == (0.0, (0.0, 0.0), 1.0)
        better = paired_difference(a[name], b[name], perfect.metrics[name], noisy.metrics[name])
        assert better.difference == perfect.metrics[name] - noisy.metrics[name] > 0
        assert better.interval[0] > 0
        assert better.p_value == 2 / (REPLICATES + 1)
