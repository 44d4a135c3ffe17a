"""What each metric aggregates, kept as arrays, so the metric can be recomputed under weights.

Issue 12 needs every metric again under thousands of bootstrap replicates. Re-running the
parsers and matchers for each replicate would take hours; they do not depend on the weights,
only the final aggregation does. So a scoring run also records, per metric, the per-sample
(or per judged item) quantities that its aggregation reduces, with the test-set row each
belongs to, and this module re-runs only that aggregation under a vector of sample weights.

A replicate is a vector of non-negative integer weights over the test set's samples (the
number of times the sample's video cluster was drawn); a batch is a C-contiguous (B, n)
int64 array. A weight multiplies a sample's counts and sums: a sample drawn k times counts k
times, and a dataset's "number of samples" becomes the sum of its samples' weights. The
all-ones replicate gives the published value bit for bit (tests compare with `==`), because
every float reduction runs in the published code's order:

- numpy's pairwise sum (`np.mean`) is reproduced by `np.add.reduce` over one contiguous 1-D
  row holding the same values in the same order (weight 1 multiplies exactly); it is called
  row by row, never over a 2-D batch, so a replicate's bits cannot depend on the others in
  its batch or on B (the determinism rule; `tests/.../test_contributions.py` checks it);
- Python's `sum()` of floats (compensated since 3.12) is called as Python's `sum()`;
- left-to-right Python additions are repeated as the same sequence of elementwise float64
  additions, which are the same IEEE operations whether done one row or many at a time;
- counts and integer score sums are int64 (exact in any order), and a ratio of two exact
  integers below 2**53 is one correctly rounded division either way.

Under other weights, sums still run in the identity's fixed order (a dataset or an aspect
that gets no weight is left out, as on the smaller test set). So a replicate's value equals
scoring the resampled test set up to the last bits of a float sum (exactly, for the metrics
that are ratios of counts), and never depends on the CPU, the batch or the order of work.

A value of NaN means "no value" (the published None): nothing counted under those weights.
Everything here is private: per-sample values would leak the reference answers, so
`ScoreResult` never carries them.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Protocol

import numpy as np

from benchmark.scoring.weights import as_weights, row_sums

from .tasks import METRIC_NAMES


class MetricContributions(Protocol):
    """One metric's recorded inputs; `compute` is the metric under each row of weights."""

    def compute(self, weights: np.ndarray) -> np.ndarray:
        """(B,) float64 from a validated (B, n_samples) int64 batch; NaN where no value."""
        ...


def _indices(values: Sequence[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _floats(values: Sequence[float]) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _weighted_products(weights: np.ndarray, values: np.ndarray, finite: bool) -> np.ndarray:
    """`weights * values`, C-contiguous; a zero weight gives 0.0 even for a NaN or infinite
    value, as leaving the sample out would."""
    with np.errstate(invalid="ignore"):  # 0 x inf, replaced just below
        products = weights * values
    if not finite:
        products[weights == 0] = 0.0
    return np.ascontiguousarray(products)


@dataclass(frozen=True, eq=False)
class PooledMean:
    """The mean of per-sample values pooled over datasets (TAG_mIoU@0.3/0.5, STG_mIoU,
    NAP_acc as hits of 0.0/1.0). `samples[i]` is the test-set row of `values[i]`, in the order
    the published mean summed them (grouped by dataset); rows the metric skips are absent."""

    samples: np.ndarray
    values: np.ndarray
    finite: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "finite", bool(np.isfinite(self.values).all()))

    @classmethod
    def build(cls, samples: Sequence[int], values: Sequence[float]) -> PooledMean:
        return cls(_indices(samples), _floats(values))

    def compute(self, weights: np.ndarray) -> np.ndarray:
        taken = weights[:, self.samples]
        counts = taken.sum(axis=1)
        sums = row_sums(_weighted_products(taken, self.values, self.finite))
        with np.errstate(invalid="ignore", divide="ignore"):
            result = sums / counts
        result[counts == 0] = np.nan
        return result


@dataclass(frozen=True, eq=False)
class DatasetWeightedMean:
    """DVC_F1: per dataset the mean of the non-skipped samples' values (0.0 if none), then
    the mean over datasets weighted by each dataset's number of samples, skipped included.

    `task_samples`/`task_datasets`: every sample of the task and its dataset code (codes in
    order of first appearance, the order of the published sum); `samples`/`datasets`/`values`:
    the non-skipped ones in test-set order.
    """

    n_datasets: int
    task_samples: np.ndarray
    task_datasets: np.ndarray
    samples: np.ndarray
    datasets: np.ndarray
    values: np.ndarray

    @classmethod
    def build(
        cls,
        task_rows: Sequence[tuple[int, str]],
        scored_rows: Sequence[tuple[int, str, float]],
    ) -> DatasetWeightedMean:
        codes: dict[str, int] = {}
        for _, dataset in task_rows:
            codes.setdefault(dataset, len(codes))
        return cls(
            n_datasets=len(codes),
            task_samples=_indices([row for row, _ in task_rows]),
            task_datasets=_indices([codes[dataset] for _, dataset in task_rows]),
            samples=_indices([row for row, _, _ in scored_rows]),
            datasets=_indices([codes[dataset] for _, dataset, _ in scored_rows]),
            values=_floats([value for _, _, value in scored_rows]),
        )

    def compute(self, weights: np.ndarray) -> np.ndarray:
        batch = weights.shape[0]
        sizes = _sums_by_code(weights[:, self.task_samples], self.task_datasets, self.n_datasets)
        means = np.zeros((batch, self.n_datasets), dtype=np.float64)
        for code in range(self.n_datasets):
            mine = self.datasets == code
            if not mine.any():
                continue  # nothing scored in this dataset: 0.0
            taken = weights[:, self.samples[mine]]
            values = self.values[mine]
            counts = taken.sum(axis=1)
            sums = row_sums(_weighted_products(taken, values, bool(np.isfinite(values).all())))
            with np.errstate(invalid="ignore", divide="ignore"):
                means[:, code] = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        result = np.full(batch, np.nan)
        size_rows = sizes.tolist()
        mean_rows = means.tolist()
        for row in range(batch):
            total = sum(size_rows[row])
            if total:
                # Python's sum() over Python floats, datasets in published order, as DVC_F1 is
                # published; a dataset with no weight is absent, as on the smaller test set.
                weighted = sum(
                    mean * size
                    for mean, size in zip(mean_rows[row], size_rows[row], strict=True)
                    if size
                )
                result[row] = weighted / total
        return result


@dataclass(frozen=True, eq=False)
class BalancedAccuracy:
    """SA_acc and CVS_acc: per dataset the mean over parts (aspects, components) of the
    part's accuracy, parts with no count left out (0.0 if none); the metric is the mean over
    the datasets that have a sample.

    `part_datasets[p]` is the dataset code of part p, parts in the order the published tally
    met them (a part is one dataset's aspect or component);
    each entry is one (sample, part) the prediction named, with whether it was right.
    """

    n_datasets: int
    part_datasets: np.ndarray
    task_samples: np.ndarray
    task_datasets: np.ndarray
    entry_samples: np.ndarray
    entry_parts: np.ndarray
    entry_correct: np.ndarray

    @classmethod
    def build(
        cls,
        task_rows: Sequence[tuple[int, str]],
        entries: Sequence[tuple[int, str, str, bool]],
    ) -> BalancedAccuracy:
        """`task_rows`: (row, dataset) of every sample of the task; `entries`: (row, dataset,
        part name, correct) of every counted part, in the published tally's order."""
        datasets: dict[str, int] = {}
        for _, dataset in task_rows:
            datasets.setdefault(dataset, len(datasets))
        parts: dict[tuple[str, str], int] = {}
        for _, dataset, name, _ in entries:
            parts.setdefault((dataset, name), len(parts))
        return cls(
            n_datasets=len(datasets),
            part_datasets=_indices([datasets[dataset] for dataset, _ in parts]),
            task_samples=_indices([row for row, _ in task_rows]),
            task_datasets=_indices([datasets[dataset] for _, dataset in task_rows]),
            entry_samples=_indices([row for row, _, _, _ in entries]),
            entry_parts=_indices([parts[(dataset, name)] for _, dataset, name, _ in entries]),
            entry_correct=np.asarray([correct for *_, correct in entries], dtype=np.int64),
        )

    def compute(self, weights: np.ndarray) -> np.ndarray:
        batch = weights.shape[0]
        n_parts = len(self.part_datasets)
        sizes = _sums_by_code(weights[:, self.task_samples], self.task_datasets, self.n_datasets)
        taken = weights[:, self.entry_samples]
        counted = _sums_by_code(taken, self.entry_parts, n_parts).tolist()
        correct = _sums_by_code(taken * self.entry_correct, self.entry_parts, n_parts).tolist()
        parts_of = [
            [part for part in range(n_parts) if self.part_datasets[part] == code]
            for code in range(self.n_datasets)
        ]
        present = (sizes > 0).tolist()
        result = np.full(batch, np.nan)
        for row in range(batch):
            per_dataset = []
            for code in range(self.n_datasets):
                if not present[row][code]:
                    continue
                accuracies = [
                    correct[row][part] / counted[row][part]
                    for part in parts_of[code]
                    if counted[row][part]
                ]
                per_dataset.append(float(np.mean(accuracies)) if accuracies else 0.0)
            if per_dataset:
                result[row] = float(np.mean(per_dataset))
        return result


@dataclass(frozen=True, eq=False)
class JudgePooled:
    """VS_llm and RC_llm: per aspect the mean score over the judged items (pooled), then the
    mean of the aspect means, summed left to right.

    No value when no sample of the task has weight, or when items have weight and none of them
    was judged; 0.0 when the task is there but no item has weight (every drawn prediction
    empty), as `judge.aggregate` publishes it.
    """

    task_samples: np.ndarray
    item_samples: np.ndarray
    item_judged: np.ndarray  # int64 0/1
    item_scores: np.ndarray  # (items, aspects) int64, zeros where not judged

    def compute(self, weights: np.ndarray) -> np.ndarray:
        present = weights[:, self.task_samples].sum(axis=1) > 0
        taken = weights[:, self.item_samples]
        items = taken.sum(axis=1)
        judged_weights = taken * self.item_judged
        judged = judged_weights.sum(axis=1)
        n_aspects = self.item_scores.shape[1]
        safe = np.maximum(judged, 1)
        total = np.zeros(weights.shape[0], dtype=np.float64)
        for aspect in range(n_aspects):
            total = total + (judged_weights * self.item_scores[:, aspect]).sum(axis=1) / safe
        result = np.where(judged > 0, total / n_aspects, 0.0)
        result[~present | ((items > 0) & (judged == 0))] = np.nan
        return result


@dataclass(frozen=True, eq=False)
class JudgeDense:
    """DVC_llm: per dataset and threshold the aspect means over the judged items there; the
    threshold's score is the mean of the aspect means above 0, the dataset's the mean of the
    threshold scores above 0 (0.0 with none), and the metric the mean over datasets weighted
    by each dataset's number of dense-captioning samples, all summed left to right.

    No value when no dense-captioning sample has weight, or when items have weight and none
    of them was judged.
    """

    n_datasets: int
    n_thresholds: int
    task_samples: np.ndarray
    task_datasets: np.ndarray
    item_samples: np.ndarray
    item_datasets: np.ndarray
    item_thresholds: np.ndarray
    item_judged: np.ndarray
    item_scores: np.ndarray

    def compute(self, weights: np.ndarray) -> np.ndarray:
        batch = weights.shape[0]
        sizes = _sums_by_code(weights[:, self.task_samples], self.task_datasets, self.n_datasets)
        ones = np.ones((len(self.item_samples), 1), dtype=np.int64)
        items = _weighted_item_sums(weights, self.item_samples, ones)[:, 0]
        judged = _weighted_item_sums(weights, self.item_samples, self.item_judged[:, None])[:, 0]
        n_aspects = self.item_scores.shape[1]
        # Per (dataset, threshold) column block: [judged count, aspect score sums...].
        judged_rows = self.item_judged == 1
        total = np.zeros(batch, dtype=np.float64)
        for code in range(self.n_datasets):
            dataset_sum = np.zeros(batch, dtype=np.float64)
            dataset_count = np.zeros(batch, dtype=np.int64)
            for threshold in range(self.n_thresholds):
                mine = (
                    judged_rows & (self.item_datasets == code) & (self.item_thresholds == threshold)
                )
                sums = _weighted_item_sums(
                    weights,
                    self.item_samples[mine],
                    np.concatenate([ones[mine], self.item_scores[mine]], axis=1),
                )
                count = sums[:, 0]
                safe = np.maximum(count, 1)
                kept_sum = np.zeros(batch, dtype=np.float64)
                kept_count = np.zeros(batch, dtype=np.int64)
                for aspect in range(n_aspects):
                    mean = sums[:, 1 + aspect] / safe
                    kept = (count > 0) & (mean > 0)
                    kept_sum = np.where(kept, kept_sum + mean, kept_sum)
                    kept_count += kept
                score = np.where(kept_count > 0, kept_sum / np.maximum(kept_count, 1), 0.0)
                above = score > 0
                dataset_sum = np.where(above, dataset_sum + score, dataset_sum)
                dataset_count += above
            dataset_score = np.where(
                dataset_count > 0, dataset_sum / np.maximum(dataset_count, 1), 0.0
            )
            size = sizes[:, code]
            # A dataset with no weight is absent (adding 0.0 would be the same bits, but a
            # skipped term is what the smaller test set computes).
            total = np.where(size > 0, total + dataset_score * size, total)
        all_sizes = sizes.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            result = total / all_sizes
        result[(all_sizes == 0) | ((items > 0) & (judged == 0))] = np.nan
        return result


def _weighted_item_sums(weights: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """(B, k) int64: per replicate, `columns` (items, k) summed over the items, each item
    counted its sample's weight times. Items of one sample are first added up per sample
    (a DVC sample has many pairs), so the work scales with samples, not items; integer
    sums are exact in any order."""
    if not len(rows):
        return np.zeros((weights.shape[0], columns.shape[1]), dtype=np.int64)
    unique, inverse = np.unique(rows, return_inverse=True)
    per_sample = np.zeros((len(unique), columns.shape[1]), dtype=np.int64)
    np.add.at(per_sample, inverse, columns)
    return weights[:, unique] @ per_sample


def _sums_by_code(weights: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
    """(B, n_codes) int64: per row, the weights summed by code (exact in any order)."""
    out = np.zeros((weights.shape[0], n_codes), dtype=np.int64)
    for code in range(n_codes):
        out[:, code] = weights[:, codes == code].sum(axis=1)
    return out


@dataclass(frozen=True)
class Contributions:
    """Every recorded metric of one scoring run over a test set of `n_samples` samples.

    Metrics that were not computed (a task absent from the test set, the judge not run yet)
    are simply not in `metrics`; `metric_values` reports them as NaN.
    """

    n_samples: int
    metrics: Mapping[str, MetricContributions] = field(default_factory=dict)

    def with_metrics(self, more: Mapping[str, MetricContributions]) -> Contributions:
        """These contributions with `more` added or replaced (e.g. the judge's, later)."""
        unknown = [name for name in more if name not in METRIC_NAMES]
        if unknown:
            raise ValueError(f"not leaderboard metrics: {unknown}")
        return Contributions(self.n_samples, {**self.metrics, **more})


def identity_weights(n_samples: int) -> np.ndarray:
    """The all-ones replicate, shape (1, n_samples): the published values."""
    return np.ones((1, n_samples), dtype=np.int64)


def metric_values(
    contributions: Contributions, weights: np.ndarray | Sequence[Sequence[int]]
) -> dict[str, np.ndarray]:
    """Every leaderboard metric under each row of `weights` ((B, n) or one (n,) vector):
    `{name: (B,) float64}` in `METRIC_NAMES` order, NaN where the metric has no value."""
    batch = as_weights(weights, contributions.n_samples)
    result = {}
    for name in METRIC_NAMES:
        recorded = contributions.metrics.get(name)
        if recorded is None:
            result[name] = np.full(batch.shape[0], np.nan)
        else:
            result[name] = recorded.compute(batch)
    return result


# The stored form (issue 12 point 1): a run's contributions are kept privately, next to its
# result, so the judge's can be added later and the intervals recomputed (another B, a fix)
# without scoring again. An .npz archive of plain arrays, read with allow_pickle=False: a
# stored file can hold nothing but numbers.
_KINDS: dict[str, type] = {
    kind.__name__: kind
    for kind in (PooledMean, DatasetWeightedMean, BalancedAccuracy, JudgePooled, JudgeDense)
}
_FORMAT = 1


def _init_fields(kind: type) -> list[str]:
    return [item.name for item in fields(kind) if item.init]


def to_bytes(contributions: Contributions) -> bytes:
    """The contributions as one .npz archive: `header` (the format, n_samples, each metric's
    kind), then `<metric>/<field>` arrays; integers are stored as 0-d int64 arrays."""
    header = {"format": _FORMAT, "n_samples": contributions.n_samples, "metrics": {}}
    arrays: dict[str, np.ndarray] = {}
    for name, recorded in contributions.metrics.items():
        kind = type(recorded).__name__
        if _KINDS.get(kind) is not type(recorded):
            raise TypeError(f"{name}: contributions of type {kind} cannot be stored")
        header["metrics"][name] = kind
        for field_name in _init_fields(type(recorded)):
            value = getattr(recorded, field_name)
            arrays[f"{name}/{field_name}"] = np.asarray(value)
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def from_bytes(data: bytes) -> Contributions:
    """What `to_bytes` stored; ValueError for anything else."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            header = json.loads(archive["header"].tobytes().decode("utf-8"))
            if header.get("format") != _FORMAT:
                raise ValueError(f"unknown contributions format {header.get('format')!r}")
            metrics: dict[str, MetricContributions] = {}
            for name, kind_name in header["metrics"].items():
                kind = _KINDS[kind_name]
                values = {}
                for field_name in _init_fields(kind):
                    array = archive[f"{name}/{field_name}"]
                    values[field_name] = int(array) if array.ndim == 0 else array
                metrics[name] = kind(**values)
    except (OSError, EOFError, KeyError, TypeError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"not stored contributions: {error}") from None
    return Contributions(int(header["n_samples"]), metrics)
