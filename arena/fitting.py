"""A rating category's fit from its stored battles (docs/ratings.md, "On the platform"): the
Bradley-Terry ratings of `benchmark.scoring.ratings.rate_battles`, with what the platform does
when some of the battles have no finite rating. Plain Python + numpy, no Django: the service
(`arena.services.rate_category`) adapts the rows to battles by model name and back.

When every entry's maximum-likelihood rating exists, every entry is rated. When some do not
(an entry that never lost or tied, a group that never met the others: the graph "beat or tied"
is not strongly connected), the entries of its **main component** (the one strongly connected
group larger than every other, of two or more models) are rated on the battles among them,
which have a finite maximum, and the others are left "rating pending" with `rate_battles`'
reasons, which name them. No number is made up for them: a battle of theirs counts again as
soon as a loss or a tie joins them to the main component. Without a main component (or with an
anchor outside it, or too few rounds for an interval) every entry is pending, with the reason.

A rating whose bootstrap interval has an unbounded end (enough rounds without a finite maximum
for that model) is published without an interval, and `unbounded` says which end: the board
shows no "+19/-18" for it rather than a made-up bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmark.scoring.ratings import (
    Battle,
    ModelRating,
    RatingError,
    existence_problems,
    rate_battles,
    strongly_connected_components,
    tally_battles,
)


@dataclass(frozen=True)
class CategoryOutcome:
    """What a category's fit came to: the rated models (highest first), the models left
    pending and why, the rated models whose interval has an unbounded end ("above", "below"
    or "both"), and how many battles the published ratings rest on."""

    rated: tuple[ModelRating, ...] = ()
    pending: tuple[str, ...] = ()
    reason: str = ""
    unbounded: dict[str, str] = field(default_factory=dict)
    battles: int = 0


def _adjacency(battles: Sequence[Battle]) -> tuple[tuple[str, ...], np.ndarray]:
    """The models (by name) and the "i beat or tied j" graph of the battles."""
    tally = tally_battles(battles)
    counts = np.bincount(tally.battle_kinds, minlength=len(tally.kinds))[:, None]
    return tally.models, tally.wins(counts)[:, :, 0] > 0


def main_component(battles: Sequence[Battle]) -> frozenset[str]:
    """The strongly connected group of the "beat or tied" graph larger than every other, of two
    or more models (an empty set when there is none)."""
    models, adjacency = _adjacency(battles)
    components = sorted(
        (len(component), [models[index] for index in component])
        for component in strongly_connected_components(adjacency)
    )
    size, names = components[-1]
    if size < 2 or (len(components) > 1 and components[-2][0] == size):
        return frozenset()
    return frozenset(names)


def _unbounded(row: ModelRating) -> str:
    if row.ci_low is None and row.ci_high is None:
        return "both"
    if row.ci_high is None:
        return "above"
    return "below" if row.ci_low is None else ""


def _rated(
    battles: Sequence[Battle], *, anchor: str | None, rounds: int, seed: int
) -> CategoryOutcome:
    ratings = rate_battles(battles, anchor=anchor, rounds=rounds, seed=seed)
    unbounded = {row.model: end for row in ratings.models if (end := _unbounded(row))}
    return CategoryOutcome(rated=ratings.models, unbounded=unbounded, battles=len(battles))


def fit_category(
    battles: Sequence[Battle | tuple[str, str, str]],
    *,
    anchor: str | None = None,
    rounds: int = 1000,
    seed: int = 0,
) -> CategoryOutcome:
    """The category's ratings from its battles (by model name), as the module docstring says:
    everyone rated, the main component rated and the rest pending, or everyone pending."""
    battles = [Battle(*battle) for battle in battles]
    if not battles:
        return CategoryOutcome()
    models, adjacency = _adjacency(battles)
    problems = existence_problems(models, adjacency)
    try:
        if not problems:
            return _rated(battles, anchor=anchor, rounds=rounds, seed=seed)
        main = main_component(battles)
        if not main or (anchor is not None and anchor not in main):
            return CategoryOutcome(
                pending=models,
                reason=_reason(problems, main="" if not main else f"the anchor {anchor!r}"),
            )
        among = [battle for battle in battles if battle.model_a in main and battle.model_b in main]
        outcome = _rated(among, anchor=anchor, rounds=rounds, seed=seed)
    except RatingError as error:
        return CategoryOutcome(pending=models, reason="; ".join(error.problems))
    return CategoryOutcome(
        rated=outcome.rated,
        pending=tuple(model for model in models if model not in main),
        reason="; ".join(problems),
        unbounded=outcome.unbounded,
        battles=outcome.battles,
    )


def _reason(problems: list[str], *, main: str) -> str:
    if main:
        return (
            f"{main} is not in the largest group of models that lost or tied among themselves: "
            + ("; ".join(problems))
        )
    return "no group of models is larger than every other and has a finite rating: " + "; ".join(
        problems
    )
