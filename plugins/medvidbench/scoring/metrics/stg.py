"""STG_mIoU: spatio-temporal grounding, box IoU per reference timestamp (spec 4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..contributions import PooledMean
from ..ground_truth import StgTarget
from ..parsers import StgPrediction, parse_stg
from ..tasks import STG_MIOU
from .common import Item, TaskOutcome, pooled_mean

MISSING_BOX = [0, 0, 0, 0]


def _is_box(box: object) -> bool:
    return (
        isinstance(box, list | tuple)
        and len(box) == 4
        and all(isinstance(value, int | float) for value in box)
    )


def aligned_boxes(prediction: StgPrediction, target: StgTarget) -> list[list[float]]:
    """The predicted box for each reference timestamp, in reference order.

    Quirks kept from the official scorer: bare `[[...]]` boxes are keyed by the
    reference's own keys but looked up by the one-decimal form, so integer-like or
    two-decimal reference keys miss; a missing box (all zeros) at any but the
    first timestamp reuses the previous predicted box.
    """
    if prediction.keyed is not None:
        lookup: dict[str, list[float]] = prediction.keyed
    else:
        # Extra boxes beyond the reference timestamps are ignored (zip stops at the shorter).
        keys = [key for key, _ in target.boxes]
        lookup = dict(zip(keys, prediction.bare, strict=False))
    boxes: list[list[float]] = []
    for position, (key, _) in enumerate(target.boxes):
        box = lookup.get(f"{float(key):.1f}", MISSING_BOX)
        if box == MISSING_BOX and position > 0:
            box = boxes[position - 1]
        boxes.append(box)
    return boxes


def box_iou(predicted: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Row-wise IoU of (N, 4) absolute-pixel boxes: no +1 pixel, union floored at 1e-6."""
    width = np.clip(
        np.minimum(predicted[:, 2], reference[:, 2]) - np.maximum(predicted[:, 0], reference[:, 0]),
        0,
        None,
    )
    height = np.clip(
        np.minimum(predicted[:, 3], reference[:, 3]) - np.maximum(predicted[:, 1], reference[:, 1]),
        0,
        None,
    )
    intersection = width * height
    area_predicted = (predicted[:, 2] - predicted[:, 0]) * (predicted[:, 3] - predicted[:, 1])
    area_reference = (reference[:, 2] - reference[:, 0]) * (reference[:, 3] - reference[:, 1])
    union = area_predicted + area_reference - intersection
    return intersection / np.clip(union, 1e-6, None)


def stg_sample_pairs(
    prediction: StgPrediction, target: StgTarget
) -> list[tuple[list[float], list[float]]]:
    """(predicted box, reference box) at each reference timestamp with a valid box."""
    return [
        (box, reference)
        for box, (_, reference) in zip(aligned_boxes(prediction, target), target.boxes, strict=True)
        if reference is not None and _is_box(box)
    ]


def stg_sample_iou(prediction: StgPrediction, target: StgTarget) -> float | None:
    """Mean IoU over the reference timestamps with a valid box; None when there is none."""
    pairs = stg_sample_pairs(prediction, target)
    if not pairs:
        return None
    predicted = np.array([box for box, _ in pairs], dtype=np.float64)
    reference = np.array([ref for _, ref in pairs], dtype=np.float64)
    return float(box_iou(predicted, reference).mean())


def stg_sample_ious(samples: Sequence[list[tuple[list[float], list[float]]]]) -> list[float]:
    """`stg_sample_iou` of each sample from its pairs (each non-empty), bit for bit: the IoUs
    of all the samples' boxes in one `box_iou` (element by element, the same arithmetic),
    then each sample's mean over its own slice, as `stg_sample_iou` takes it (issue 16: a
    dozen numpy calls per sample were most of the metric's time)."""
    if not samples:
        return []
    pairs = [pair for sample in samples for pair in sample]
    ious = box_iou(
        np.array([box for box, _ in pairs], dtype=np.float64),
        np.array([reference for _, reference in pairs], dtype=np.float64),
    )
    ends = np.cumsum([len(sample) for sample in samples]).tolist()
    return [float(ious[start:end].mean()) for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def score_stg(items: Sequence[Item]) -> TaskOutcome:
    """Mean over samples with at least one valid reference box; unparsed answers score 0."""
    parsed = []
    scored = []  # (sample, its pairs) of the samples with a valid box
    for sample, text in items:
        assert isinstance(sample.target, StgTarget)
        prediction = parse_stg(text)
        parsed.append(prediction.parsed)
        pairs = stg_sample_pairs(prediction, sample.target)
        if pairs:
            scored.append((sample, pairs))
    values: dict[str, list[float]] = {}
    rows: dict[str, list[int]] = {}  # per dataset, the test-set rows beside `values`
    ious = stg_sample_ious([pairs for _, pairs in scored])
    for (sample, _), sample_iou in zip(scored, ious, strict=True):
        values.setdefault(sample.dataset, []).append(sample_iou)
        rows.setdefault(sample.dataset, []).append(sample.index)
    # The pooled order of `pooled_mean`: grouped by dataset, datasets in order of appearance.
    contribution = PooledMean.build(
        [row for dataset_rows in rows.values() for row in dataset_rows],
        [value for dataset_values in values.values() for value in dataset_values],
    )
    return TaskOutcome(
        metrics={STG_MIOU: replace(pooled_mean(values), total=len(items))},
        parsed=parsed,
        contributions={STG_MIOU: contribution},
    )
