"""Scoring a checked predictions file: accuracy on the multiple-choice items.

`accuracy` is the share of multiple-choice items whose answer's letter (`read_letter`) is the
item's letter; an unreadable answer counts as wrong and is counted in the result. The
open-ended items get no number here: their category is rated from pairwise battles by the
platform (`open_ended_rating`, docs/clinicalqa.md), so the scorer only counts them.

One aggregation serves the published number and the bootstrap (docs/statistics.md): each
item's `is_multiple_choice` and `correct` (0 or 1, int64, in test-set order) are kept in
`ClinicalQAContributions`, whose `aggregate` reduces them under a (B, n) batch of integer
weights, and the published result is `aggregate` under the all-ones row. The sums are exact
int64 sums and the ratio is one correctly rounded division, so the identity replicate equals
the published value bit for bit and no value depends on the CPU, B or the order of the items.
The weights cover every item (the bootstrap draws the whole test set); an open-ended item's
weight changes nothing, as its `is_multiple_choice` is 0.

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmark.scoring.weights import as_weights

from .letters import read_letter
from .testset import MULTIPLE_CHOICE, OPEN_ENDED, ClinicalQATestSet

ACCURACY = "accuracy"
# The metrics the scorer computes (the rating metric is the platform's, from battles).
METRIC_KEYS = (ACCURACY,)
MAX_UNREADABLE_EXAMPLES = 5
EXAMPLE_CHARS = 80


@dataclass(frozen=True)
class ClinicalQAResult:
    """A scored file: `accuracy` (None for a test set without multiple-choice items) at full
    float precision, and the counts behind it. `unreadable_examples` are (test-set index, id,
    the answer's first 80 characters) of the first few answers with no letter."""

    accuracy: float | None
    multiple_choice: int
    correct: int
    unreadable: int
    open_ended: int
    open_ended_empty: int
    unreadable_examples: tuple[tuple[int, str, str], ...] = ()

    @property
    def metrics(self) -> dict[str, float | None]:
        return {ACCURACY: self.accuracy}

    def as_json(self) -> dict[str, Any]:
        """What the CLI prints: the metric and the counts, no per-item data."""
        return {
            "metrics": self.metrics,
            MULTIPLE_CHOICE: {
                "items": self.multiple_choice,
                "correct": self.correct,
                "unreadable": self.unreadable,
            },
            OPEN_ENDED: {"items": self.open_ended, "empty": self.open_ended_empty},
        }


def score(test_set: ClinicalQATestSet, answers: Sequence[str]) -> ClinicalQAResult:
    """The result of checked `answers` (from `load_predictions`, in test-set order)."""
    return score_with_contributions(test_set, answers)[0]


def score_with_contributions(
    test_set: ClinicalQATestSet, answers: Sequence[str]
) -> tuple[ClinicalQAResult, ClinicalQAContributions]:
    """The result and the per-item contributions it was aggregated from (private: they say
    which items were answered right, so they are stored beside the result, never shown)."""
    if len(answers) != len(test_set):
        raise ValueError(f"{len(answers)} answers for {len(test_set)} test items")
    is_multiple_choice = np.zeros(len(test_set), dtype=np.int64)
    correct = np.zeros(len(test_set), dtype=np.int64)
    unreadable: list[tuple[int, str, str]] = []
    empty = 0
    for item, answer in zip(test_set.items, answers, strict=True):
        if not item.is_multiple_choice:
            empty += not answer.strip()
            continue
        is_multiple_choice[item.index] = 1
        letter = read_letter(answer)
        if letter is None:
            unreadable.append((item.index, item.id, answer[:EXAMPLE_CHARS]))
        correct[item.index] = int(letter == item.answer)
    contributions = ClinicalQAContributions(is_multiple_choice, correct)
    values = contributions.aggregate(np.ones((1, len(test_set)), dtype=np.int64))
    accuracy = float(values[ACCURACY][0])
    result = ClinicalQAResult(
        accuracy=None if np.isnan(accuracy) else accuracy,
        multiple_choice=int(is_multiple_choice.sum()),
        correct=int(correct.sum()),
        unreadable=len(unreadable),
        open_ended=len(test_set) - int(is_multiple_choice.sum()),
        open_ended_empty=empty,
        unreadable_examples=tuple(unreadable[:MAX_UNREADABLE_EXAMPLES]),
    )
    return result, contributions


@dataclass(frozen=True, eq=False)
class ClinicalQAContributions:
    """Each item's `is_multiple_choice` and `correct` (int64, 0 or 1, in test-set order):
    everything accuracy reduces, and nothing else (no answers, no letters)."""

    is_multiple_choice: np.ndarray
    correct: np.ndarray

    def __post_init__(self) -> None:
        kinds = np.ascontiguousarray(self.is_multiple_choice, dtype=np.int64).reshape(-1)
        correct = np.ascontiguousarray(self.correct, dtype=np.int64).reshape(-1)
        if len(kinds) != len(correct):
            raise ValueError(f"{len(kinds)} item kinds for {len(correct)} correct flags")
        if ((kinds != 0) & (kinds != 1)).any() or ((correct != 0) & (correct != 1)).any():
            raise ValueError("item kinds and correct flags must be 0 or 1")
        if (correct > kinds).any():
            raise ValueError("only a multiple-choice item can be answered right")
        kinds.setflags(write=False)
        correct.setflags(write=False)
        object.__setattr__(self, "is_multiple_choice", kinds)
        object.__setattr__(self, "correct", correct)

    @property
    def n_items(self) -> int:
        return len(self.correct)

    def aggregate(self, weights: np.ndarray | Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
        """`{"accuracy": (B,) float64}` under each row of `weights` ((B, n) or one (n,)
        vector): the weighted right answers over the weighted multiple-choice items, both
        exact int64 sums, one division; NaN where a replicate drew no multiple-choice item."""
        batch = as_weights(weights, self.n_items)
        hits = (batch * self.correct).sum(axis=1)
        counted = (batch * self.is_multiple_choice).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy = np.asarray(hits / counted, dtype=np.float64)
        accuracy[counted == 0] = np.nan
        return {ACCURACY: accuracy}

    def metric_values(
        self, weights: np.ndarray | Sequence[Sequence[int]], keys: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        """`aggregate` for `keys` (None: every metric); KeyError names an unknown key."""
        values = self.aggregate(weights)
        if keys is None:
            return values
        unknown = [key for key in keys if key not in values]
        if unknown:
            raise KeyError(f"no contributions for {unknown}; this scorer computes {list(values)}")
        return {key: values[key] for key in keys}

    # Stored beside the result: an .npz of plain arrays, read back with allow_pickle=False, so
    # a stored file can hold nothing but numbers.
    _FORMAT = 1

    def to_bytes(self) -> bytes:
        header = {"format": self._FORMAT, "kind": "clinicalqa"}
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            header=np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8),
            is_multiple_choice=self.is_multiple_choice,
            correct=self.correct,
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> ClinicalQAContributions:
        """What `to_bytes` stored; ValueError for anything else."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                header: Mapping[str, Any] = json.loads(archive["header"].tobytes().decode("utf-8"))
                if header.get("format") != cls._FORMAT or header.get("kind") != "clinicalqa":
                    raise ValueError(f"unknown contributions format {header!r}")
                kinds, correct = archive["is_multiple_choice"], archive["correct"]
                if kinds.dtype != np.int64 or correct.dtype != np.int64:
                    raise ValueError(f"unexpected dtypes {kinds.dtype}, {correct.dtype}")
                return cls(kinds, correct)
        except (OSError, EOFError, KeyError, TypeError, ValueError, zipfile.BadZipFile) as error:
            raise ValueError(f"not stored demo clinical QA contributions: {error}") from None
