"""The LLM judge's protocol (spec 5): the rubric, the items to judge, reading a verdict, and
aggregating verdicts into DVC_llm, VS_llm and RC_llm.

Pure Python: nothing here talks to an endpoint. `judging` sends the prompts this module builds
and hands the verdicts back to `aggregate`, and so does the `score` command for files on disk.

What is judged (the official `eval_caption_llm_judge.py` and `eval_dvc.py`):

- video summary and region caption: one item per sample whose prediction and reference are both
  non-empty (as written: a prediction of spaces is judged), the reference being the answer turn;
- dense captioning: the prediction's events, parsed without flattening, each paired at every
  threshold in (0.3, 0.5, 0.7) with the reference segment of highest plain IoU in seconds, if
  that IoU reaches the threshold; every (threshold, pair) is its own item, so a pair found at all
  three thresholds is judged three times. The judged texts are the two captions.

How verdicts become metrics:

- VS_llm, RC_llm: per aspect, the mean over the items judged successfully, pooled over datasets;
  the metric is the mean of the aspect means.
- DVC_llm: per dataset and threshold, the aspect means (0.0 where nothing was judged); the
  threshold's score is the mean of the aspect means above 0; the dataset's score the mean of the
  threshold scores above 0 (0.0 with no pairs); DVC_llm the mean of the dataset scores weighted
  by each dataset's number of dense-captioning samples.

Items whose every attempt failed are left out and counted. Sums run in the official order (the
aspects in rubric order, the datasets in order of first appearance) so that the values are the
same floats the official scorer prints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from benchmark.scoring.rubric import PLACEHOLDERS, JudgeOutcome, RubricError, VerdictError, Verdicts
from benchmark.scoring.rubric import Rubric as GenericRubric

from .contributions import JudgeDense, JudgePooled, MetricContributions
from .ground_truth import DenseCaptionTarget, Sample, TestSet
from .parsers import CaptionEvent, parse_dense_captions
from .result import ScoreResult
from .tasks import DVC_LLM, JUDGE_METRICS, RC_LLM, VS_LLM, Task

DVC_THRESHOLDS = (0.3, 0.5, 0.7)
JUDGED_TASKS: dict[Task, str] = {
    Task.DENSE_CAPTIONING: DVC_LLM,
    Task.VIDEO_SUMMARY: VS_LLM,
    Task.REGION_CAPTION: RC_LLM,
}
RUBRIC_DATA = Path(__file__).resolve().parent / "data" / "medvidbench_judge_rubric.json"


# The generic parts live in .rubric; MedVidBench's code and tests keep importing them here.
__all__ = ["PLACEHOLDERS", "JudgeOutcome", "Rubric", "RubricError", "VerdictError", "Verdicts"]


@dataclass(frozen=True)
class Rubric(GenericRubric):
    """MedVidBench's rubric: a label for each of its three judged tasks is required."""

    required_labels: tuple[str, ...] = field(
        default=tuple(task.value for task in JUDGED_TASKS), compare=False
    )


def load_rubric(template_path: Path, settings_path: Path = RUBRIC_DATA) -> Rubric:
    """A rubric from the files that ship with the scorer (the MedVidBench one by default)."""
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    return Rubric.from_dict(settings, template=template_path.read_text(encoding="utf-8"))


# --- the items ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One prompt to judge: a caption (or a matched event pair) of one sample."""

    metric: str
    task: Task
    sample: int  # the test-set row
    dataset: str
    prediction: str
    reference: str
    threshold: float | None = None  # DVC only
    pair: int | None = None  # DVC only: the pair's position among the sample's pairs there

    @property
    def key(self) -> str:
        """Stable within a test set: what the platform stores the item under."""
        if self.threshold is None:
            return f"{self.metric}/{self.sample}"
        return f"{self.metric}/{self.sample}/{self.threshold}/{self.pair}"

    def prompt(self, rubric: Rubric) -> str:
        return rubric.prompt(self.task, ground_truth=self.reference, prediction=self.prediction)


def build_items(test_set: TestSet, predictions: Sequence[str]) -> list[JudgeItem]:
    """Every item the judge must see for these predictions, in test-set order (spec 5)."""
    if len(predictions) != len(test_set):
        raise ValueError("predictions must be aligned with the test set; use load_predictions")
    items: list[JudgeItem] = []
    for sample, prediction in zip(test_set.samples, predictions, strict=True):
        metric = JUDGED_TASKS.get(sample.task) if sample.task is not None else None
        if metric == DVC_LLM:
            items.extend(_dvc_items(sample, prediction))
        elif metric is not None and prediction and sample.reference:
            items.append(
                JudgeItem(
                    metric, sample.task, sample.index, sample.dataset, prediction, sample.reference
                )
            )
    return items


def plain_iou(a: CaptionEvent, b: CaptionEvent) -> float:
    """IoU of two segments in seconds, union = len1 + len2 - intersection (0.0 if not > 0)."""
    intersection = max(0, min(a.end, b.end) - max(a.start, b.start))
    union = (a.end - a.start) + (b.end - b.start) - intersection
    return intersection / union if union > 0 else 0.0


def match_events(
    predicted: Sequence[CaptionEvent], reference: Sequence[CaptionEvent], threshold: float
) -> list[tuple[CaptionEvent, CaptionEvent]]:
    """Each predicted event with the reference event of highest IoU, if it reaches `threshold`;
    the first reference wins a tie."""
    pairs = []
    for event in predicted:
        best_iou, best = 0.0, None
        for candidate in reference:
            iou = plain_iou(event, candidate)
            if iou >= threshold and iou > best_iou:
                best_iou, best = iou, candidate
        if best is not None:
            pairs.append((event, best))
    return pairs


def _dvc_items(sample: Sample, prediction: str) -> Iterable[JudgeItem]:
    assert isinstance(sample.target, DenseCaptionTarget)
    predicted = parse_dense_captions(prediction)
    reference = [CaptionEvent(seg.start, seg.end, seg.caption) for seg in sample.target.segments]
    if not predicted or not reference:
        return
    for threshold in DVC_THRESHOLDS:
        for position, (event, matched) in enumerate(match_events(predicted, reference, threshold)):
            yield JudgeItem(
                DVC_LLM,
                Task.DENSE_CAPTIONING,
                sample.index,
                sample.dataset,
                prediction=event.caption,
                reference=matched.caption,
                threshold=threshold,
                pair=position,
            )


# --- aggregation -------------------------------------------------------------------------------


def aggregate(
    test_set: TestSet, items: Sequence[JudgeItem], verdicts: Verdicts, rubric: Rubric
) -> JudgeOutcome:
    """The three judge metrics from the verdicts (`verdicts[item.key]`: the aspect scores, or
    None / absent for an item whose attempts all failed)."""
    by_metric: dict[str, list[JudgeItem]] = {name: [] for name in JUDGE_METRICS}
    for item in items:
        by_metric[item.metric].append(item)
    tasks_present = {sample.task for sample in test_set.samples}
    metrics: dict[str, float | None] = {}
    counts: dict[str, dict[str, int]] = {}
    per_dataset: dict[str, dict[str, float]] = {}
    aspects: dict[str, dict[str, float]] = {}
    thresholds: dict[str, dict[str, float]] = {}
    for task, name in JUDGED_TASKS.items():
        metric_items = by_metric[name]
        judged = [item for item in metric_items if verdicts.get(item.key) is not None]
        counts[name] = {
            "items": len(metric_items),
            "judged": len(judged),
            "failed": len(metric_items) - len(judged),
        }
        if task not in tasks_present or (metric_items and not judged):
            metrics[name] = None
            continue
        if name == DVC_LLM:
            metrics[name], per_dataset[name], thresholds = _dvc_value(
                test_set, judged, verdicts, rubric
            )
        else:
            means = _aspect_means(judged, verdicts, rubric) if judged else {}
            aspects[name] = means
            # Nothing to judge (every prediction empty) scores 0.0, as the official scorer's
            # empty average does.
            metrics[name] = _mean_of(means.values()) if judged else 0.0
            per_dataset[name] = {
                dataset: _mean_of(_aspect_means(group, verdicts, rubric).values())
                for dataset, group in _by_dataset(judged).items()
            }
    return JudgeOutcome(metrics, counts, per_dataset, aspects, thresholds)


def judge_contributions(
    test_set: TestSet, items: Sequence[JudgeItem], verdicts: Verdicts, rubric: Rubric
) -> dict[str, MetricContributions]:
    """What `aggregate` reduces, per judged item with its test-set row, for the three judge
    metrics (issue 12): the same items and verdicts, so that the all-ones weights give
    `aggregate`'s values bit for bit. Add them with `Contributions.with_metrics`."""
    task_rows: dict[Task, list[Sample]] = {task: [] for task in JUDGED_TASKS}
    for sample in test_set.samples:
        if sample.task in task_rows:
            task_rows[sample.task].append(sample)
    by_metric: dict[str, list[JudgeItem]] = {name: [] for name in JUDGE_METRICS}
    for item in items:
        by_metric[item.metric].append(item)
    recorded: dict[str, MetricContributions] = {}
    for task, name in JUDGED_TASKS.items():
        metric_items = by_metric[name]
        judged = np.array([verdicts.get(item.key) is not None for item in metric_items], np.int64)
        scores = np.array(
            [
                [(verdicts.get(item.key) or {}).get(aspect, 0) for aspect in rubric.aspects]
                for item in metric_items
            ],
            dtype=np.int64,
        ).reshape(len(metric_items), len(rubric.aspects))
        rows = np.array([item.sample for item in metric_items], dtype=np.int64)
        samples = np.array([sample.index for sample in task_rows[task]], dtype=np.int64)
        if name != DVC_LLM:
            recorded[name] = JudgePooled(samples, rows, judged, scores)
            continue
        datasets: dict[str, int] = {}
        for sample in task_rows[task]:
            datasets.setdefault(sample.dataset, len(datasets))
        recorded[name] = JudgeDense(
            n_datasets=len(datasets),
            n_thresholds=len(DVC_THRESHOLDS),
            task_samples=samples,
            task_datasets=np.array(
                [datasets[sample.dataset] for sample in task_rows[task]], dtype=np.int64
            ),
            item_samples=rows,
            item_datasets=np.array([datasets[item.dataset] for item in metric_items], np.int64),
            item_thresholds=np.array(
                [DVC_THRESHOLDS.index(item.threshold) for item in metric_items], np.int64
            ),
            item_judged=judged,
            item_scores=scores,
        )
    return recorded


def _dvc_value(
    test_set: TestSet, judged: Sequence[JudgeItem], verdicts: Verdicts, rubric: Rubric
) -> tuple[float, dict[str, float], dict[str, dict[str, float]]]:
    sizes: dict[str, int] = {}
    for sample in test_set.samples:
        if sample.task == Task.DENSE_CAPTIONING:
            sizes[sample.dataset] = sizes.get(sample.dataset, 0) + 1
    groups = _by_dataset(judged)
    scores: dict[str, float] = {}
    detail: dict[str, dict[str, float]] = {}
    for dataset in sizes:
        group = groups.get(dataset, [])
        by_threshold = {}
        for threshold in DVC_THRESHOLDS:
            at = [item for item in group if item.threshold == threshold]
            means = _aspect_means(at, verdicts, rubric) if at else {}
            by_threshold[str(threshold)] = _mean_of(v for v in means.values() if v > 0)
        detail[dataset] = by_threshold
        scores[dataset] = _mean_of(v for v in by_threshold.values() if v > 0)
    total = 0.0
    for dataset, size in sizes.items():
        total += scores[dataset] * size
    return total / sum(sizes.values()), scores, detail


def _aspect_means(
    items: Sequence[JudgeItem], verdicts: Verdicts, rubric: Rubric
) -> dict[str, float]:
    """Each aspect's mean over the items (their scores are integers, so the sum is exact)."""
    return {
        aspect: sum(verdicts[item.key][aspect] for item in items) / len(items)  # type: ignore[index]
        for aspect in rubric.aspects
    }


def _mean_of(values: Iterable[float]) -> float:
    """The mean summed plainly left to right, as numpy sums fewer than eight values; 0.0 if
    empty. Not `sum()`: since Python 3.12 it compensates rounding, which can differ from the
    official numpy value in the last bit."""
    total, count = 0.0, 0
    for value in values:
        total += value
        count += 1
    return total / count if count else 0.0


def _by_dataset(items: Iterable[JudgeItem]) -> dict[str, list[JudgeItem]]:
    groups: dict[str, list[JudgeItem]] = {}
    for item in items:
        groups.setdefault(item.dataset, []).append(item)
    return groups


def with_judge(result: ScoreResult, outcome: JudgeOutcome) -> ScoreResult:
    """`result` with the judge metrics filled in (at full precision), their per-dataset values
    and their counts (`scored` = items judged, `total` = items)."""
    metrics = dict(result.metrics)
    per_dataset = dict(result.per_dataset)
    counts = dict(result.counts)
    for name in JUDGE_METRICS:
        metrics[name] = outcome.metrics.get(name)
        if name in outcome.per_dataset:
            per_dataset[name] = outcome.per_dataset[name]
        judge_counts = outcome.counts.get(name)
        if judge_counts and metrics[name] is not None:
            counts[name] = {"scored": judge_counts["judged"], "total": judge_counts["items"]}
    return replace(result, metrics=metrics, per_dataset=per_dataset, counts=counts)
