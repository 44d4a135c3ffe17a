"""How sure each number is (issue 12): the Django side of `benchmark.scoring.bootstrap`.

A run's per-sample contributions and its metrics on every bootstrap replicate are stored
privately in `RunReplicates` when the run is scored (the automatic metrics) and when the judge
publishes (the judge metrics); this module is their one writer. What is public is derived from
them: each metric's interval (copied to the board by `recompute_board`), each board row's rank
interval and tier (`compute_rank_intervals`, in the background after a recompute) and the
paired comparison of two entries (`compare_entries`). The method is in docs/statistics.md.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from benchmark.enums import RankingScope
from benchmark.models import Benchmark, Metric
from benchmark.plugins import BenchmarkPlugin, plugin_for
from benchmark.plugins import Contributions as PluginContributions
from benchmark.scoring.bootstrap import (
    DEFAULT_LEVEL,
    PairedDifference,
    paired_difference,
    percentile_interval,
    rank_intervals,
    replicate_weights,
    tiers,
)
from benchmark.scoring.ranking import (
    Entry,
    MetricSpec,
    RankingPolicy,
    lexicographic_costs,
)

from .board_state import board_built
from .models import BoardEntry, BoardPlacement, BoardTotals, Evaluation, RunReplicates
from .selectors import metric_specs, ranking_entry, ranking_policy
from .selectors.compare import Comparison
from .snapshots import prepare_snapshot, seal_snapshots

logger = logging.getLogger(__name__)

# Bytes of `RunReplicates.values`: little-endian float64 whatever the machine.
VALUES_DTYPE = np.dtype("<f8")


# -- replicate weights ------------------------------------------------------------------------

# One test-set version's weights are (B, n_samples) int64: 50 MB for MedVidBench at B = 1,000.
# A worker scores one test-set version for months, so it keeps the last two it built.
_WEIGHTS_CACHE_SIZE = 2
_weights_cache: dict[tuple[str, int], np.ndarray] = {}
_weights_lock = threading.Lock()


def replicate_weights_for(
    checksum: str, test_set: Any, replicates: int, plugin: BenchmarkPlugin
) -> np.ndarray:
    """The clustered bootstrap weights of one test-set version (read-only, cached per process):
    the clusters are the plugin's (`replicate_clusters`: a MedVidBench sample's video, a
    MedSG-Bench item alone), the seed is the version's checksum."""
    key = (checksum, replicates)
    with _weights_lock:
        cached = _weights_cache.get(key)
    if cached is not None:
        return cached
    clusters = plugin.replicate_clusters(test_set)
    weights = replicate_weights(clusters, replicates=replicates, seed=checksum)
    weights.setflags(write=False)
    with _weights_lock:
        _weights_cache[key] = weights
        while len(_weights_cache) > _WEIGHTS_CACHE_SIZE:
            _weights_cache.pop(next(iter(_weights_cache)))
    return weights


# -- storing a run's replicates ---------------------------------------------------------------


def _interval(values: np.ndarray) -> list[float] | None:
    interval = percentile_interval(values, DEFAULT_LEVEL)
    return None if interval is None else [interval[0], interval[1]]


def _encode(values: Mapping[str, np.ndarray]) -> tuple[list[str], bytes]:
    keys = list(values)
    matrix = np.stack([np.asarray(values[key], dtype=VALUES_DTYPE) for key in keys])
    return keys, np.ascontiguousarray(matrix, dtype=VALUES_DTYPE).tobytes()


def replicate_values(row: RunReplicates) -> dict[str, np.ndarray]:
    """A stored row's values: metric key -> (B,) float64 (NaN: no value on that replicate)."""
    keys = list(row.metric_keys)
    matrix = np.frombuffer(bytes(row.values), dtype=VALUES_DTYPE)
    matrix = matrix.reshape(len(keys), row.replicates) if keys else matrix.reshape(0, 0)
    return {key: matrix[index] for index, key in enumerate(keys)}


@dataclass(frozen=True)
class ComputedReplicates:
    """A run's replicates, computed outside any transaction, to store with its metrics;
    `contributions` is the plugin's (benchmark/plugins.py: `Contributions`)."""

    checksum: str
    replicates: int
    contributions: PluginContributions
    values: dict[str, np.ndarray]


def compute_replicates(
    checksum: str,
    replicates: int,
    test_set: Any,
    contributions: PluginContributions,
    *,
    plugin: BenchmarkPlugin,
) -> ComputedReplicates:
    """Every metric of a freshly scored run on each of the test-set version's `replicates`
    replicates, from the plugin's contributions (its `score`). About 0.2 s for MedVidBench's
    6,245 samples at B = 1,000, plus 0.3 s the first time a process meets a test-set version
    (bench/intervals.py)."""
    weights = replicate_weights_for(checksum, test_set, replicates, plugin)
    return ComputedReplicates(
        checksum, replicates, contributions, contributions.replicate_values(weights)
    )


def store_replicates(evaluation: Evaluation, computed: ComputedReplicates) -> RunReplicates:
    """Store a run's contributions and replicates, replacing what it had (scoring calls it
    in the transaction that stores the metrics)."""
    keys, encoded = _encode(computed.values)
    row, _ = RunReplicates.objects.update_or_create(
        evaluation=evaluation,
        defaults={
            "test_set_checksum": computed.checksum,
            "replicates": computed.replicates,
            "contributions": computed.contributions.to_bytes(),
            "values": encoded,
            "metric_keys": keys,
            "intervals": {key: _interval(computed.values[key]) for key in keys},
            "computed_at": timezone.now(),
        },
    )
    return row


def add_metric_replicates(
    evaluation: Evaluation,
    test_set: Any,
    more: Mapping[str, Any],
) -> RunReplicates | None:
    """Add (or replace) some metrics' contributions on a run that has replicates (the judge's,
    when it publishes) and recompute those metrics' replicates; the others are kept as they
    are. None when the run has no stored replicates (scored before issue 12: run
    `compute_intervals`)."""
    row = RunReplicates.objects.select_for_update().filter(evaluation=evaluation).first()
    if row is None:
        logger.warning(
            "evaluation %s has no stored replicates; its %s get no interval until "
            "`manage.py compute_intervals` runs",
            evaluation.pk,
            ", ".join(more),
        )
        return None
    plugin = plugin_for(evaluation.submission.benchmark)
    contributions = plugin.contributions_from_bytes(bytes(row.contributions)).with_metrics(more)
    weights = replicate_weights_for(row.test_set_checksum, test_set, row.replicates, plugin)
    values = replicate_values(row)
    added = contributions.replicate_values(weights, keys=list(more))
    values = {key: added.get(key, values.get(key)) for key in [*row.metric_keys, *more]}
    row.metric_keys, row.values = _encode(values)
    row.contributions = contributions.to_bytes()
    row.intervals = {key: _interval(values[key]) for key in row.metric_keys}
    row.computed_at = timezone.now()
    row.save()
    return row


def copy_replicates(
    source: Evaluation, target: Evaluation, *, without: Sequence[str]
) -> RunReplicates | None:
    """Give a copied run (a judge rerun's: `copy_for_rejudge`) the source run's replicates
    with the metrics in `without` pending again (NaN, no contributions, no interval)."""
    row = RunReplicates.objects.filter(evaluation=source).first()
    if row is None:
        return None
    plugin = plugin_for(source.submission.benchmark)
    stored = plugin.contributions_from_bytes(bytes(row.contributions))
    kept = stored.only([key for key in row.metric_keys if key not in without])
    values = {
        key: np.full(row.replicates, np.nan) if key in without else value
        for key, value in replicate_values(row).items()
    }
    keys, encoded = _encode(values)
    copy, _ = RunReplicates.objects.update_or_create(
        evaluation=target,
        defaults={
            "test_set_checksum": row.test_set_checksum,
            "replicates": row.replicates,
            "contributions": kept.to_bytes(),
            "values": encoded,
            "metric_keys": keys,
            "intervals": {key: None if key in without else row.intervals.get(key) for key in keys},
            "computed_at": timezone.now(),
        },
    )
    return copy


# -- rank intervals and tiers -----------------------------------------------------------------

# The one metric a lexicographic board's replicates are ranked on (`_as_one_cost`).
LEXICOGRAPHIC_COST = MetricSpec("lexicographic order", higher_is_better=False)


def _as_one_cost(
    entries: list[Entry],
    specs: list[MetricSpec],
    matrices: list[np.ndarray | None],
    policy: RankingPolicy,
) -> tuple[list[Entry], list[MetricSpec], list[np.ndarray], RankingPolicy]:
    """A lexicographic board's rank-interval inputs restated for `bootstrap.rank_intervals`,
    which ranks each replicate by mean rank: each entry's replicates become one cost per
    replicate (`ranking.lexicographic_costs`, lower first), whose mean-rank order and ties are
    exactly the lexicographic ones. An imported row (no replicates) keeps its values in every
    replicate, as `rank_intervals` would keep them.
    """
    replicates = next(matrix.shape[1] for matrix in matrices if matrix is not None)
    keys = [spec.key for spec in specs]
    stacked = np.stack(
        [
            np.repeat(np.array([entry.values.get(key) for key in keys], dtype=float)[:, None],
                      replicates, axis=1)
            if matrix is None
            else matrix
            for entry, matrix in zip(entries, matrices, strict=True)
        ]
    )  # fmt: skip
    # (entries, metrics, B) -> (B, metrics, entries): one ranking per replicate.
    costs = lexicographic_costs(stacked.transpose(2, 1, 0), specs, policy)
    return (
        [Entry(entry.key, entry.name, {}) for entry in entries],
        [LEXICOGRAPHIC_COST],
        [costs[:, [index]].T for index in range(len(entries))],
        RankingPolicy(tie_method=policy.tie_method, decimals=None),
    )


def compute_rank_intervals(benchmark: Benchmark, *, force: bool = False) -> int:
    """Each board row's 95% rank interval and its tier: the one writer of
    `BoardPlacement.rank_best`, `rank_worst` and `tier` (and it stamps the board's `computed_at`
    again, which keys the cached pages and ETags). Runs in the background after a recompute
    (`task_rank_intervals`); returns the number of rows written.

    The benchmark's ranking (`rank_entries`' rules, its policy and scope) is recomputed on
    each replicate (`benchmark.scoring.bootstrap.rank_intervals`; a lexicographic board
    through one cost per replicate, `_as_one_cost`). A row whose run has no
    replicates of the benchmark's B (an imported row) keeps its values in every replicate.
    Tiers are numbered within each board in board order (`bootstrap.tiers`). When the board
    was recomputed while this ran, nothing is written: the newer recompute queued its own.
    With no replicates on the board at all, every row gets None. Several recomputes in a row
    queue several tasks; all but the first find the rows done and return 0 (unless `force`).
    """
    board = BoardEntry.objects.filter(benchmark=benchmark)
    if not force and board.filter(rank_best__isnull=False).exists():
        return 0  # this version of the board has them (rows are rewritten by each recompute)
    records = list(
        BoardEntry.objects.filter(benchmark=benchmark)
        .order_by("board", "rank")
        .values_list(
            "pk", "submission_id", "evaluation_id", "board", "values",
            "submission__model_name", "computed_at", named=True,
        )
    )  # fmt: skip
    if not records:
        with transaction.atomic():  # an empty board is whole: its snapshots are written
            Benchmark.objects.select_for_update().filter(pk=benchmark.pk).exists()
            seal_snapshots(benchmark, board_built(benchmark.pk))
        return 0
    metrics = list(benchmark.metrics.all())
    keys = [metric.key for metric in metrics]
    # Issue 15: a rating comes from battles, not from the test set's items, so a resample of
    # the items leaves it where it is (its own interval is the battles' bootstrap).
    ratings = {metric.key for metric in metrics if metric.is_rating}
    stored = {
        row.evaluation_id: row
        for row in RunReplicates.objects.filter(
            evaluation_id__in=[record.evaluation_id for record in records],
            replicates=benchmark.bootstrap_replicates,
        ).only("evaluation_id", "replicates", "metric_keys", "values")
    }
    entries = {
        record.pk: ranking_entry(
            record.submission_id, record.submission__model_name, record.values, metrics
        )
        for record in records
    }
    matrices: dict[int, np.ndarray | None] = {}
    for record in records:
        row = stored.get(record.evaluation_id)
        if row is None:
            matrices[record.pk] = None
            continue
        values = replicate_values(row)
        point = entries[record.pk].values
        matrices[record.pk] = np.stack(
            [
                values.get(key, np.full(row.replicates, _held(point.get(key), key, ratings)))
                for key in keys
            ]
        )
    groups = [records]
    if benchmark.ranking_scope == RankingScope.PER_BOARD:
        groups = [[r for r in records if r.board == board] for board in {r.board for r in records}]
    places: dict[int, tuple[int, int] | None] = dict.fromkeys(entries)
    specs, policy = metric_specs(metrics), ranking_policy(benchmark)
    for group in groups:
        if not group or all(matrices[record.pk] is None for record in group):
            continue
        ranked_inputs = (
            [entries[record.pk] for record in group],
            specs,
            [matrices[record.pk] for record in group],
            policy,
        )
        if policy.method == "lexicographic":
            ranked_inputs = _as_one_cost(*ranked_inputs)
        found = rank_intervals(*ranked_inputs)
        for record, interval in zip(group, found, strict=True):
            places[record.pk] = (interval.best, interval.worst)
    tier_of: dict[int, int | None] = dict.fromkeys(entries)
    for board in {record.board for record in records}:
        rows = [record for record in records if record.board == board]  # in rank order
        if all(places[record.pk] is not None for record in rows):
            found_tiers = tiers([places[record.pk] for record in rows])  # type: ignore[misc]
            tier_of.update(zip([record.pk for record in rows], found_tiers, strict=True))
    # The snapshot this build may owe (issue 33), read and encoded before the lock: under it,
    # only stored (`seal_snapshots`), once the build is found to be the one read here.
    overlay = {
        record.submission_id: (*(places[record.pk] or (None, None)), tier_of[record.pk])
        for record in records
    }
    prepared = prepare_snapshot(benchmark, board_built(benchmark.pk), overlay)
    with transaction.atomic():
        Benchmark.objects.select_for_update().filter(pk=benchmark.pk).exists()
        current = dict(
            BoardEntry.objects.filter(benchmark=benchmark).values_list("pk", "computed_at")
        )
        if current != {record.pk: record.computed_at for record in records}:
            return 0  # recomputed meanwhile
        # A new `computed_at` for the whole board (its totals', which every row shows), as a
        # recompute writes it: the cached pages and the API's ETags are keyed by it, so they
        # show the rank intervals at once.
        now = timezone.now()
        rows = [
            (
                None if places[record.pk] is None else places[record.pk][0],
                None if places[record.pk] is None else places[record.pk][1],
                tier_of[record.pk],
                record.pk,
            )
            for record in records
        ]
        _write_rank_intervals(rows)
        # The boards' totals follow their rows (issue 16: the pages read them, not the rows).
        for board in {record.board for record in records}:
            on_board = [record.pk for record in records if record.board == board]
            BoardTotals.objects.filter(benchmark=benchmark, board=board).update(
                with_rank_intervals=sum(places[pk] is not None for pk in on_board),
                with_tiers=sum(tier_of[pk] is not None for pk in on_board),
                computed_at=now,
            )
        # The build is whole now: the snapshots its changes asked for are written with it
        # (issue 33), under the same lock.
        seal_snapshots(benchmark, board_built(benchmark.pk), prepared)
    return len(rows)


def _held(value: float | None, key: str, ratings: set[str]) -> float:
    """What a metric the run's replicates lack is on every replicate: a rating its value on
    the board (NaN while pending), anything else missing (NaN)."""
    return value if key in ratings and value is not None else np.nan


_RANK_FIELDS = ("rank_best", "rank_worst", "tier")


def _write_rank_intervals(rows: list[tuple[Any, ...]]) -> None:
    """One UPDATE per row by primary key, sent with `executemany` (psycopg pipelines it):
    `bulk_update`'s CASE expressions spent 2.9 of 6 s building SQL for 1,000 rows."""
    meta = BoardPlacement._meta
    quote = connection.ops.quote_name
    columns = ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in _RANK_FIELDS)
    statement = f"UPDATE {quote(meta.db_table)} SET {columns} WHERE {quote(meta.pk.column)} = %s"
    with connection.cursor() as cursor:
        cursor.executemany(statement, rows)


def enqueue_rank_intervals(benchmark_id: int, *, force: bool = False) -> None:
    # Imported here, as in enqueue_scoring: django_q reads its settings at import.
    from django_q.tasks import async_task

    async_task(
        "submissions.tasks.task_rank_intervals",
        benchmark_id,
        force,
        q_options={"group": "boards"},
    )


# -- comparing two entries --------------------------------------------------------------------


def compare_runs(benchmark: Benchmark, a: Evaluation, b: Evaluation) -> Comparison:
    """Compare the runs two entries show: `a - b` on every metric of the benchmark, with the
    paired bootstrap interval and two-sided p-value (`bootstrap.paired_difference`).

    The replicates are paired only when both runs were resampled with the same weights (same
    test-set version and the same B); otherwise, or for an imported row, the differences come
    without intervals and `unpaired_reason` says why.
    """
    metrics = list(benchmark.metrics.all())
    rows = {
        row.evaluation_id: row
        for row in RunReplicates.objects.filter(evaluation_id__in=[a.pk, b.pk]).only(
            "evaluation_id", "test_set_checksum", "replicates", "metric_keys", "values"
        )
    }
    row_a, row_b = rows.get(a.pk), rows.get(b.pk)
    reason = _unpaired_reason(a, b, row_a, row_b)
    values_a = replicate_values(row_a) if not reason else {}
    values_b = replicate_values(row_b) if not reason else {}
    differences: dict[str, PairedDifference] = {}
    verdicts: dict[str, str | None] = {}
    for metric in metrics:
        point_a, point_b = _point(a, metric.key), _point(b, metric.key)
        if reason or metric.key not in values_a or metric.key not in values_b:
            difference = None if point_a is None or point_b is None else point_a - point_b
            found = PairedDifference(difference, None, None)
        else:
            found = paired_difference(values_a[metric.key], values_b[metric.key], point_a, point_b)
        differences[metric.key] = found
        verdicts[metric.key] = _verdict(found, higher_is_better=metric.higher_is_better)
    return Comparison(
        a=a,
        b=b,
        metrics=differences,
        per_dataset=_per_dataset_differences(a, b, [metric.key for metric in metrics]),
        paired=not reason,
        unpaired_reason=reason,
        verdicts=verdicts,
        summary=_summary(a, b, verdicts, pending=_pending_metrics(metrics, a, b)),
    )


def _point(run: Evaluation, key: str) -> float | None:
    value = (run.metrics or {}).get(key)
    return None if value is None else float(value)


def _unpaired_reason(
    a: Evaluation, b: Evaluation, row_a: RunReplicates | None, row_b: RunReplicates | None
) -> str:
    for run, row in ((a, row_a), (b, row_b)):
        if row is None:
            name = run.submission.model_name
            if run.test_set_id is None:
                return f"{name} is an imported result without per-sample data: no interval."
            return f"{name} has no replicates yet, so its differences have no interval."
    if row_a is None or row_b is None:  # for the type checker: returned above
        return "no replicates"
    if row_a.test_set_checksum != row_b.test_set_checksum:
        return (
            "The two entries were scored on different test-set versions, so their resamples "
            "cannot be paired: no interval."
        )
    if row_a.replicates != row_b.replicates:
        return (
            f"The two entries' replicates differ in number ({row_a.replicates:,} and "
            f"{row_b.replicates:,}), so they cannot be paired: no interval."
        )
    return ""


def _verdict(found: PairedDifference, *, higher_is_better: bool) -> str | None:
    """ "a" or "b" for the entry the interval shows better (0 outside it), "tied" when the
    interval holds 0, None without an interval."""
    if found.interval is None or found.difference is None:
        return None
    low, high = found.interval
    if low > 0 or high < 0:
        a_higher = low > 0
        return "a" if a_higher == higher_is_better else "b"
    return "tied"


def _metric_count(count: int) -> str:
    return f"{count} metric" + ("" if count == 1 else "s")


def _pending_metrics(metrics: Sequence[Metric], a: Evaluation, b: Evaluation) -> set[str]:
    """The judge metrics either run has no value for yet: pending, not missing."""
    return {
        metric.key
        for metric in metrics
        if metric.is_judge_metric
        and (_point(a, metric.key) is None or _point(b, metric.key) is None)
    }


def _summary(
    a: Evaluation,
    b: Evaluation,
    verdicts: Mapping[str, str | None],
    *,
    pending: set[str] | frozenset[str] = frozenset(),
) -> str:
    """One plain sentence: "A is better on 4 metrics; the test set cannot tell them apart on
    6." (and B's share, the judge metrics still pending, and other metrics without an
    interval, when there are any)."""
    name_a, name_b = a.submission.model_name, b.submission.model_name
    tally = {kind: sum(1 for v in verdicts.values() if v == kind) for kind in ("a", "b", "tied")}
    waiting = sum(1 for key, v in verdicts.items() if v is None and key in pending)
    missing = sum(1 for key, v in verdicts.items() if v is None and key not in pending)
    parts = []
    if tally["a"]:
        parts.append(f"{name_a} is better on {_metric_count(tally['a'])}")
    if tally["b"]:
        parts.append(f"{name_b} is better on {_metric_count(tally['b'])}")
    if tally["tied"]:
        parts.append(f"the test set cannot tell them apart on {_metric_count(tally['tied'])}")
    if waiting:
        verb = "is" if waiting == 1 else "are"
        parts.append(f"{_metric_count(waiting)} {verb} pending (not judged yet)")
    if missing:
        verb = "has" if missing == 1 else "have"
        parts.append(f"{_metric_count(missing)} {verb} no interval to decide on")
    if not parts:
        return "There is nothing to compare."
    sentence = "; ".join(parts)
    return sentence[0].upper() + sentence[1:] + "."


def _per_dataset_differences(
    a: Evaluation, b: Evaluation, keys: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """metric key -> dataset -> a - b, over the datasets either run reports (aggregates: the
    per-dataset breakdown is public). No intervals: the stored replicates are per metric."""
    found_a = (a.result or {}).get("per_dataset") or {}
    found_b = (b.result or {}).get("per_dataset") or {}
    result: dict[str, dict[str, float | None]] = {}
    for key in keys:
        datasets_a, datasets_b = found_a.get(key) or {}, found_b.get(key) or {}
        names = sorted(set(datasets_a) | set(datasets_b))
        if not names:
            continue
        result[key] = {
            name: (
                None
                if datasets_a.get(name) is None or datasets_b.get(name) is None
                else float(datasets_a[name]) - float(datasets_b[name])
            )
            for name in names
        }
    return result


def comparison_as_dict(comparison: Comparison) -> dict[str, Any]:
    """The compare API's body (docs/api.md)."""
    return {
        "a": _side(comparison.a),
        "b": _side(comparison.b),
        "paired": comparison.paired,
        "unpaired_reason": comparison.unpaired_reason,
        "level": DEFAULT_LEVEL,
        "metrics": {
            key: {
                # The two values compared (additive: the compare API's clients read them).
                "value_a": _point(comparison.a, key),
                "value_b": _point(comparison.b, key),
                "difference": found.difference,
                "interval": None if found.interval is None else list(found.interval),
                "p_value": found.p_value,
                "better": comparison.verdicts[key],
            }
            for key, found in comparison.metrics.items()
        },
        "per_dataset": comparison.per_dataset,
        "summary": comparison.summary,
    }


def _side(run: Evaluation) -> dict[str, Any]:
    return {"submission_id": run.submission_id, "model": run.submission.model_name}
