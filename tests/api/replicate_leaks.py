"""What "no replicate value leaks" means in a test (issue 12): a run's `RunReplicates.values`
(every metric on every bootstrap replicate) and its per-sample `contributions` are private;
only the intervals derived from them are public.

A response leaks when it holds the text of a private number that is not also a public one.
Only numbers that could not match a public one by chance count: their shortest text (`repr`,
as JSON and the CSV print floats) has at least `DIGITS` characters (not 0.5, 1.0 or a
per-sample 0/1 hit, which also appear as mean ranks and rounded values), and they are not a
fraction with a small denominator (an accuracy on a replicate, 9/17, is also some dataset's
accuracy, or a difference of two). What remains (means of IoUs and of per-dataset values, the
IoUs themselves) matching by chance is not credible. The data are seeded, so a pass is not
luck that the next run could lose.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from plugins.medvidbench.scoring.contributions import from_bytes
from submissions.intervals import replicate_values
from submissions.models import Evaluation, RunReplicates

DIGITS = 10
SMALL_DENOMINATOR = 10_000
# A number as JSON and the CSV write one (and as any other text would: digits, a point, an
# exponent); the bodies are split into these tokens, then compared as sets.
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _text(value: float) -> str | None:
    if not math.isfinite(value):
        return None
    text = repr(float(value))
    if len(text) < DIGITS:
        return None
    if float(Fraction(value).limit_denominator(SMALL_DENOMINATOR)) == value:
        return None
    return text


def private_numbers(row: RunReplicates) -> set[str]:
    """The long numbers only `row` holds: its replicate values and per-sample contributions."""
    numbers = [value for values in replicate_values(row).values() for value in values.tolist()]
    for metric in from_bytes(bytes(row.contributions)).metrics.values():
        for field in dataclasses.fields(metric):
            array = getattr(metric, field.name)
            if isinstance(array, np.ndarray) and array.dtype.kind == "f":
                numbers.extend(array.reshape(-1).tolist())
    return {text for value in numbers if (text := _text(value))}


def public_numbers(runs: Iterable[Evaluation]) -> set[str]:
    """What the board, the owner's status and the intervals publish of these runs: their
    metrics, their per-dataset aggregates and their intervals' endpoints."""
    numbers: list[float] = []
    for run in runs:
        numbers.extend(value for value in run.metrics.values() if value is not None)
        for datasets in (run.result.get("per_dataset") or {}).values():
            numbers.extend(value for value in (datasets or {}).values() if value is not None)
        row = RunReplicates.objects.filter(evaluation=run).first()
        if row is not None:
            numbers.extend(end for ends in row.intervals.values() if ends for end in ends)
    return {text for value in numbers if (text := _text(float(value)))}


def replicate_leaks(
    bodies: dict[str, str], runs: list[Evaluation], *, also_public: Iterable[float] = ()
) -> list[tuple[str, str]]:
    """(number, where) for every private number of `runs` found in a body, public ones (and
    `also_public`) aside. Every run must have replicates, and enough long private numbers to
    make the check bite."""
    public = public_numbers(runs) | {text for value in also_public if (text := _text(value))}
    tokens = {where: set(NUMBER.findall(body)) for where, body in bodies.items()}
    leaks = []
    for run in runs:
        private = private_numbers(RunReplicates.objects.get(evaluation=run)) - public
        assert len(private) > 100, f"too few private numbers to check for {run}"
        for where, found in tokens.items():
            leaks.extend((number, where) for number in sorted(private & found))
    return leaks
