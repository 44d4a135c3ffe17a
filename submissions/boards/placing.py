"""Where each entry goes on its board: `rank_table` over the values' matrix, per scope
group, each category's ranking and each board's best and second-best marks."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from benchmark.enums import RankingScope
from benchmark.models import Benchmark, Category, Metric
from benchmark.scoring.ranking import (
    MetricSpec,
    RankingPolicy,
    leading_ranks,
    name_positions,
    rank_table,
)

from ..selectors import BoardCandidate, metric_specs, ranking_policy


class BoardPlaces(NamedTuple):
    """Where `recompute_board` put each candidate (index i is the i-th candidate): its board,
    its rank and the ranking's other columns, its best and second-best marks and its rank
    in each category, as arrays in the candidates' order."""

    official: np.ndarray  # bool: on the Official board
    rank: np.ndarray
    mean_rank: np.ndarray
    wins: np.ndarray
    rank_sum: np.ndarray
    normalized_sum: np.ndarray
    metric_ranks: np.ndarray  # one row per metric (in the metrics' order), a column per candidate
    highlights: dict[int, dict[str, str]]  # candidate index -> {metric key: "best" | "second"}
    category_ranks: dict[str, np.ndarray]  # category key -> rank per candidate


def placed(
    benchmark: Benchmark,
    metrics: list[Metric],
    categories: list[Category],
    candidates: list[BoardCandidate],
    values: np.ndarray,
) -> BoardPlaces:
    """Rank the candidates as `rank_entries` ranks `ranking_entry` rows (the same values,
    names, keys, policy and groups), through `rank_table` on one matrix of the values, so no
    `Entry` or `RankedEntry` is built per row: each scope group (the union of both boards,
    or each board) ranked on every metric and on each category's, the name tiebreak computed
    once per group; the highlights are each board's "dense" ranks up to 2 (`leading_ranks`). `values`
    is what `ranking_entry` passes to the ranking, one row per metric (`shown_values`)."""
    count = len(candidates)
    keys = [metric.key for metric in metrics]
    index_of = {key: position for position, key in enumerate(keys)}
    names = [row.model_name for row in candidates]
    ids = [row.submission_id for row in candidates]
    official = np.array([row.verified for row in candidates], dtype=bool)
    boards = [np.flatnonzero(official), np.flatnonzero(~official)]
    groups = [np.arange(count)]
    if benchmark.ranking_scope == RankingScope.PER_BOARD:
        groups = boards
    specs, policy = metric_specs(metrics), ranking_policy(benchmark)
    by_category = [
        (category, *category_ranking(category, metrics, policy)) for category in categories
    ]
    rank = np.zeros(count, dtype=np.int64)
    mean_rank = np.zeros(count)
    wins = np.zeros(count, dtype=np.int64)
    rank_sum = np.zeros(count, dtype=np.int64)
    normalized_sum = np.zeros(count)
    ranks = np.zeros((len(keys), count), dtype=np.int64)
    category_ranks = {
        category.key: np.zeros(count, dtype=np.int64)
        for category, category_specs, _ in by_category
        if category_specs  # none of its metrics exists (a definition still being set up)
    }
    for group in groups:
        if len(group) == 0:
            continue  # the ranking refuses nothing to rank on
        names_order = name_positions([names[i] for i in group], [ids[i] for i in group])
        table = rank_table(values[:, group], specs, policy, names_order)
        rank[group] = table.ranks
        mean_rank[group] = table.mean_rank
        wins[group] = table.wins
        rank_sum[group] = table.rank_sum
        normalized_sum[group] = table.normalized_sum
        ranks[:, group] = table.metric_ranks
        for category, category_specs, category_policy in by_category:
            if not category_specs:
                continue
            rows = [index_of[spec.key] for spec in category_specs]
            found = rank_table(
                values[np.ix_(rows, group)], category_specs, category_policy, names_order
            )
            category_ranks[category.key][group] = found.ranks
    highlights: dict[int, dict[str, str]] = {}
    for board in boards:
        if len(board) == 0:
            continue
        leading = leading_ranks(
            values[:, board], specs, benchmark.ranking_decimals, max(HIGHLIGHTS)
        )
        # Each marked (column, metric) in column order, then the metrics' (a missing value
        # is never marked).
        columns, rows = np.nonzero(leading.T)
        for column, row, level in zip(
            board[columns].tolist(), rows.tolist(), leading[rows, columns].tolist(), strict=True
        ):
            highlights.setdefault(column, {})[keys[row]] = HIGHLIGHTS[level]
    return BoardPlaces(
        official=official,
        rank=rank,
        mean_rank=mean_rank,
        wins=wins,
        rank_sum=rank_sum,
        normalized_sum=normalized_sum,
        metric_ranks=ranks,
        highlights=highlights,
        category_ranks=category_ranks,
    )


# What `recompute_board` writes of each placement, in `board_rows`' order. The JSON columns
# are given as JSON text (None for SQL NULL: `insert_rows(as_is=...)`). When the board was
# computed is its totals' (`BoardTotals.computed_at`, which the rows' view shows on each row).


def category_ranking(
    category: Category, metrics: list[Metric], policy: RankingPolicy
) -> tuple[list[MetricSpec], RankingPolicy]:
    """What ranks a category's tab (docs/boards.md, "Categories"): a rating category by its
    rating, highest first (a pending rating last, ties by model name); a metrics category by
    its metrics under the benchmark's policy, a lexicographic order keeping the keys that are
    the category's (mean rank over them when none is). No specs when it has nothing to rank
    on."""
    by_key = {metric.key: metric for metric in metrics}
    keys = [key for key in category.metric_keys if key in by_key]
    if category.ranks_by_rating:
        rating = next((key for key in keys if by_key[key].is_rating), None)
        if rating is None:
            return [], policy
        return [MetricSpec(rating, higher_is_better=True)], RankingPolicy(
            tie_method=policy.tie_method,
            decimals=policy.decimals,
            method="lexicographic",
            order=(rating,),
        )
    specs = metric_specs([by_key[key] for key in keys])
    if policy.method != "lexicographic":
        return specs, policy
    order = tuple(key for key in policy.order if key in keys)
    if not order:
        return specs, replace(policy, method="mean_rank", order=())
    return specs, replace(policy, order=order)


HIGHLIGHTS = {1: "best", 2: "second"}
