"""Bradley-Terry ratings on the Elo scale with 95% bootstrap intervals (issue 15, point 3).

A battle is (model_a, model_b, winner) with winner "model_a", "model_b" or "tie"; a tie is half
a win for each side. The rating is the maximum-likelihood fit of
P(A beats B) = 1 / (1 + 10 ** ((R_B - R_A) / 400)), centred so the mean rating is 1000 or
anchored so a named model has exactly 1000. The interval is the 95% percentile bootstrap over
battles: B rounds each resample the N battles with replacement and are fitted again.

The model, the existence condition (the fit is finite only when the "beat or tied" graph is
strongly connected), what a bootstrap round without a finite maximum contributes, the quantile
rule and the determinism argument are in docs/ratings.md. The numeric fit is
`bradley_terry.fit_strengths`; this module turns battles into counts, checks existence,
resamples and reads the intervals.

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .bootstrap import DEFAULT_LEVEL, order_statistic_index
from .bradley_terry import fit_strengths, natural_log

WINNERS = ("model_a", "model_b", "tie")
DEFAULT_ROUNDS = 1000
DEFAULT_SEED = 0
CENTRE = 1000.0
# 400 / ln 10: Elo points per unit of log-strength (a literal, so no libm call decides it).
ELO_PER_NAT = 173.71779276130073
# Published ratings and interval ends are rounded to this many decimals (docs/ratings.md).
RATING_DECIMALS = 2
# The bootstrap fits this many (models x models x rounds) cells at a time: about 32 MB per
# array, so 50 models fit all 1,000 rounds in one batch and 500 models 16 at a time. Each
# round is fitted on its own column, so the batch size changes no bit (a test checks it).
FIT_BATCH_CELLS = 4_000_000

# What a model's rating is in one bootstrap round (docs/ratings.md, "Rounds without a finite
# maximum").
FITTED, ABOVE, BELOW, UNDETERMINED = 0, 1, -1, 2
_MAX_NAMED = 10


class Battle(NamedTuple):
    """One judged battle; a plain 3-tuple works the same."""

    model_a: str
    model_b: str
    winner: str


class RatingError(ValueError):
    """The battles cannot be rated as asked; nothing was rated. `problems` are the reasons,
    each a sentence naming the models (or the battle) at fault."""

    def __init__(self, problems: Sequence[str], *, heading: str = "") -> None:
        self.problems = list(problems)
        lines = [heading] if heading else []
        lines += [f"  - {problem}" for problem in self.problems[:_MAX_NAMED]]
        if len(self.problems) > _MAX_NAMED:
            lines.append(f"  ... and {len(self.problems) - _MAX_NAMED} more")
        super().__init__("\n".join(lines) if heading else "; ".join(self.problems))


@dataclass(frozen=True, slots=True)
class ModelRating:
    """One model's row. `ci_low` / `ci_high` are None when that end of the interval is
    unbounded (enough bootstrap rounds put the rating at minus or plus infinity, or left it
    undetermined, to reach the percentile). `unbounded_rounds` counts the rounds in which
    this model's rating was not finite."""

    model: str
    rating: float
    ci_low: float | None
    ci_high: float | None
    battles: int
    unbounded_rounds: int = 0

    def to_dict(self) -> dict[str, float | int | None]:
        """The CLI's and the API's shape: {"rating", "ci_low", "ci_high", "battles"}."""
        return {
            "rating": self.rating,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "battles": self.battles,
        }


@dataclass(frozen=True, slots=True)
class Ratings:
    """Every model's rating, highest first (then by name). `degenerate_rounds` counts the
    bootstrap rounds whose resample had no finite maximum for every model."""

    models: tuple[ModelRating, ...]
    rounds: int
    seed: int
    level: float
    anchor: str | None
    degenerate_rounds: int

    def to_dict(self) -> dict[str, dict[str, dict[str, float | int | None]]]:
        """`{"ratings": {model: {"rating", "ci_low", "ci_high", "battles"}}}`."""
        return {"ratings": {row.model: row.to_dict() for row in self.models}}

    def __getitem__(self, model: str) -> ModelRating:
        for row in self.models:
            if row.model == model:
                return row
        raise KeyError(model)


def _shown(value: object, limit: int = 60) -> str:
    """A value as JSON writes it (a battles file is JSON), cut to `limit` characters with the
    full length noted, so a message never carries a whole file."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def field_problem(field: str, value: object) -> str | None:
    """What is wrong with one field of a battle ("model_a", "model_b" or "winner"), or None."""
    if field == "winner":
        if not isinstance(value, str) or value not in WINNERS:
            return f'expected "model_a", "model_b" or "tie", got {_shown(value)}'
    elif not isinstance(value, str) or not value:
        return f"expected a model name (a non-empty string), got {_shown(value)}"
    return None


def battle_problem(model_a: object, model_b: object, winner: object) -> tuple[str, str] | None:
    """(field, what is wrong) with one battle, or None when it is a valid battle; field is ""
    when the battle as a whole is wrong (a model against itself)."""
    for field, value in (("model_a", model_a), ("model_b", model_b), ("winner", winner)):
        problem = field_problem(field, value)
        if problem:
            return field, problem
    if model_a == model_b:
        return "", f"model_a and model_b are both {_shown(model_a)}: a model cannot battle itself"
    return None


@dataclass(frozen=True)
class Tally:
    """Battles as counts. `kinds` is the sorted array of distinct battle kinds, a kind being
    (lower model index, higher model index, outcome) coded as (low * M + high) * 3 + outcome
    with outcome 0 = the lower-indexed model won, 1 = tie, 2 = the higher-indexed won;
    `battle_kinds` (N,) gives each battle's kind (an index into `kinds`), battles sorted by
    kind, so the battles' order in the input cannot change a resample."""

    models: tuple[str, ...]
    kinds: np.ndarray
    battle_kinds: np.ndarray
    battles: np.ndarray  # (M,) battles each model took part in

    def wins(self, counts: np.ndarray) -> np.ndarray:
        """(M, M, R) doubled wins, wins[i, j, r] = 2 x (i beat j) + (i tied j), from
        `counts` (K, R): how many times each kind was drawn in each round."""
        size = len(self.models)
        pair, outcome = np.divmod(self.kinds, 3)
        low, high = np.divmod(pair, size)
        wins = np.zeros((size * size, counts.shape[1]), dtype=np.int64)
        for kind, low_share, high_share in ((0, 2, 0), (1, 1, 1), (2, 0, 2)):
            chosen = outcome == kind  # one kind per pair and outcome: no repeated index
            if low_share:
                wins[low[chosen] * size + high[chosen]] += low_share * counts[chosen]
            if high_share:
                wins[high[chosen] * size + low[chosen]] += high_share * counts[chosen]
        return wins.reshape(size, size, -1).astype(np.float64)


def tally_battles(battles: Iterable[Battle | tuple[str, str, str]]) -> Tally:
    """The battles as counts; RatingError for an invalid battle (0-based position, field)."""
    rows = [tuple(battle) for battle in battles]
    if not rows:
        raise RatingError(["there are no battles to rate"])
    for position, row in enumerate(rows):
        problem = (
            battle_problem(*row) if len(row) == 3 else ("", "expected (model_a, model_b, winner)")
        )
        if problem:
            field, message = problem
            where = f"battle {position}" + (f", field {field!r}" if field else "")
            raise RatingError([f"{where}: {message}"])
    models = tuple(sorted({row[0] for row in rows} | {row[1] for row in rows}))
    index = {model: number for number, model in enumerate(models)}
    first = np.array([index[row[0]] for row in rows], dtype=np.int64)
    second = np.array([index[row[1]] for row in rows], dtype=np.int64)
    outcome = np.array([WINNERS.index(row[2]) for row in rows], dtype=np.int64)
    outcome = np.where(outcome == 2, 1, outcome * 2)  # a 0, tie 1, b 2
    low, high = np.minimum(first, second), np.maximum(first, second)
    outcome = np.where(first < second, outcome, 2 - outcome)
    codes = np.sort((low * len(models) + high) * 3 + outcome)
    kinds, battle_kinds = np.unique(codes, return_inverse=True)
    battles = np.bincount(first, minlength=len(models)) + np.bincount(second, minlength=len(models))
    return Tally(models, kinds, battle_kinds.astype(np.int64), battles)


# ---- existence ---------------------------------------------------------------------------


def _reach(adjacency: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Models reachable from the `start` mask along adjacency[i, j] (i -> j), start included."""
    reached = start.copy()
    frontier = start
    while frontier.any():
        frontier = adjacency[frontier].any(axis=0) & ~reached
        reached |= frontier
    return reached


def strongly_connected_components(adjacency: np.ndarray) -> list[np.ndarray]:
    """The strongly connected components of the directed graph `adjacency` (M, M) bool, each
    a sorted index array, in order of their smallest model."""
    size = len(adjacency)
    assigned = np.zeros(size, dtype=bool)
    components = []
    for model in range(size):
        if assigned[model]:
            continue
        start = np.zeros(size, dtype=bool)
        start[model] = True
        component = _reach(adjacency, start) & _reach(adjacency.T, start)
        assigned |= component
        components.append(np.flatnonzero(component))
    return components


def _names(models: Sequence[str], indices: Iterable[int]) -> str:
    chosen = [models[index] for index in indices]
    shown = ", ".join(repr(name) for name in chosen[:_MAX_NAMED])
    return shown + (f" and {len(chosen) - _MAX_NAMED} more" if len(chosen) > _MAX_NAMED else "")


def existence_problems(models: Sequence[str], adjacency: np.ndarray) -> list[str]:
    """Why the maximum-likelihood ratings of these battles are not all finite, one sentence
    per group of models at fault ([] when they are). `adjacency[i, j]`: i beat or tied j.

    The maximum is finite exactly when the graph is strongly connected (Zermelo 1929, Ford
    1957): otherwise some group of models won every battle it had with the rest, and moving
    that group up without bound always raises the likelihood. The largest group, when there
    is one, is "the rest"; every other group is named with what makes it unbounded.
    """
    components = strongly_connected_components(adjacency)
    if len(components) == 1:
        return []
    problems = []
    met = adjacency | adjacency.T
    groups = []
    unseen = np.ones(len(models), dtype=bool)
    while unseen.any():
        start = np.zeros(len(models), dtype=bool)
        start[np.flatnonzero(unseen)[0]] = True
        group = _reach(met, start)
        unseen &= ~group
        groups.append(np.flatnonzero(group))
    sizes = sorted((len(group) for group in groups), reverse=True)
    for group in groups:
        if len(groups) > 1 and not (len(group) == sizes[0] and sizes[0] > sizes[1]):
            others = len(models) - len(group)
            problems.append(
                f"{'model' if len(group) == 1 else 'models'} {_names(models, group)} never "
                f"met any of the other {others} model{'s' if others != 1 else ''}: their "
                "ratings cannot be compared with the rest"
            )
    sizes = sorted((len(component) for component in components), reverse=True)
    for component in components:
        if len(component) == sizes[0] and sizes[0] > sizes[1]:
            continue  # the rest
        inside = np.zeros(len(models), dtype=bool)
        inside[component] = True
        beaten_by = np.flatnonzero(adjacency[:, inside].any(axis=1) & ~inside)
        beat = np.flatnonzero(adjacency[inside].any(axis=0) & ~inside)
        one = len(component) == 1
        who = f"model {_names(models, component)}" if one else f"models {_names(models, component)}"
        if beat.size and not beaten_by.size:
            problems.append(
                f"{who} never lost or tied: its rating is unbounded above"
                if one
                else f"{who} never lost to or tied with a model outside them: their ratings "
                "are unbounded above the rest"
            )
        elif beaten_by.size and not beat.size:
            problems.append(
                f"{who} never won or tied: its rating is unbounded below"
                if one
                else f"{who} never beat or tied a model outside them: their ratings are "
                "unbounded below the rest"
            )
        elif beat.size and beaten_by.size:
            problems.append(
                f"{who} lost every battle against {_names(models, beaten_by)} and won every "
                f"battle against {_names(models, beat)}, with no tie between them: "
                f"{'its' if one else 'their'} distances to both are unbounded"
            )
    return problems


def round_status(adjacency: np.ndarray, anchor: int | None) -> np.ndarray:
    """What each model's rating is in a bootstrap round whose graph `adjacency` is not
    strongly connected (docs/ratings.md): FITTED for the models of the main component (the
    anchor's, or without an anchor the one holding more than half of the models), ABOVE
    (+inf) for the models that reach it but that it does not reach, BELOW (-inf) for those
    it reaches, UNDETERMINED for the rest. Without a main component a component that only
    won against the others is ABOVE, one that only lost BELOW, any other UNDETERMINED."""
    size = len(adjacency)
    components = strongly_connected_components(adjacency)
    status = np.full(size, UNDETERMINED, dtype=np.int8)
    main = None
    for component in components:
        if (anchor is not None and anchor in component) or (
            anchor is None and 2 * len(component) > size
        ):
            main = np.zeros(size, dtype=bool)
            main[component] = True
    if main is not None:
        status[_reach(adjacency.T, main)] = ABOVE
        status[_reach(adjacency, main)] = BELOW
        status[main] = FITTED
        return status
    for component in components:
        inside = np.zeros(size, dtype=bool)
        inside[component] = True
        beaten_by = (adjacency[:, inside].any(axis=1) & ~inside).any()
        beat = (adjacency[inside].any(axis=0) & ~inside).any()
        if beat and not beaten_by:
            status[inside] = ABOVE
        elif beaten_by and not beat:
            status[inside] = BELOW
    return status


def _strongly_connected(adjacency: np.ndarray) -> np.ndarray:
    """(R,) bool: whether each round's graph adjacency[:, :, r] is strongly connected (model 0
    reaches every model and every model reaches it), vectorised over the rounds."""

    def everyone_reached(edges: np.ndarray) -> np.ndarray:
        reached = np.zeros(edges.shape[1:], dtype=bool)
        reached[0] = True
        while True:
            grown = reached | (reached[:, None, :] & edges).any(axis=0)
            if (grown == reached).all():
                return reached.all(axis=0)
            reached = grown

    return everyone_reached(adjacency) & everyone_reached(adjacency.transpose(1, 0, 2))


# ---- the ratings -----------------------------------------------------------------------


def _sum_rows(values: np.ndarray) -> np.ndarray:
    """(M, R) -> (R,): the sum over models 0, 1, ..., M - 1 in that order."""
    total = values[0].copy()
    for row in values[1:]:
        total += row
    return total


def _draw_counts(tally: Tally, rounds: range, seed: int) -> np.ndarray:
    """(K, len(rounds)) int64: how many times each battle kind is drawn in each round.

    Round r resamples the N battles with replacement through its own generator, PCG64 seeded
    by SeedSequence(seed, spawn_key=(r,)), integer draws only (`Generator.integers`, Lemire's
    method): round r's resample depends on the seed, r and the battles, not on B. The battles
    are sorted by kind, so a kind's count is the number of draws in its run of positions
    (`np.add.reduceat` of the draws' histogram, integer sums).
    """
    size = len(tally.battle_kinds)
    starts = np.flatnonzero(np.diff(tally.battle_kinds, prepend=-1))
    counts = np.empty((len(rounds), len(tally.kinds)), dtype=np.int64)
    for row, number in enumerate(rounds):
        sequence = np.random.SeedSequence(seed, spawn_key=(number,))
        drawn = np.random.Generator(np.random.PCG64(sequence)).integers(
            0, size, size=size, dtype=np.int64
        )
        counts[row] = np.add.reduceat(np.bincount(drawn, minlength=size), starts)
    return counts.T


def _elo(strengths: np.ndarray) -> np.ndarray:
    return ELO_PER_NAT * natural_log(strengths)


def _round_ratings(
    tally: Tally, counts: np.ndarray, anchor: int | None, full: np.ndarray, start: np.ndarray
) -> np.ndarray:
    """(M, R) ratings of the rounds whose draws are `counts` (K, R): finite for the fitted
    models, +inf / -inf / NaN for the others (docs/ratings.md)."""
    wins = tally.wins(counts)
    adjacency = wins > 0
    size, rounds = len(tally.models), counts.shape[1]
    status = np.zeros((size, rounds), dtype=np.int8)
    for number in np.flatnonzero(~_strongly_connected(adjacency)):
        status[:, number] = round_status(adjacency[:, :, number], anchor)
        outside = status[:, number] != FITTED
        wins[outside, :, number] = 0.0
        wins[:, outside, number] = 0.0
    included = status == FITTED
    strengths, _ = fit_strengths(wins, included, start)
    elo = np.where(included, _elo(strengths), 0.0)
    if anchor is not None:
        ratings = elo - elo[anchor] + CENTRE
    else:
        fitted = included.astype(np.float64)
        count = _sum_rows(fitted)
        safe = np.maximum(count, 1.0)
        # A round that fits every model is centred at 1000; one that fits only its main
        # component keeps that component's mean from the full data (docs/ratings.md).
        offset = np.where(count == size, CENTRE, _sum_rows(fitted * full[:, None]) / safe)
        ratings = elo - _sum_rows(elo) / safe + offset
    infinity = np.where(status == ABOVE, np.inf, -np.inf)
    return np.where(included, ratings, np.where(status == UNDETERMINED, np.nan, infinity))


def full_ratings(tally: Tally, *, anchor: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ratings of all the battles at full precision, (M,) in `tally.models` order, and the
    strengths they come from (each model's p, the strongest 1). RatingError naming the models
    at fault when the maximum is not finite."""
    counts = np.bincount(tally.battle_kinds, minlength=len(tally.kinds))[:, None]
    wins = tally.wins(counts)
    problems = existence_problems(tally.models, wins[:, :, 0] > 0)
    if problems:
        raise RatingError(
            problems,
            heading=(
                "These battles have no finite ratings: a Bradley-Terry rating exists only when "
                "no group of models won every battle it had with the others "
                "(docs/ratings.md):"
            ),
        )
    strengths, _ = fit_strengths(wins, np.ones((len(tally.models), 1), dtype=bool))
    elo = _elo(strengths[:, 0])
    if anchor is not None:
        return elo - elo[anchor] + CENTRE, strengths[:, 0]
    return elo - _sum_rows(elo[:, None])[0] / len(tally.models) + CENTRE, strengths[:, 0]


def replicate_ratings(
    tally: Tally,
    rounds: range,
    *,
    seed: int,
    anchor: int | None,
    full: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:
    """(M, len(rounds)) the ratings of bootstrap rounds `rounds` at full precision: +inf, -inf
    or NaN where a round has no finite rating for a model (docs/ratings.md). `full` and
    `start` are `full_ratings`' two arrays. Round r's column depends on the battles, the seed
    and r only: not on which other rounds are computed, nor on the batch sizes."""
    size = len(tally.models)
    per_batch = max(1, FIT_BATCH_CELLS // (size * size))
    replicates = np.empty((size, len(rounds)))
    for begin in range(0, len(rounds), per_batch):
        batch = rounds[begin : begin + per_batch]
        counts = _draw_counts(tally, batch, seed)
        replicates[:, begin : begin + len(batch)] = _round_ratings(
            tally, counts, anchor, full, start
        )
    return replicates


def _rounded(value: float) -> float | None:
    return round(value, RATING_DECIMALS) if np.isfinite(value) else None


def rate_battles(
    battles: Iterable[Battle | tuple[str, str, str]],
    *,
    anchor: str | None = None,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> Ratings:
    """Every model's Bradley-Terry rating (Elo scale) and its percentile bootstrap interval.

    `anchor` pins that model at 1000 (otherwise the mean rating is 1000); `rounds` is B,
    `seed` seeds the resampling. Raises RatingError, rating nothing, for an invalid battle,
    an unknown anchor, too few rounds for `level`, or battles whose maximum-likelihood
    ratings are not all finite (naming the models at fault and why). Ratings and interval
    ends are rounded to RATING_DECIMALS; the same battles in any order give the same result.
    """
    tally = tally_battles(battles)
    models = tally.models
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise RatingError([f"the seed must be a non-negative integer, not {seed!r}"])
    if isinstance(rounds, bool) or not isinstance(rounds, int):
        raise RatingError([f"the number of rounds must be an integer, not {rounds!r}"])
    try:
        lower = order_statistic_index(rounds, level)
    except ValueError as error:
        raise RatingError([f"cannot read an interval from {rounds!r} rounds: {error}"]) from None
    anchor_index = None
    if anchor is not None:
        if anchor not in models:
            raise RatingError(
                [f"the anchor {anchor!r} is not one of the {len(models)} models of the battles"]
            )
        anchor_index = models.index(anchor)
    full, strengths = full_ratings(tally, anchor=anchor_index)
    replicates = replicate_ratings(
        tally, range(rounds), seed=seed, anchor=anchor_index, full=full, start=strengths
    )
    finite = np.isfinite(replicates)
    lows = np.sort(np.where(np.isnan(replicates), -np.inf, replicates), axis=1)[:, lower]
    highs = np.sort(np.where(np.isnan(replicates), np.inf, replicates), axis=1)[
        :, rounds - 1 - lower
    ]
    rows = [
        ModelRating(
            model=model,
            rating=round(float(full[index]), RATING_DECIMALS),
            ci_low=_rounded(float(lows[index])),
            ci_high=_rounded(float(highs[index])),
            battles=int(tally.battles[index]),
            unbounded_rounds=int((~finite[index]).sum()),
        )
        for index, model in enumerate(models)
    ]
    rows.sort(key=lambda row: (-row.rating, row.model))
    return Ratings(
        models=tuple(rows),
        rounds=rounds,
        seed=seed,
        level=level,
        anchor=anchor,
        degenerate_rounds=int((~finite.all(axis=0)).sum()),
    )
