"""What a board row shows of its run: the runs' metrics decoded, cleaned and overlaid with
the entries' ratings, laid out as the matrix the ranking takes, and its partial judgements."""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

import numpy as np

from benchmark.models import Metric
from core.bulk import decoded_json, numbers_table

from ..models import CategoryRating
from ..selectors import BoardCandidate, metric_value


def decoded_metrics(candidates: list[BoardCandidate]) -> list[dict[str, Any]]:
    """Every run's metrics decoded, in one call for a JSON array of them (a call per row
    cost a fifth more), by msgspec: 0.12 s against json's 0.37 s for 100,000 runs here,
    the same dictionaries, the same doubles (both round each number's text correctly) and
    the same integers, however large (a test compares them; orjson, as fast, turns an
    integer past 64 bits into a float). The text is the database's (jsonb's), so standard
    JSON; what msgspec declines that json takes (a number past a double's range) is
    decoded by json."""
    return decoded_json([row.metrics_json for row in candidates])


def intervals_text(row: BoardCandidate, rated: dict[str, CategoryRating]) -> str | None:
    """The row's own intervals as JSON text where a rating overlays its run's: its run's as
    `RunReplicates` stored them (`{}` without), with a rating's 95% interval as the interval
    of its metric, in the bootstrap's shape ([low, high] or None), so every reader of
    intervals shows it as it shows the others. None without a rating: the row shows its
    run's (the rows' view)."""
    if not rated:
        return None
    stored = row.intervals_json or "{}"
    overlay = {
        key: None if rating.ci_low is None else [rating.ci_low, rating.ci_high]
        for key, rating in rated.items()
    }
    return json.dumps({**json.loads(stored), **overlay})


def shown_values(
    stored: list[dict[str, Any]],
    candidates: list[BoardCandidate],
    ratings: dict[int, dict[str, CategoryRating]],
    metrics: list[Metric],
) -> tuple[list[Shown] | None, np.ndarray]:
    """Each candidate's `Shown` (`_overlaid`) and the matrix of the shown values the ranking
    takes (one row per metric in the metrics' order, a column per candidate, NaN where a
    value is absent). The usual board is checked and laid out in bulk, with no call or
    lookup per row: when no metric is a rating, every stored value is a finite float or
    None (so cleaning changes nothing) and every run stored the same keys in the same order,
    the values come from one array of all of them, and no `Shown` is made (None: every row
    shows its run's values as stored). Otherwise row by row, as `_overlaid`."""
    keys = [metric.key for metric in metrics]
    count = len(stored)
    table = None
    if count and not any(metric.is_rating for metric in metrics):
        table = numbers_table(stored, (float,))
    # A float that is not finite (none in JSON the database wrote) is cleaned to None.
    if table is not None and np.count_nonzero(~np.isfinite(table.matrix)) == table.nulls:
        values = np.full((len(keys), count), np.nan)
        for row, key in enumerate(keys):
            if key in table.columns:
                values[row] = table.matrix[:, table.columns[key]]
        return None, values
    shown = [
        _overlaid(metrics_of, ratings.get(row.submission_id, {}), metrics)
        for row, metrics_of in zip(candidates, stored, strict=True)
    ]
    values = np.array([[row.values.get(key) for row in shown] for key in keys], dtype=float)
    return shown, values.reshape(len(keys), count)


class Shown(NamedTuple):
    """A candidate's metrics as its run stored them and as its row shows them."""

    stored: dict[str, Any]
    values: dict[str, float | None]
    changed: bool  # `values` differs from `stored` (so the stored text cannot be copied)


def _overlaid(
    stored: dict[str, Any], ratings: dict[str, CategoryRating], metrics: list[Metric]
) -> Shown:
    """The values a row shows: the run's, cleaned as every reader cleans them (a number or
    None, so the board can sort on them in the database: `selectors.board_page`), with each
    rating metric taken from the entry's rating (None, pending, until its battles are run)
    rather than from the run: a rating is the platform's, never the scorer's. The run's own
    dictionary when that changes nothing (the usual case: finite floats and None)."""
    values = stored
    for value in stored.values():
        if value is not None and not (type(value) is float and math.isfinite(value)):
            values = {key: metric_value(value) for key, value in stored.items()}
            break
    overlay = {
        metric.key: (metric_value(ratings[metric.key].rating) if metric.key in ratings else None)
        for metric in metrics
        if metric.is_rating
    }
    if overlay:
        values = {**values, **overlay}
    return Shown(stored, values, values is not stored)


def partial_judgements(
    counts: Any, stored: dict[str, Any], judge_metrics: list[str]
) -> dict[str, dict[str, int]]:
    """The judge metrics the run publishes over a subset of their items (accepted by a
    maintainer: `judging.services.accept_partial_judgement`), from its decoded counts."""
    if not isinstance(counts, dict):
        counts = {}
    return {
        name: {"judged": counts[name]["scored"], "items": counts[name]["total"]}
        for name in judge_metrics
        if name in counts
        and stored.get(name) is not None
        and counts[name].get("scored", 0) < counts[name].get("total", 0)
    }


# Highlight classes by dense rank within a board: the best value, then the next distinct one.
