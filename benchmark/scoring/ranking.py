"""The leaderboard ranking: mean rank across metrics with four tiebreakers (spec 6), or
lexicographic by an ordered list of metrics (issue 14: MedSG-Bench ranks by IoU, then ACC@0.5).

A pure function over plain data. Django code adapts board rows to `Entry` values, calls
`rank_entries`, and writes the returned order back; nothing here knows about boards.

Scope (spec 6: "the union of all entries" vs "each table on its own rows") is the caller's
choice of which entries to pass: pass the union of official and community rows for the About
text's global rank, or one table's rows for a per-table rank. The function ranks exactly the
entries it is given.

The rules, in order (spec 6, About text; details settled from the official app's code):

1. Values are rounded to `policy.decimals` (Python's `round`, half to even on the exact
   binary value) before anything else; the official board stores 3 decimals and ranks on them.
2. Per metric, every entry gets a rank, 1 = best. Equal values share a rank: "min" gives the
   smaller one (1, 1, 3), "dense" the next consecutive one (1, 1, 2). A missing value (None or
   NaN) ranks last, all missing values sharing one rank: as if they were one more value below
   every present value. So "min" gives them (number of present values + 1) and "dense"
   (number of distinct present values + 1). A metric nobody has gives everyone rank 1.
3. Entries are ordered by their mean rank, lower first. Then:
   (1) more metrics won: rank 1 with a present value. A shared first place counts as a win
       for each entry sharing it, as in the official code (`ranks == 1`) and the About text's
       own gloss "won outright (rank 1)";
   (2) lower sum of ranks. Every entry has a rank on every metric, so the sum is the mean
       times the number of metrics: it never separates entries the mean left tied. It is
       kept, in its place, because the spec lists it; it cannot change any order;
   (3) higher sum of normalised scores: each value as a ratio to the best rounded value of its
       metric among the ranked entries (value / max when higher is better, min / value when
       lower is better), a missing value contributing 0, a metric whose best value is 0 or
       negative contributing 0 for everyone (a ratio to it has no meaning). Sums are compared
       at 9 decimals, so float noise from adding in a different order never decides;
   (4) model name, case-insensitively (`str.casefold`), then the exact name, then the entry
       key, so the order is total and independent of the input order.

`policy.method` chooses step 3. The default, "mean_rank", is the above. "lexicographic" orders
by `policy.order` instead: by the first metric's rounded value (its direction respected, a
missing value below every present one), ties broken by the second metric, and so on, then by
the names and key of (4). It sorts on the per-metric ranks of step 2, which order the values
exactly as the values do (equal values share a rank, missing ranks last, under either tie
method), so no float comparison can differ from the rank columns the API shows. Steps 1 and 2
are the same for both methods, and so are `mean_rank`, `wins`, `rank_sum` and `normalized_sum`
in the result: they are facts about the entry that boards store and export, computed as for
"mean_rank" and simply not used for the order.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

TieMethod = Literal["min", "dense"]
RankingMethod = Literal["mean_rank", "lexicographic"]

# Normalised-score sums are compared at this many decimals (rule 3 above).
NORMALIZED_SUM_DECIMALS = 9


@dataclass(frozen=True)
class RankingPolicy:
    """A benchmark's ranking settings (spec 6).

    The default is the About text: shared-smaller ("min") ties, values rounded to 3 decimals,
    ordered by mean rank. The official app's later behaviour is `tie_method="dense"`.
    `decimals=None` ranks on the values as given. `method="lexicographic"` orders by the metric
    keys of `order`, first key first (required, non-empty, no repeats); `order` is ignored
    under "mean_rank". Scope is not a setting of this function: see the module docstring.
    """

    tie_method: TieMethod = "min"
    decimals: int | None = 3
    method: RankingMethod = "mean_rank"
    order: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.tie_method not in ("min", "dense"):
            raise ValueError(f"tie_method must be 'min' or 'dense', not {self.tie_method!r}")
        if self.decimals is not None and (
            isinstance(self.decimals, bool) or not isinstance(self.decimals, int)
        ):
            raise ValueError(f"decimals must be an int or None, not {self.decimals!r}")
        if self.method not in ("mean_rank", "lexicographic"):
            raise ValueError(f"method must be 'mean_rank' or 'lexicographic', not {self.method!r}")
        if isinstance(self.order, str) or not isinstance(self.order, tuple | list):
            raise ValueError(
                f"order must be a tuple of metric keys, not {self.order!r}"
                + (f" (did you mean ({self.order!r},)?)" if isinstance(self.order, str) else "")
            )
        # A list is accepted and stored as a tuple, so the policy stays hashable.
        object.__setattr__(self, "order", tuple(self.order))
        for position, key in enumerate(self.order, start=1):
            if not isinstance(key, str) or not key:
                raise ValueError(
                    f"order: item {position} must be a non-empty metric key, not {key!r}"
                )
        if self.method == "lexicographic":
            if not self.order:
                raise ValueError("the lexicographic method needs an order: at least one metric key")
            repeated = sorted({key for key in self.order if self.order.count(key) > 1})
            if repeated:
                raise ValueError(f"order repeats metric keys {repeated}: {list(self.order)}")


@dataclass(frozen=True)
class MetricSpec:
    """One ranked metric: its key in `Entry.values` and its direction."""

    key: str
    higher_is_better: bool = True


@dataclass(frozen=True)
class Entry:
    """One row to rank. `key` identifies it (a primary key); a metric absent from `values`,
    None or NaN is missing. Keys must be unique and should be mutually orderable (ints or
    strings); otherwise their `repr` orders them in the last tiebreak."""

    key: Hashable
    name: str
    values: Mapping[str, float | None]


class MetricRanks(Mapping[str, int]):
    """A read-only `{metric key: rank}` view of one entry's row of the rank matrix.

    Equal to the plain dict with the same items. Building 10,000 real dicts of ten items
    each cost ~15 ms of the 50 ms budget; this view shares one key index between all rows.
    """

    __slots__ = ("_index", "_ranks")

    def __init__(self, index: Mapping[str, int], ranks: Sequence[int]) -> None:
        self._index = index
        self._ranks = ranks

    def __getitem__(self, key: str) -> int:
        return self._ranks[self._index[key]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return repr(dict(self))


class RankedEntry(NamedTuple):
    """One entry's place on the board and the numbers that decided it.

    `rank` is the 1-based position after all tiebreakers (the board's rank column; never
    shared). `metric_ranks` maps each metric key to the entry's rank on it. `mean_rank`,
    `wins`, `rank_sum` and `normalized_sum` are computed under either method; only
    "mean_rank" orders by them.

    A NamedTuple rather than the package's usual frozen dataclass: a frozen dataclass sets
    each field through `object.__setattr__`, and building 10,000 of them took ~40 ms on the
    shared 2-core machine, most of the 50 ms budget for ranking a 10,000-row board
    (docs/ranking.md). A NamedTuple is as immutable and about eight times cheaper to build.
    """

    key: Hashable
    name: str
    rank: int
    mean_rank: float
    metric_ranks: Mapping[str, int]
    wins: int
    rank_sum: int
    normalized_sum: float


def rank_entries(
    entries: Sequence[Entry],
    metrics: Sequence[MetricSpec],
    policy: RankingPolicy = RankingPolicy(),
) -> list[RankedEntry]:
    """Rank `entries` on `metrics` by the rules of spec 6 (see the module docstring).

    Returns one `RankedEntry` per entry, best first. Raises ValueError on no metrics, a
    repeated metric or entry key, an infinite value, or a lexicographic order naming a key
    that is not one of `metrics`.
    """
    metric_keys = [metric.key for metric in metrics]
    if not metric_keys:
        raise ValueError("at least one metric is needed to rank")
    if len(set(metric_keys)) != len(metric_keys):
        raise ValueError(f"metric keys repeat: {metric_keys}")
    check_order(policy, metric_keys)
    if not entries:
        return []
    if len({entry.key for entry in entries}) != len(entries):
        raise ValueError("entry keys must be unique")

    # One row per metric (metrics x entries), so each metric's values are contiguous.
    # None becomes NaN in a float array: both mean "missing".
    value_maps = [entry.values for entry in entries]
    values = np.array([[row.get(key) for row in value_maps] for key in metric_keys], dtype=float)
    table = rank_table(values, metrics, policy, name_order_positions(entries))

    # Python objects for the result cost more than all the numpy work: put every column in
    # board order first (numpy indexing), convert each to a list once, then zip.
    order = table.order
    ordered = order.tolist()
    key_index = {key: position for position, key in enumerate(metric_keys)}
    return [
        RankedEntry(
            key,
            name,
            position,
            mean,
            MetricRanks(key_index, row),
            won,
            total,
            normalized,
        )
        for key, name, position, mean, row, won, total, normalized in zip(
            [entries[index].key for index in ordered],
            [entries[index].name for index in ordered],
            range(1, len(ordered) + 1),
            table.mean_rank[order].tolist(),
            table.metric_ranks.T[order].tolist(),
            table.wins[order].tolist(),
            table.rank_sum[order].tolist(),
            table.normalized_sum[order].tolist(),
            strict=True,
        )
    ]


class RankTable(NamedTuple):
    """`rank_entries`' result as arrays over the entries in their input order (index i is the
    i-th entry given): for a caller that ranks a large board and stores columns, where 100,000
    `RankedEntry` rows would cost more than the ranking itself (`recompute_board`).

    `order` lists the entries' indexes best first, so entry `order[p]` has rank p + 1 and
    `ranks` is that inverse (1-based). `metric_ranks` is (metrics x entries)."""

    order: np.ndarray
    ranks: np.ndarray
    metric_ranks: np.ndarray
    mean_rank: np.ndarray
    wins: np.ndarray
    rank_sum: np.ndarray
    normalized_sum: np.ndarray


def rank_table(
    values: np.ndarray,
    metrics: Sequence[MetricSpec],
    policy: RankingPolicy,
    name_position: np.ndarray,
) -> RankTable:
    """Rank the entries whose metric values are the columns of `values` (metrics x entries,
    in the order of `metrics`, NaN for missing) by the rules of the module docstring:
    `rank_entries` is this with its checks and one `RankedEntry` per entry.

    `name_position` is each entry's place in the name tiebreak (`name_positions`), unique
    per entry. Raises ValueError on an infinite value or a lexicographic order naming a key
    that is not one of `metrics`.
    """
    metric_keys = [metric.key for metric in metrics]
    check_order(policy, metric_keys)
    values = np.ascontiguousarray(values, dtype=float)
    if np.isinf(values).any():
        raise ValueError("metric values must be finite or missing")
    if policy.decimals is not None:
        values = round_like_python(values, policy.decimals)
    higher_is_better = np.array([metric.higher_is_better for metric in metrics])[:, np.newaxis]

    ranks = metric_ranks(np.where(higher_is_better, -values, values), policy.tie_method)
    rank_sum = ranks.sum(axis=0)
    mean_rank = rank_sum / len(metric_keys)
    wins = ((ranks == 1) & ~np.isnan(values)).sum(axis=0)
    normalized_sum = normalized_scores(values, higher_is_better).sum(axis=0)

    # np.lexsort sorts by the last key first.
    order = np.lexsort(
        (
            name_position,
            *order_statistics(
                policy, metric_keys, ranks, mean_rank, wins, rank_sum, normalized_sum
            ),
        )
    )
    places = np.empty(len(order), dtype=np.int64)
    places[order] = np.arange(1, len(order) + 1)
    return RankTable(order, places, ranks, mean_rank, wins, rank_sum, normalized_sum)


def value_ranks(
    values: np.ndarray,
    metrics: Sequence[MetricSpec],
    tie_method: TieMethod,
    decimals: int | None,
) -> np.ndarray:
    """Rule 2 alone: each entry's rank on each metric (metrics x entries, NaN missing),
    rounded and tied as `rank_entries` ranks them. The boards' best and second-best marks
    are the "dense" ranks of a table's rows (`recompute_board`)."""
    values = np.ascontiguousarray(values, dtype=float)
    if decimals is not None:
        values = round_like_python(values, decimals)
    higher_is_better = np.array([metric.higher_is_better for metric in metrics])[:, np.newaxis]
    return metric_ranks(np.where(higher_is_better, -values, values), tie_method)


def leading_ranks(
    values: np.ndarray,
    metrics: Sequence[MetricSpec],
    decimals: int | None,
    depth: int,
) -> np.ndarray:
    """`value_ranks(values, metrics, "dense", decimals)` where that is at most `depth`, and 0
    elsewhere and for a missing value: the boards' best and second-best marks. Found in
    `depth` passes over each metric's values (the best remaining value, then the next) rather
    than a sort of them: a tenth of the time for a 100,000-row board."""
    values = np.ascontiguousarray(values, dtype=float)
    ranks = np.zeros(values.shape, dtype=np.int64)
    if values.size == 0:
        return ranks
    if decimals is not None:
        values = round_like_python(values, decimals)
    higher_is_better = np.array([metric.higher_is_better for metric in metrics])[:, np.newaxis]
    # Lower is better; a missing value is never among the leading ones.
    remaining = np.where(np.isnan(values), np.inf, np.where(higher_is_better, -values, values))
    for rank in range(1, depth + 1):
        found = (remaining == remaining.min(axis=1, keepdims=True)) & (remaining != np.inf)
        ranks[found] = rank
        remaining = np.where(found, np.inf, remaining)
    return ranks


def check_order(policy: RankingPolicy, metric_keys: Sequence[str]) -> None:
    """Refuse a lexicographic order that names a key not among the ranked metrics."""
    if policy.method != "lexicographic":
        return
    unknown = [key for key in policy.order if key not in metric_keys]
    if unknown:
        raise ValueError(
            f"the ranking order names {unknown}, which {'is' if len(unknown) == 1 else 'are'}"
            f" not among the metrics ranked: {list(metric_keys)}"
        )


def ranking_order_problem(method: str, order: object, metric_keys: Sequence[str]) -> str:
    """What is wrong with a benchmark's ranking method and order ("" if nothing), as a
    sentence for the maintainer who set them (the admin, `update_benchmark`, a definition).

    The order must be a list of distinct metric keys of the benchmark, checked under either
    method so a stale key cannot wait for a switch to "lexicographic"; that method needs at
    least one. The checks are `RankingPolicy`'s and `check_order`'s, so they cannot drift
    from the ranking's.
    """
    if not isinstance(order, list):
        return f'The ranking order must be a list of metric keys, e.g. ["IoU"], not {order!r}.'
    try:
        RankingPolicy(method=method, order=tuple(order))  # type: ignore[arg-type]
        if order:
            check_order(RankingPolicy(method="lexicographic", order=tuple(order)), metric_keys)
    except ValueError as error:
        message = str(error)
        return f"{message[0].upper()}{message[1:]}."
    return ""


def order_statistics(
    policy: RankingPolicy,
    metric_keys: Sequence[str],
    ranks: np.ndarray,
    mean_rank: np.ndarray,
    wins: np.ndarray,
    rank_sum: np.ndarray,
    normalized_sum: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """The sort keys of `policy.method` in `np.lexsort` order (the deciding key last), before
    the name tiebreak: lower sorts first.

    `ranks` is (..., metrics, entries) and the other arrays (..., entries), so a caller with
    a leading axis of replicates gets one order per replicate. Under "lexicographic" the keys
    are the per-metric ranks of `policy.order`, which order the values exactly as the rounded
    values do (see the module docstring); call `check_order` first.
    """
    if policy.method == "lexicographic":
        positions = [list(metric_keys).index(key) for key in policy.order]
        return tuple(ranks[..., position, :] for position in reversed(positions))
    return (
        -np.round(normalized_sum, NORMALIZED_SUM_DECIMALS),
        rank_sum,
        -wins,
        mean_rank,
    )


def lexicographic_costs(
    values: np.ndarray, metrics: Sequence[MetricSpec], policy: RankingPolicy
) -> np.ndarray:
    """One number per entry, lower first, that orders and ties entries exactly as the
    lexicographic method does before the name tiebreak.

    `values` is (..., metrics, entries) in the order of `metrics`, NaN for missing; the result
    is (..., entries). Each order key's value is rounded as `rank_entries` rounds it and ranked
    ("min" ties, missing last: 1 to n + 1), and the ranks are read as the digits of one number
    in base n + 2, first key most significant. Integers, exact in a float64 while
    (n + 2) ** len(order) stays below 2 ** 53 (refused beyond).

    Why: the rank intervals rank every bootstrap replicate with the mean-rank machinery
    (`bootstrap.rank_intervals`). Given this one number as its only metric (lower is better),
    mean rank orders the entries by it, and every tiebreak before the name is equal exactly
    when the number is, so the replicate's order and its tied groups are the lexicographic
    method's.
    """
    if policy.method != "lexicographic":
        raise ValueError("lexicographic_costs needs a lexicographic policy")
    metric_keys = [metric.key for metric in metrics]
    check_order(policy, metric_keys)
    values = np.asarray(values, dtype=float)
    if values.ndim < 2 or values.shape[-2] != len(metric_keys):
        raise ValueError(
            f"values of shape {values.shape}, expected (..., {len(metric_keys)} metrics, entries)"
        )
    if np.isinf(values).any():
        raise ValueError("metric values must be finite or missing")
    entry_count = values.shape[-1]
    base = entry_count + 2
    if float(base) ** len(policy.order) >= 2.0**53:
        raise ValueError(
            f"{entry_count} entries and {len(policy.order)} order keys do not fit one exact cost"
        )
    positions = [metric_keys.index(key) for key in policy.order]
    chosen = values[..., positions, :]
    if policy.decimals is not None:
        chosen = round_like_python(chosen, policy.decimals)
    higher_is_better = np.array([metrics[position].higher_is_better for position in positions])
    costs = np.where(higher_is_better[:, np.newaxis], -chosen, chosen)
    flat = costs.reshape(-1, entry_count)
    ranks = metric_ranks(flat, "min").reshape(chosen.shape)
    total = np.zeros((*values.shape[:-2], entry_count), dtype=np.float64)
    for index in range(len(positions)):
        total = total * base + ranks[..., index, :]
    return total


def round_like_python(values: np.ndarray, decimals: int) -> np.ndarray:
    """`round(value, decimals)` for every element, vectorised.

    `np.round` scales, rounds half to even and scales back, so it misreads values that are
    stored a hair off a half: np.round(0.0025, 3) is 0.002, but 0.0025 is stored as
    0.0025000000000000000520... and round(0.0025, 3) is 0.003. The official app stored its
    values with Python's `round`, so the few elements whose scaled value is within a hair of
    a half are redone with it.
    """
    rounded = np.round(values, decimals)
    scaled = values * 10.0**decimals
    fraction = scaled - np.floor(scaled)
    near_half = np.abs(fraction - 0.5) <= 1e-6 + np.abs(scaled) * 1e-15
    for index in zip(*np.nonzero(near_half), strict=True):
        rounded[index] = round(float(values[index]), decimals)
    return rounded


def metric_ranks(costs: np.ndarray, tie_method: TieMethod) -> np.ndarray:
    """Ranks within each row of a (metrics x entries) array where lower is better, NaN last.

    All NaNs of a row form one group below every value, which gives "min" the rank
    (present + 1) and "dense" the rank (distinct present + 1).
    """
    count = costs.shape[1]
    # Missing becomes +inf, which sorts last and compares equal to itself, so all missing
    # values form one group. The caller has rejected real infinities. (It is also ~4x faster:
    # numpy's vectorised argsort falls back to a slow path on NaN.)
    costs = np.where(np.isnan(costs), np.inf, costs)
    # The sort need not be stable: tied values get the same rank whatever order they land in.
    order = np.argsort(costs, axis=1)
    ordered = np.take_along_axis(costs, order, axis=1)
    starts_group = np.ones(ordered.shape, dtype=bool)
    starts_group[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    if tie_method == "dense":
        ranks_in_order = np.cumsum(starts_group, axis=1)
    else:
        positions = np.arange(1, count + 1)
        ranks_in_order = np.maximum.accumulate(np.where(starts_group, positions, 0), axis=1)
    ranks = np.empty_like(ranks_in_order)
    np.put_along_axis(ranks, order, ranks_in_order, axis=1)
    return ranks


def normalized_scores(values: np.ndarray, higher_is_better: np.ndarray) -> np.ndarray:
    """Each value of a (metrics x entries) array as a ratio to its metric's best value.

    Higher is better: value / max. Lower is better: min / value (the mirror image, also 1 at
    the best and shrinking as the value gets worse). A missing value gives 0; a metric whose
    best value is 0 or negative, or that nobody has, gives 0 to everyone.
    """
    missing = np.isnan(values)
    nobody = missing.all(axis=1, keepdims=True)
    # Filling the gaps with the other extreme keeps them from being the best, without NaN
    # warnings from nanmax / nanmin.
    highest = np.where(missing, -np.inf, values).max(axis=1, keepdims=True)
    lowest = np.where(missing, np.inf, values).min(axis=1, keepdims=True)
    best = np.where(higher_is_better, highest, lowest)
    usable = ~nobody & (best > 0)
    safe_best = np.where(usable, best, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(higher_is_better, values / safe_best, safe_best / values)
    return np.where(usable & ~missing, ratios, 0.0)


def name_order_positions(entries: Sequence[Entry]) -> np.ndarray:
    """Each entry's position in the name order: casefolded name, exact name, then key."""
    return name_positions([entry.name for entry in entries], [entry.key for entry in entries])


def name_positions(names: Sequence[str], keys: Sequence[Hashable]) -> np.ndarray:
    """Each entry's position in the name order (`names[i]` and `keys[i]` are entry i's):
    casefolded name, exact name, then key."""
    count = len(names)
    folded = [(name.casefold(), name) for name in names]
    indexes: Sequence[int] = range(count)
    if len(set(folded)) < count:
        # Equal names (rare: a board's names are unique): put the entries in key order
        # first; the stable sort by name below keeps it among equal names.
        indexes = sorted_by_key(keys, list(indexes))
    by_name = sorted(indexes, key=folded.__getitem__)
    positions = np.empty(count, dtype=np.int64)
    positions[by_name] = np.arange(count)
    return positions


def sorted_by_key(keys: Sequence[Hashable], indexes: list[int]) -> list[int]:
    """`indexes` ordered by their entries' keys (type name first, so 2 and "2" compare);
    keys that do not compare with each other are ordered by their `repr`."""
    try:
        return sorted(indexes, key=lambda i: (type(keys[i]).__name__, keys[i]))
    except TypeError:
        return sorted(indexes, key=lambda i: (type(keys[i]).__name__, repr(keys[i])))
