"""The clustered bootstrap behind every interval, paired comparison and rank interval (issue 12).

Plain numpy, no Django: the caller hands in arrays and gets arrays or dataclasses back. The
method, its assumptions and its limits are in docs/statistics.md; in short:

- A replicate is a vector of non-negative integer weights over the test set's samples, shape
  (n_samples,), int64: the number of times the sample's video was drawn. Samples that share a
  video are resampled together, because MedVidBench asks several questions about one clip and
  those answers are not independent (Miller, 2024). A batch is a C-contiguous (B, n_samples)
  array; the identity replicate (all ones, `contributions.identity_weights`) reproduces the
  published metric.
- The weights depend only on the cluster keys and a seed, and the seed is the test set's
  checksum: every entry scored on one test-set version is resampled with the same weights, so
  the replicate values of any two entries are paired by construction, and a paired difference
  is a difference of two stored arrays, row by row.
- Intervals are read off the sorted replicate values (the percentile method), by an order
  statistic rule that does no arithmetic, so an endpoint is one of the replicate values, bit
  for bit, on any CPU.
- Rank intervals rank every replicate with the board's own ranking rules (ranking.py),
  vectorised over the replicates and tested equal to `rank_entries` replicate by replicate.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .ranking import (
    NORMALIZED_SUM_DECIMALS,
    Entry,
    MetricSpec,
    RankingPolicy,
    metric_ranks,
    name_order_positions,
    normalized_scores,
    round_like_python,
)

DEFAULT_REPLICATES = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_POLICY = RankingPolicy()

# Rank intervals are computed this many replicates at a time: the temporaries of one chunk of
# 1,000 entries x 10 metrics stay near 100 MB. Each replicate is ranked on its own row, so
# the chunk size changes no result (a test checks it).
RANK_CHUNK_REPLICATES = 100


def seed_integer(seed: bytes | str) -> int:
    """The integer that seeds the generator: sha256 of the seed (a str as UTF-8), big-endian.

    Hashing turns any checksum text (hex, base64, a version label) into 256 well-mixed bits,
    all of which PCG64's SeedSequence uses.
    """
    data = seed.encode("utf-8") if isinstance(seed, str) else bytes(seed)
    return int.from_bytes(hashlib.sha256(data).digest(), "big")


def replicate_weights(
    clusters: Sequence[str],
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: bytes | str,
) -> np.ndarray:
    """A (replicates, n_samples) int64 batch of clustered bootstrap weights.

    `clusters[i]` is sample i's cluster (a benchmark plugin's `replicate_clusters`: MedVidBench's video). Each replicate
    draws the K distinct clusters K times with replacement, uniformly; a sample's weight is
    the number of times its cluster was drawn, so samples of one cluster always share a weight
    and a replicate's total weight is a sum of K cluster sizes (n itself when the clusters are
    equal-sized).

    Deterministic, which is what makes two entries comparable: `seed` is the test set's
    checksum, so the same test-set version gives the same array, row for row, and every entry
    scored on it is resampled with the same weights (paired by construction). The distinct
    clusters are numbered in sorted order, so the result depends on the samples' clusters and
    not on how the caller happened to collect them. Replicate b is the same whatever
    `replicates` is (the first 500 rows of a batch of 1,000 are the batch of 500).

    Bits that could change: numpy's PCG64 stream or its `Generator.integers` algorithm
    (Lemire's bounded integers: integer arithmetic only, so no CPU or libm dependence). numpy
    keeps a seeded BitGenerator's stream fixed, but NEP 19 lets `Generator` methods change
    their algorithm between releases; a release that did would change every interval, so a
    test pins the sha256 of one batch and turns that into a failure, not a silent change.
    """
    if isinstance(clusters, str):
        raise TypeError("clusters must be a sequence of cluster keys, not one string")
    if replicates < 1:
        raise ValueError(f"replicates must be at least 1, not {replicates}")
    samples = len(clusters)
    if samples == 0:
        return np.zeros((replicates, 0), dtype=np.int64)
    keys, sample_cluster = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    count = len(keys)
    generator = np.random.Generator(np.random.PCG64(seed_integer(seed)))
    # Row b holds replicate b's K draws: one call fills the rows in order, which is what keeps
    # replicate b independent of the batch size.
    draws = generator.integers(0, count, size=(replicates, count), dtype=np.int64)
    # Cluster draw counts per row with one bincount: offset row b's draws by b * K.
    offsets = (np.arange(replicates, dtype=np.int64) * count)[:, np.newaxis]
    cluster_counts = np.bincount((draws + offsets).ravel(), minlength=replicates * count)
    cluster_counts = cluster_counts.reshape(replicates, count)
    return np.ascontiguousarray(cluster_counts[:, sample_cluster.reshape(-1)], dtype=np.int64)


def order_statistic_index(replicates: int, level: float = DEFAULT_LEVEL) -> int:
    """The 0-based index k - 1 of the lower endpoint in the sorted replicates.

    Efron & Tibshirani (1993, chapters 12 and 13): with alpha = (1 - level) / 2 and B
    replicates, the percentile interval is [k-th smallest, k-th largest] with
    k = floor((B + 1) * alpha). For B = 1,000 at 95%, k = 25: the 25th smallest and the 25th
    largest of the 1,000 values. Raises ValueError when k < 1 (fewer than 39 replicates at
    95%): no interval at that level can be read from so few.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level}")
    alpha = (1 - level) / 2
    # The small tolerance keeps (1001 * 0.025) = 25.024999... from flooring to 24 when the
    # binary product falls a hair under an integer.
    k = math.floor((replicates + 1) * alpha + 1e-9)
    if k < 1:
        raise ValueError(
            f"{replicates} replicates are too few for a {level:.0%} percentile interval"
        )
    return k - 1


def percentile_interval(
    values: np.ndarray, level: float = DEFAULT_LEVEL
) -> tuple[float, float] | None:
    """The bootstrap percentile interval of one metric's replicate values, shape (B,).

    The quantile rule is the order statistic of `order_statistic_index` (Efron & Tibshirani's
    k-th smallest and k-th largest), not an interpolation: each endpoint is one of the
    replicate values, unchanged, so it is exact and the same on every CPU and numpy version
    (an interpolating rule would add float arithmetic whose rounding we would have to argue
    about), and it is symmetric (the same k from each end).

    None when any replicate is NaN (or the array is empty): a NaN replicate is a resample on
    which the metric has no value (no counted sample of its kind was drawn, or a judge metric
    is pending). Dropping those replicates would give the interval of the metric *given* that
    it exists, narrower than the truth and computed from a B that differs between entries, so
    no interval is given instead; with hundreds of videos per task this does not happen for a
    scored metric.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 1:
        raise ValueError(f"expected one metric's replicates, shape (B,), got {values.shape}")
    if values.size == 0 or np.isnan(values).any():
        return None
    index = order_statistic_index(values.size, level)
    ordered = np.sort(values)
    return float(ordered[index]), float(ordered[values.size - 1 - index])


@dataclass(frozen=True)
class PairedDifference:
    """Entry a minus entry b on one metric: the API's `{difference, interval, p_value}`.

    `dataclasses.asdict` gives the JSON shape (the interval as a 2-tuple). Each field is None
    when it cannot be computed (a missing point value, a NaN replicate).
    """

    difference: float | None
    interval: tuple[float, float] | None
    p_value: float | None


def paired_difference(
    a: np.ndarray,
    b: np.ndarray,
    point_a: float | None,
    point_b: float | None,
    *,
    level: float = DEFAULT_LEVEL,
) -> PairedDifference:
    """Compare two entries on one metric from their replicate values, row by row.

    `a` and `b` (shape (B,)) must come from the same replicate weights, which they do when
    both entries were scored on the same test-set version: then row b of each is the same
    resample, and d* = a - b is the bootstrap distribution of the difference, keeping the
    correlation between the entries (both answer the same hard questions) that an unpaired
    comparison would throw away.

    - difference: point_a - point_b, the published values' difference.
    - interval: the percentile interval of d* (`percentile_interval`).
    - p_value, two-sided: p = min(1, 2 * min((1 + #{d* <= 0}) / (B + 1),
      (1 + #{d* >= 0}) / (B + 1))). It is the percentile interval read backwards (the
      interval at level 1 - p just reaches 0), so the interval and the p-value never
      disagree about whether 0 is plausible. The +1 (Davison & Hinkley's correction) keeps p
      above 0: B replicates cannot show a probability below about 1 / B, so the smallest
      p-value is 2 / (B + 1) (0.002 at B = 1,000). An entry compared with itself has every
      d* = 0, so both counts are B and p = 1.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"replicates must have the same shape (B,), got {a.shape} and {b.shape}")
    difference = None
    if point_a is not None and point_b is not None:
        difference = float(point_a) - float(point_b)
        if math.isnan(difference):
            difference = None
    deltas = a - b
    if deltas.size == 0 or np.isnan(deltas).any():
        return PairedDifference(difference, None, None)
    count = deltas.size
    at_most_zero = int(np.count_nonzero(deltas <= 0))
    at_least_zero = int(np.count_nonzero(deltas >= 0))
    p_value = min(1.0, 2 * min(1 + at_most_zero, 1 + at_least_zero) / (count + 1))
    return PairedDifference(difference, percentile_interval(deltas, level), p_value)


@dataclass(frozen=True)
class ReplicateRanks:
    """Every entry's place on every replicate, from the board's ranking rules.

    Arrays of shape (B, n_entries), columns in the order of the entries passed in:
    `position` is the board's rank column on that replicate (all tiebreakers, never shared,
    exactly `RankedEntry.rank`); `best` and `worst` are the first and last position of the
    group of entries that only the name tiebreak separates (equal mean rank, wins, rank sum
    and normalised sum), so an entry tied with others spans the places the tie occupies.
    """

    position: np.ndarray
    best: np.ndarray
    worst: np.ndarray


def replicate_ranks(
    entries: Sequence[Entry],
    metrics: Sequence[MetricSpec],
    replicate_values: Sequence[np.ndarray | None],
    policy: RankingPolicy = DEFAULT_POLICY,
    *,
    chunk: int = RANK_CHUNK_REPLICATES,
) -> ReplicateRanks:
    """Rank the entries on every replicate with the rules of `ranking.rank_entries`.

    `replicate_values[i]` is entry i's values on each replicate, shape (n_metrics, B) in the
    order of `metrics`, NaN where the metric has no value (a pending judge metric); None for
    an entry without per-sample data (an imported row), whose `Entry.values` then stand
    unchanged in every replicate. The entries' names and keys give the last tiebreak as on the
    board.

    This is `rank_entries` vectorised over the replicates: the same helpers (rounding, the
    per-metric ranks, the normalised scores, the name order) on a (B * metrics, entries)
    array, then the same lexicographic order per replicate. Calling `rank_entries` 1,000
    times on 1,000 entries costs about ten seconds, mostly building Python objects; the
    property test in tests/benchmark/scoring/test_bootstrap.py checks that `position` equals
    `rank_entries`'s rank on every replicate, ties, missing values and both tie methods
    included.
    """
    metric_keys = [metric.key for metric in metrics]
    if not metric_keys:
        raise ValueError("at least one metric is needed to rank")
    if len(set(metric_keys)) != len(metric_keys):
        raise ValueError(f"metric keys repeat: {metric_keys}")
    if len(replicate_values) != len(entries):
        raise ValueError("one replicate array (or None) is needed per entry")
    if len({entry.key for entry in entries}) != len(entries):
        raise ValueError("entry keys must be unique")
    stacked = _stack_replicates(entries, metric_keys, replicate_values)
    entry_count, _, replicates = stacked.shape
    if np.isinf(stacked).any():
        raise ValueError("metric values must be finite or missing")
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, not {chunk}")
    names = name_order_positions(entries)
    higher_is_better = np.array([metric.higher_is_better for metric in metrics])
    position = np.empty((replicates, entry_count), dtype=np.int64)
    best = np.empty_like(position)
    worst = np.empty_like(position)
    for start in range(0, replicates, chunk):
        stop = min(start + chunk, replicates)
        # (chunk, metrics, entries): each replicate's metrics x entries matrix, as rank_entries
        # builds it, with the replicates stacked in front.
        values = np.ascontiguousarray(stacked[:, :, start:stop].transpose(2, 1, 0))
        position[start:stop], best[start:stop], worst[start:stop] = _rank_chunk(
            values, higher_is_better, names, policy
        )
    return ReplicateRanks(position, best, worst)


def _stack_replicates(
    entries: Sequence[Entry],
    metric_keys: list[str],
    replicate_values: Sequence[np.ndarray | None],
) -> np.ndarray:
    """(entries, metrics, B) floats; an imported row's values repeated in every replicate."""
    given = [np.asarray(values, dtype=float) for values in replicate_values if values is not None]
    if not given:
        raise ValueError("at least one entry needs replicate values (all rows are imported)")
    replicates = given[0].shape[-1]
    stacked = np.empty((len(entries), len(metric_keys), replicates), dtype=float)
    for index, (entry, values) in enumerate(zip(entries, replicate_values, strict=True)):
        if values is None:
            fixed = [entry.values.get(key) for key in metric_keys]
            stacked[index] = np.array(fixed, dtype=float)[:, np.newaxis]
            continue
        values = np.asarray(values, dtype=float)
        if values.shape != (len(metric_keys), replicates):
            raise ValueError(
                f"entry {entry.key!r}: replicate values of shape {values.shape}, expected "
                f"{(len(metric_keys), replicates)} (metrics x replicates)"
            )
        stacked[index] = values
    return stacked


def _rank_chunk(
    values: np.ndarray,
    higher_is_better: np.ndarray,
    names: np.ndarray,
    policy: RankingPolicy,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions and tie spans for a (replicates, metrics, entries) block (see replicate_ranks).

    Step by step the body of `rank_entries`; every step works row by row (one metric of one
    replicate, or one replicate), so no replicate's result depends on the others in its block.
    """
    replicates, metric_count, entry_count = values.shape
    if policy.decimals is not None:
        values = round_like_python(values, policy.decimals)
    flat = values.reshape(replicates * metric_count, entry_count)
    direction = np.tile(higher_is_better, replicates)[:, np.newaxis]
    ranks = metric_ranks(np.where(direction, -flat, flat), policy.tie_method)
    ranks = ranks.reshape(replicates, metric_count, entry_count)
    rank_sum = ranks.sum(axis=1)
    mean_rank = rank_sum / metric_count
    wins = ((ranks == 1) & ~np.isnan(values)).sum(axis=1)
    normalized = normalized_scores(flat, direction).reshape(replicates, metric_count, entry_count)
    normalized_sum = np.round(normalized.sum(axis=1), NORMALIZED_SUM_DECIMALS)
    statistics = (-normalized_sum, rank_sum, -wins, mean_rank)
    # np.lexsort sorts by the last key first, along the last axis: one order per replicate.
    order = np.lexsort((np.broadcast_to(names, mean_rank.shape), *statistics), axis=-1)
    rows = np.arange(replicates)[:, np.newaxis]
    places = np.arange(1, entry_count + 1, dtype=np.int64)
    position = np.empty((replicates, entry_count), dtype=np.int64)
    position[rows, order] = places

    # Groups of neighbours (in board order) equal on every statistic: only the name split them.
    same_as_previous = np.zeros((replicates, entry_count), dtype=bool)
    same_as_previous[:, 1:] = True
    for statistic in statistics:
        ordered = np.take_along_axis(statistic, order, axis=1)
        same_as_previous[:, 1:] &= ordered[:, 1:] == ordered[:, :-1]
    starts = ~same_as_previous
    group_best = np.maximum.accumulate(np.where(starts, places, 0), axis=1)
    ends = np.ones_like(starts)
    ends[:, :-1] = starts[:, 1:]
    reversed_worst = np.minimum.accumulate(np.where(ends, places, entry_count + 1)[:, ::-1], axis=1)
    group_worst = reversed_worst[:, ::-1]
    best = np.empty_like(position)
    worst = np.empty_like(position)
    best[rows, order] = group_best
    worst[rows, order] = group_worst
    return position, best, worst


@dataclass(frozen=True)
class RankInterval:
    """One entry's rank interval: [best, worst] board places, both ends included."""

    key: Hashable
    best: int
    worst: int


def rank_intervals(
    entries: Sequence[Entry],
    metrics: Sequence[MetricSpec],
    replicate_values: Sequence[np.ndarray | None],
    policy: RankingPolicy = DEFAULT_POLICY,
    *,
    level: float = DEFAULT_LEVEL,
) -> list[RankInterval]:
    """Each entry's rank interval, in the order of `entries` (see `replicate_ranks`).

    best is the k-th smallest of the entry's best places over the replicates and worst the
    k-th largest of its worst places, with the k of `percentile_interval` (the 25th of 1,000
    at 95%): the 2.5th and 97.5th percentiles of its rank. Taking a tied group's first and
    last place, not the name tiebreak's choice, is deliberate: the name decides the board's
    order, but it is not evidence, and two entries the test set cannot separate should both
    show the places they share (identical entries get the same interval).
    """
    ranks = replicate_ranks(entries, metrics, replicate_values, policy)
    replicates = ranks.position.shape[0]
    index = order_statistic_index(replicates, level)
    best = np.sort(ranks.best, axis=0)[index]
    worst = np.sort(ranks.worst, axis=0)[replicates - 1 - index]
    return [
        RankInterval(entry.key, low, high)
        for entry, low, high in zip(entries, best.tolist(), worst.tolist(), strict=True)
    ]


def tiers(intervals: Sequence[tuple[int, int]]) -> list[int]:
    """Tier numbers (1, 2, ...) for entries in board order, from their rank intervals.

    The rule (justified in docs/statistics.md): walk the board from the top; the first entry
    leads tier 1; each next entry joins the current tier when its best place is no lower than
    the tier leader's worst place (its interval overlaps the leader's), else it leads a new
    tier. Anchoring on the leader rather than on the entry just above stops chains: when A
    overlaps B and B overlaps C but A is clearly above C, C leads a new tier instead of
    dragging everyone into A's.

    `intervals[i]` is the (best, worst) of the entry in board place i + 1; pure and O(n).
    """
    result: list[int] = []
    tier = 0
    leader_worst = 0
    for best, worst in intervals:
        if best > worst:
            raise ValueError(f"a rank interval needs best <= worst, got [{best}, {worst}]")
        if not result or best > leader_worst:
            tier += 1
            leader_worst = worst
        result.append(tier)
    return result
