"""TAG_mIoU@0.3 and TAG_mIoU@0.5: temporal action grounding (spec 4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..contributions import PooledMean
from ..ground_truth import TalTarget
from ..parsers import parse_tal
from ..tasks import TAG_MIOU_03, TAG_MIOU_05
from .common import Item, TaskOutcome, pooled_mean

THRESHOLDS = {TAG_MIOU_03: 0.3, TAG_MIOU_05: 0.5}


def hull_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Intersection over the hull of the two segments (0 when the hull is empty)."""
    intersection = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    hull = max(a[1], b[1]) - min(a[0], b[0])
    return intersection / hull if hull > 0 else 0.0


def greedy_matched_iou(
    predicted: Sequence[tuple[float, float]],
    reference: Sequence[tuple[float, float]],
    threshold: float,
) -> float:
    """Mean IoU of the greedy matches, 0 when nothing matched.

    Reference spans are walked in order; each takes the unused prediction with
    the highest IoU (the first one on ties) and keeps it only at IoU >= threshold.
    So a higher threshold can keep fewer, better matches: @0.5 may exceed @0.3.
    """
    used = [False] * len(predicted)
    kept = []
    for ref in reference:
        best_iou, best_index = 0.0, -1
        for index, pred in enumerate(predicted):
            if used[index]:
                continue
            iou = hull_iou(pred, ref)
            if iou > best_iou:
                best_iou, best_index = iou, index
        if best_iou >= threshold:
            used[best_index] = True
            kept.append(best_iou)
    return sum(kept) / len(kept) if kept else 0.0


def score_tal(items: Sequence[Item]) -> TaskOutcome:
    """Every tal sample counts; an unparseable answer scores 0."""
    values: dict[str, dict[str, list[float]]] = {name: {} for name in THRESHOLDS}
    rows: dict[str, list[int]] = {}  # per dataset, the test-set rows beside `values`
    parsed = []
    for sample, prediction in items:
        assert isinstance(sample.target, TalTarget)
        segments = parse_tal(prediction)
        parsed.append(bool(segments))
        # The official scorer compares in frames (seconds x fps, no truncation);
        # float rounding at a threshold boundary depends on it, so do the same.
        fps = sample.fps
        predicted = [(float(s * fps), float(e * fps)) for s, e in segments]
        reference = [(float(s * fps), float(e * fps)) for s, e in sample.target.spans]
        rows.setdefault(sample.dataset, []).append(sample.index)
        for name, threshold in THRESHOLDS.items():
            sample_iou = greedy_matched_iou(predicted, reference, threshold)
            values[name].setdefault(sample.dataset, []).append(sample_iou)
    metrics = {
        name: replace(pooled_mean(per_dataset), total=len(items))
        for name, per_dataset in values.items()
    }
    # The pooled order of `pooled_mean`: grouped by dataset, datasets in order of appearance.
    pooled_rows = [row for dataset_rows in rows.values() for row in dataset_rows]
    contributions = {
        name: PooledMean.build(
            pooled_rows,
            [value for dataset_values in per_dataset.values() for value in dataset_values],
        )
        for name, per_dataset in values.items()
    }
    return TaskOutcome(metrics=metrics, parsed=parsed, contributions=contributions)
