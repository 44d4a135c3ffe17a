"""Boxes: reading one from a model's answer, converting it to pixels, and IoU (issue 14, 2).

A model answers with text ("(12,40),(88,120)", "<box>12 40 88 120</box>", Gemini's JSON) or a
submitter sends a list of four numbers. The box convention is declared by the submission
(`BOX_CONVENTIONS`), never guessed from magnitudes as the official evaluation does, and the box
is converted to xyxy in the item's pixel space (336x336, or the item's `size`).

Nothing is clamped to the image: the official `calculate_iou` does not clamp either, so a box
that runs past the border keeps its whole area in the union, and a box given in the wrong
convention scores what it covers instead of being quietly repaired.

Plain Python + numpy, no Django (a test walks the AST to keep it so).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmark.scoring.json_file import describe

Box = tuple[float, float, float, float]

PIXEL = "pixel"
NORM1000 = "norm1000"
UNIT = "unit"
YXYX_NORM1000 = "yxyx_norm1000"
# The conventions a submission may declare (spec: "Items and predictions").
BOX_CONVENTIONS = (PIXEL, NORM1000, UNIT, YXYX_NORM1000)
CONVENTION_DESCRIPTIONS = {
    PIXEL: "[x1, y1, x2, y2] in the item's pixels (336x336, or the item's size)",
    NORM1000: "[x1, y1, x2, y2] on a 0-1000 scale of the image's width and height",
    UNIT: "[x1, y1, x2, y2] as fractions (0-1) of the image's width and height",
    YXYX_NORM1000: "[y1, x1, y2, x2] on a 0-1000 scale (Gemini's box_2d)",
}

# A number is a whole token: an optional sign, digits with optional decimals (or ".5"), an
# optional exponent. It never starts or ends inside a word or another number: the "2" of
# "box_2d" is preceded by "_" and followed by "d", so it is no number at all, and "1.2.3" holds
# none. A sign counts only where a number could start ("x-5" holds none; "(-5" holds -5).
# Digits are ASCII: Python's \d would also read Arabic-Indic and other digits.
_NUMBER = (
    r"(?:(?<![\w.])[+-]|(?<![\w.+-]))"
    r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:[eE][+-]?[0-9]+)?"
    r"(?!\w|\.[0-9])"
)
# Between two numbers of a box: at least one of whitespace, comma, parenthesis, square bracket.
_SEPARATOR = r"[\s,()\[\]]+"
_BOX_RUN = re.compile(
    f"({_NUMBER}){_SEPARATOR}({_NUMBER}){_SEPARATOR}({_NUMBER}){_SEPARATOR}({_NUMBER})"
)


def list_box_problem(value: Sequence[Any]) -> str | None:
    """What is wrong with a list given as a box, or None when it is 4 finite numbers.

    A list is a box the submitter wrote as data, so a wrong one is a problem in the file (the
    checker names its row), never an unparsed answer scored 0."""
    if len(value) != 4:
        return f"a box needs exactly 4 numbers [x1, y1, x2, y2], got a list of {len(value)}"
    for position, number in enumerate(value):
        if isinstance(number, bool) or not isinstance(number, int | float):
            return f"a box holds 4 numbers, but item {position} is {describe(number)}"
        try:
            finite = math.isfinite(float(number))
        except OverflowError:  # an int past float range
            finite = False
        if not finite:
            return f"a box holds 4 finite numbers, but item {position} is {describe(number)}"
    return None


def parse_box(prediction: str | Sequence[Any]) -> Box | None:
    """The box a prediction gives, in its own convention (not yet converted), or None if a
    text holds none (unparsed: IoU 0, counted in the format report).

    A text's box is the first run of four numbers separated only by whitespace, commas,
    parentheses or square brackets; of several boxes only the first counts. A run whose
    number overflows a float ("1e999") is no box: None. A list must be 4 finite numbers:
    anything else raises ValueError (the predictions checker reports it before scoring)."""
    if isinstance(prediction, str):
        found = _BOX_RUN.search(prediction)
        if found is None:
            return None
        box = tuple(float(number) for number in found.groups())
        if not all(math.isfinite(number) for number in box):
            return None
        return box  # type: ignore[return-value]
    if isinstance(prediction, list | tuple):
        problem = list_box_problem(prediction)
        if problem:
            raise ValueError(problem)
        return tuple(float(number) for number in prediction)  # type: ignore[return-value]
    raise ValueError(f"a prediction is a text or a list of 4 numbers, not {describe(prediction)}")


def to_pixels(box: Sequence[float], convention: str, size: Sequence[float]) -> Box:
    """`box`, written in `convention`, as xyxy in the item's pixel space (`size` = [w, h]).

    One multiplication and one division per coordinate, in the order written (x * W / 1000),
    float64 throughout, the same operations as `to_pixels_array`."""
    width, height = float(size[0]), float(size[1])
    a, b, c, d = (float(value) for value in box)
    if convention == PIXEL:
        return (a, b, c, d)
    if convention == NORM1000:
        return (a * width / 1000.0, b * height / 1000.0, c * width / 1000.0, d * height / 1000.0)
    if convention == UNIT:
        return (a * width, b * height, c * width, d * height)
    if convention == YXYX_NORM1000:
        # [y_min, x_min, y_max, x_max]
        return (b * width / 1000.0, a * height / 1000.0, d * width / 1000.0, c * height / 1000.0)
    raise ValueError(unknown_convention(convention))


def to_pixels_array(boxes: np.ndarray, convention: str, sizes: np.ndarray) -> np.ndarray:
    """`to_pixels` over a (n, 4) float64 array with (n, 2) sizes: the same IEEE operations
    elementwise, so each row equals the scalar result bit for bit (a test checks it)."""
    boxes = np.asarray(boxes, dtype=np.float64)
    width = np.asarray(sizes, dtype=np.float64)[:, 0]
    height = np.asarray(sizes, dtype=np.float64)[:, 1]
    a, b, c, d = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    if convention == PIXEL:
        columns = (a, b, c, d)
    elif convention == NORM1000:
        columns = (a * width / 1000.0, b * height / 1000.0, c * width / 1000.0, d * height / 1000.0)
    elif convention == UNIT:
        columns = (a * width, b * height, c * width, d * height)
    elif convention == YXYX_NORM1000:
        columns = (b * width / 1000.0, a * height / 1000.0, d * width / 1000.0, c * height / 1000.0)
    else:
        raise ValueError(unknown_convention(convention))
    return np.ascontiguousarray(np.stack(columns, axis=1), dtype=np.float64)


def unknown_convention(convention: object) -> str:
    return f"unknown box format {convention!r}; expected one of {', '.join(BOX_CONVENTIONS)}"


def is_degenerate(box: Sequence[float]) -> bool:
    """A box with no area or turned inside out (x2 <= x1 or y2 <= y1): it scores IoU 0."""
    return not (box[2] > box[0] and box[3] > box[1])


def iou(pred: Sequence[float], ref: Sequence[float]) -> float:
    """Plain xyxy IoU, no +1 pixel: inter / (area1 + area2 - inter).

    0 for a degenerate predicted box (x2 <= x1 or y2 <= y1), when the boxes do not overlap
    (touching edges included: an intersection of zero width), and for a zero union, where the
    official code divides by zero. float64, in this fixed order of operations."""
    px1, py1, px2, py2 = (float(value) for value in pred)
    rx1, ry1, rx2, ry2 = (float(value) for value in ref)
    if not (px2 > px1 and py2 > py1):
        return 0.0
    inter_width = min(px2, rx2) - max(px1, rx1)
    inter_height = min(py2, ry2) - max(py1, ry1)
    if not (inter_width > 0.0 and inter_height > 0.0):
        return 0.0
    intersection = inter_width * inter_height
    union = (px2 - px1) * (py2 - py1) + (rx2 - rx1) * (ry2 - ry1) - intersection
    if not union > 0.0:
        return 0.0
    return intersection / union


def iou_array(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """`iou` row by row over two (n, 4) float64 arrays, vectorised with the same operations in
    the same order, so every value equals the scalar one bit for bit (a test checks it)."""
    pred = np.asarray(pred, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: such a row is not scored
        return _iou_rows(pred, ref)


def _iou_rows(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    px1, py1, px2, py2 = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    rx1, ry1, rx2, ry2 = ref[:, 0], ref[:, 1], ref[:, 2], ref[:, 3]
    inter_width = np.minimum(px2, rx2) - np.maximum(px1, rx1)
    inter_height = np.minimum(py2, ry2) - np.maximum(py1, ry1)
    intersection = inter_width * inter_height
    union = (px2 - px1) * (py2 - py1) + (rx2 - rx1) * (ry2 - ry1) - intersection
    scored = (px2 > px1) & (py2 > py1) & (inter_width > 0.0) & (inter_height > 0.0) & (union > 0.0)
    result = np.zeros(len(pred), dtype=np.float64)
    # Divide only where scored: elsewhere the union may be 0 or the inputs inf (no warnings).
    np.divide(intersection, union, out=result, where=scored)
    return result
