"""Pairwise battles (issue 15, docs/ratings.md): who meets whom, on which questions, and what two
verdicts with the answers' positions swapped make of a battle. Plain Python, no Django.

Every choice here is a pure function of its inputs and a seed, by sha256 order rather than a
random generator's stream, so a schedule does not depend on the order entries arrived in, the
batch they were scheduled in, or the machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

FIRST, SECOND, TIE = "first", "second", "tie"
VERDICTS = (FIRST, SECOND, TIE)
# What the rating reads (`benchmark.scoring.ratings`, the `rate_battles` rows).
MODEL_A, MODEL_B = "model_a", "model_b"
WINNERS = (MODEL_A, MODEL_B, TIE)


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).hexdigest()


def battle_winner(first_round: str, swapped_round: str) -> str:
    """The battle's winner from its two verdicts: `first_round` judged model A's answer shown
    first, `swapped_round` judged the same two answers with model B's shown first. Each verdict
    is "first", "second" or "tie" (by position). When both rounds prefer the same model it wins;
    when the preference follows the position, or either round is a tie, it is a tie (MEDIC's
    rule). Returns "model_a", "model_b" or "tie"."""
    for verdict in (first_round, swapped_round):
        if verdict not in VERDICTS:
            raise ValueError(f"a verdict is one of {list(VERDICTS)}, not {verdict!r}")
    if TIE in (first_round, swapped_round):
        return TIE
    a_in_first = first_round == FIRST
    a_in_swapped = swapped_round == SECOND
    if a_in_first and a_in_swapped:
        return MODEL_A
    if not a_in_first and not a_in_swapped:
        return MODEL_B
    return TIE


@dataclass(frozen=True, slots=True)
class Opponent:
    """A model already on the board: its key and its current rating (None: not rated yet)."""

    key: str
    rating: float | None = None


def choose_opponents(newcomer: str, others: Sequence[Opponent], k: int, seed: int = 0) -> list[str]:
    """The `k` models a newcomer meets, never all pairs once there are more than `k`: the
    others, ordered by rating (unrated ones after the rated, then by key), are cut into `k`
    contiguous strata of near-equal size and one is taken from each, the one with the smallest
    sha256 of (seed, newcomer, key). So a newcomer meets strong, middling and weak models alike,
    and the choice depends on nothing but the inputs. Returned in key order."""
    if k < 1:
        raise ValueError(f"a newcomer meets at least one opponent, not {k}")
    pool = sorted(
        (other for other in others if other.key != newcomer),
        key=lambda other: (other.rating is None, -(other.rating or 0.0), other.key),
    )
    keys = [other.key for other in pool]
    if len(set(keys)) != len(keys):
        raise ValueError("each opponent is named once")
    if len(pool) <= k:
        return sorted(keys)
    chosen = []
    for stratum in range(k):
        start, stop = stratum * len(pool) // k, (stratum + 1) * len(pool) // k
        members = keys[start:stop]
        chosen.append(min(members, key=lambda key: _digest(seed, newcomer, key)))
    return sorted(chosen)


def choose_questions(
    model_a: str, model_b: str, questions: Sequence[str], limit: int | None, seed: int = 0
) -> list[str]:
    """The questions one pairing is judged on: all of them (`limit` None), or the `limit` with
    the smallest sha256 of (seed, the pair in key order, question), in the given order. The same
    pair gets the same questions whichever of them is model A."""
    if limit is not None and limit < 1:
        raise ValueError(f"a pairing is judged on at least one question, not {limit}")
    if len(set(questions)) != len(questions):
        raise ValueError("each question is named once")
    if limit is None or limit >= len(questions):
        return list(questions)
    low, high = sorted((model_a, model_b))
    picked = set(sorted(questions, key=lambda key: _digest(seed, low, high, key))[:limit])
    return [key for key in questions if key in picked]


def first_shown(model_a: str, model_b: str, question: str, seed: int = 0) -> str:
    """Which model's answer the first of the two rounds shows first. Both orders are judged,
    so this only decides which round comes first; it is drawn per battle (sha256 of the seed,
    the pair and the question) so that no model is always first in round one."""
    low, high = sorted((model_a, model_b))
    return low if int(_digest(seed, low, high, question), 16) % 2 == 0 else high
