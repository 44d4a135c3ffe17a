"""DVC_F1: dense video captioning, temporal F1 of event segments (spec 4)."""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from ..contributions import DatasetWeightedMean
from ..ground_truth import DenseCaptionTarget
from ..parsers import CaptionEvent, parse_dense_caption_spans
from ..tasks import DVC_F1
from .common import Item, MetricValue, TaskOutcome, mean

THRESHOLDS = (0.3, 0.5, 0.7)


Span = tuple[float, float]  # an event's (start, end) in seconds


def spans_overlap(spans: Sequence[Span]) -> bool:
    """Whether, in (start, end) order, some span starts before the one before it ends."""
    ordered = sorted(spans)
    return any(nxt[0] < cur[1] for cur, nxt in itertools.pairwise(ordered))


def flatten_overlaps(events: Sequence[CaptionEvent]) -> list[CaptionEvent]:
    """Cut overlapping events at every boundary; each piece keeps the longest covering
    event's caption (the first one listed on ties). Uncovered gaps are dropped.

    A sweep over the sorted boundaries, O(n log n): events enter a heap ordered by (longest,
    first listed) at their start and leave it lazily once they end. Every start and end is a
    boundary, so an event that has started and not ended covers the whole piece; one that is
    empty or reversed (end <= start) never covers any, as in the definition (an event covers
    [a, b) when start < b and end > a). The results equal the direct O(n^2) definition's,
    which the tests compare on random and adversarial inputs.
    """
    points = sorted({event.start for event in events} | {event.end for event in events})
    by_start = sorted(range(len(events)), key=lambda index: events[index].start)
    active: list[tuple[float, int]] = []  # (-length, position in `events`): the top is the longest
    pieces = []
    entered = 0
    for start, end in itertools.pairwise(points):
        while entered < len(by_start) and events[by_start[entered]].start <= start:
            index = by_start[entered]
            heapq.heappush(active, (-(events[index].end - events[index].start), index))
            entered += 1
        while active and events[active[0][1]].end <= start:
            heapq.heappop(active)
        if active:
            pieces.append(CaptionEvent(start, end, events[active[0][1]].caption))
    return pieces


def flattened_spans(spans: Sequence[Span]) -> list[Span]:
    """The (start, end) of each piece `flatten_overlaps` cuts, without choosing its caption,
    which DVC_F1 never reads (issue 16: a third of the metric's time went to captions).

    A piece between two consecutive boundaries is kept when some event covers it, that is,
    when more events have started by its start than have ended by then, counting only the
    events that end after they start (an empty or reversed one covers nothing; for the others,
    ending by the piece's start implies having started by it). The tests compare it with
    `flatten_overlaps` on random and adversarial events."""
    points = sorted({start for start, _ in spans} | {end for _, end in spans})
    starts = sorted(start for start, end in spans if end > start)
    ends = sorted(end for start, end in spans if end > start)
    return [
        (start, end)
        for start, end in itertools.pairwise(points)
        if bisect_right(starts, start) > bisect_right(ends, start)
    ]


def activitynet_iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    """ActivityNet-style segment IoU: union is min(hull, len1 + len2), plus 1e-8."""
    start_a, end_a = min(a), max(a)
    start_b, end_b = min(b), max(b)
    intersection = max(0, min(end_a, end_b) - max(start_a, start_b))
    union = min(max(end_a, end_b) - min(start_a, start_b), end_a - start_a + end_b - start_b)
    return float(intersection) / (union + 1e-8)


def activitynet_iou_matrix(predicted: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """`activitynet_iou` of every (prediction, reference) pair: shape (len(pred), len(ref)).

    The same integer arithmetic and the same float division as the scalar form, so the values
    are bit-identical; only computed once per pair instead of once per threshold.
    """
    pred_start, pred_end = predicted.min(axis=1)[:, None], predicted.max(axis=1)[:, None]
    ref_start, ref_end = reference.min(axis=1)[None, :], reference.max(axis=1)[None, :]
    intersection = np.maximum(0, np.minimum(pred_end, ref_end) - np.maximum(pred_start, ref_start))
    hull = np.maximum(pred_end, ref_end) - np.minimum(pred_start, ref_start)
    union = np.minimum(hull, (pred_end - pred_start) + (ref_end - ref_start))
    return intersection / (union + 1e-8)


def temporal_f1(
    predicted: Sequence[tuple[int, int]], reference: Sequence[tuple[int, int]]
) -> float:
    """F1 of the precision and recall averaged over the IoU thresholds (strictly above).

    Matching is many-to-many: a prediction counts as correct when it overlaps any
    reference above the threshold, and a reference as found when any prediction does.
    """
    try:
        ious = activitynet_iou_matrix(
            np.array(predicted, dtype=np.int64).reshape(-1, 2),
            np.array(reference, dtype=np.int64).reshape(-1, 2),
        )
    except OverflowError:
        # Frame numbers beyond 64 bits (an absurd answer): exact Python integers instead.
        ious = np.array([[activitynet_iou(pred, ref) for ref in reference] for pred in predicted])
    precisions, recalls = [], []
    for threshold in THRESHOLDS:
        above = ious > threshold
        precisions.append(int(above.any(axis=1).sum()) / max(len(predicted), 1))
        recalls.append(int(above.any(axis=0).sum()) / len(reference))
    precision = sum(precisions) / len(precisions)
    recall = sum(recalls) / len(recalls)
    return 2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0


def temporal_f1_many(
    samples: Sequence[tuple[Sequence[tuple[int, int]], Sequence[tuple[int, int]]]],
) -> list[float]:
    """`temporal_f1(predicted, reference)` of each sample, every list non-empty, bit for bit.

    One pass of array operations over the (prediction, reference) pairs of all the samples
    instead of one per sample: a sample has ~25 pairs, too few to pay numpy's per-call cost
    (60 ms of 115 for the demo file's 1,442 samples, issue 16). Each pair's IoU is the same
    int64 arithmetic and float64 division as `activitynet_iou_matrix`'s, element by element;
    the counts are exact integers and the rest is `temporal_f1`'s own Python arithmetic.
    """
    if not samples:
        return []
    pred_counts = np.array([len(predicted) for predicted, _ in samples], dtype=np.int64)
    ref_counts = np.array([len(reference) for _, reference in samples], dtype=np.int64)
    if pred_counts.min() < 1 or ref_counts.min() < 1:
        raise ValueError("every sample needs a prediction and a reference segment")
    try:
        predicted = np.array([seg for p, _ in samples for seg in p], dtype=np.int64).reshape(-1, 2)
        reference = np.array([seg for _, r in samples for seg in r], dtype=np.int64).reshape(-1, 2)
    except OverflowError:
        # Frame numbers beyond 64 bits somewhere: each sample as temporal_f1 treats it.
        return [temporal_f1(p, r) for p, r in samples]
    # Pairs sample by sample, each prediction's pairs together: prediction i of a sample with
    # r references has pairs (i, 0) ... (i, r - 1).
    refs_per_prediction = np.repeat(ref_counts, pred_counts)
    pair_prediction = np.repeat(np.arange(len(predicted)), refs_per_prediction)
    prediction_pairs_start = np.cumsum(refs_per_prediction) - refs_per_prediction
    sample_refs_start = np.repeat(np.cumsum(ref_counts) - ref_counts, pred_counts)
    pair_reference = np.repeat(
        sample_refs_start - prediction_pairs_start, refs_per_prediction
    ) + np.arange(len(pair_prediction))
    pred_start = predicted.min(axis=1)[pair_prediction]
    pred_end = predicted.max(axis=1)[pair_prediction]
    ref_start = reference.min(axis=1)[pair_reference]
    ref_end = reference.max(axis=1)[pair_reference]
    intersection = np.maximum(0, np.minimum(pred_end, ref_end) - np.maximum(pred_start, ref_start))
    hull = np.maximum(pred_end, ref_end) - np.minimum(pred_start, ref_start)
    union = np.minimum(hull, (pred_end - pred_start) + (ref_end - ref_start))
    ious = intersection / (union + 1e-8)

    sample_preds_start = np.cumsum(pred_counts) - pred_counts
    sample_refs = np.cumsum(ref_counts) - ref_counts
    found_predictions, found_references = [], []
    for threshold in THRESHOLDS:
        above = ious > threshold
        prediction_hit = np.logical_or.reduceat(above, prediction_pairs_start)
        reference_hit = np.zeros(len(reference), dtype=bool)
        np.logical_or.at(reference_hit, pair_reference, above)
        found_predictions.append(np.add.reduceat(prediction_hit, sample_preds_start).tolist())
        found_references.append(np.add.reduceat(reference_hit, sample_refs).tolist())
    values = []
    for position, (n_predicted, n_reference) in enumerate(
        zip(pred_counts.tolist(), ref_counts.tolist(), strict=True)
    ):
        # temporal_f1's arithmetic, on the same integers.
        precisions = [found[position] / max(n_predicted, 1) for found in found_predictions]
        recalls = [found[position] / n_reference for found in found_references]
        precision = sum(precisions) / len(precisions)
        recall = sum(recalls) / len(recalls)
        values.append(
            2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0
        )
    return values


def dvc_segments(
    events: Sequence[CaptionEvent], target: DenseCaptionTarget, fps: float
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The predicted (flattened) and reference segments in frames (int(seconds x fps))."""
    return frame_segments([(event.start, event.end) for event in events], target, fps)


def frame_segments(
    spans: Sequence[Span], target: DenseCaptionTarget, fps: float
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """`dvc_segments` of the events with these (start, end) spans, in their order."""
    if spans_overlap(spans):
        spans = flattened_spans(spans)
    predicted = [(int(start * fps), int(end * fps)) for start, end in spans]
    reference = [(int(seg.start * fps), int(seg.end * fps)) for seg in target.segments]
    return predicted, reference


def dvc_sample_f1(
    events: Sequence[CaptionEvent], target: DenseCaptionTarget, fps: float
) -> float | None:
    """The sample's F1 in frames (int(seconds x fps)); None when it is skipped."""
    predicted, reference = dvc_segments(events, target, fps)
    if not predicted or not reference:
        return None
    return temporal_f1(predicted, reference)


def score_dense_captioning(items: Sequence[Item]) -> TaskOutcome:
    """Per dataset, the mean F1 of non-skipped samples (0.0 if none); DVC_F1 is the mean
    over datasets weighted by each dataset's number of dense-captioning samples,
    skipped ones included, as the official scorer weights them."""
    segments = []  # per sample: (predicted, reference), or None when it is skipped
    parsed = []
    for sample, text in items:
        assert isinstance(sample.target, DenseCaptionTarget)
        spans = parse_dense_caption_spans(text)
        parsed.append(bool(spans))
        predicted, reference = frame_segments(spans, sample.target, sample.fps)
        segments.append((predicted, reference) if predicted and reference else None)
    # dvc_sample_f1 of every non-skipped sample, in one pass.
    computed = iter(temporal_f1_many([pair for pair in segments if pair is not None]))
    f1s: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    scored_rows = []  # (row, dataset, F1) of the non-skipped samples, for the contributions
    for (sample, _), pair in zip(items, segments, strict=True):
        sizes[sample.dataset] = sizes.get(sample.dataset, 0) + 1
        scores = f1s.setdefault(sample.dataset, [])
        if pair is not None:
            sample_f1 = next(computed)
            scores.append(sample_f1)
            scored_rows.append((sample.index, sample.dataset, sample_f1))
    per_dataset = {name: mean(scores) if scores else 0.0 for name, scores in f1s.items()}
    total = sum(sizes.values())
    value = sum(per_dataset[name] * sizes[name] for name in sizes) / total if total else None
    metric = MetricValue(
        value=value,
        per_dataset=per_dataset,
        scored=sum(len(scores) for scores in f1s.values()),
        total=len(items),
    )
    contribution = DatasetWeightedMean.build(
        [(sample.index, sample.dataset) for sample, _ in items], scored_rows
    )
    return TaskOutcome(
        metrics={DVC_F1: metric}, parsed=parsed, contributions={DVC_F1: contribution}
    )
