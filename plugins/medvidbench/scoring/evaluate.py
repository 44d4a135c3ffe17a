"""Scoring a predictions list against a test set: the seven automatic metrics (spec 4)."""

from __future__ import annotations

from collections.abc import Sequence

from .contributions import Contributions
from .ground_truth import TestSet
from .labels import ActionLabels, load_action_labels
from .metrics.assessment import score_cvs_assessment, score_skill_assessment
from .metrics.common import Item, MetricValue, TaskOutcome
from .metrics.dense_captioning import score_dense_captioning
from .metrics.next_action import NearestClass, score_next_action
from .metrics.stg import score_stg
from .metrics.tal import score_tal
from .result import ScoreResult, UnparsedExample
from .tasks import METRIC_NAMES, Task
from .version import SCORER_VERSION

EXAMPLES_PER_TASK = 3
EXAMPLE_MAX_CHARS = 300
CAPTION_TASKS = (Task.DENSE_CAPTIONING, Task.VIDEO_SUMMARY, Task.REGION_CAPTION)


def evaluate(
    test_set: TestSet,
    predictions: Sequence[str],
    *,
    nearest_class: NearestClass | None = None,
    labels: ActionLabels | None = None,
) -> ScoreResult:
    """Score `predictions` (one text per sample, in test-set order, already checked by
    `load_predictions`). `nearest_class` defaults to the bundled MiniLM encoder, which
    is loaded only if some next-action answer is not an exact class label."""
    result, _ = evaluate_with_contributions(
        test_set, predictions, nearest_class=nearest_class, labels=labels
    )
    return result


def evaluate_with_contributions(
    test_set: TestSet,
    predictions: Sequence[str],
    *,
    nearest_class: NearestClass | None = None,
    labels: ActionLabels | None = None,
) -> tuple[ScoreResult, Contributions]:
    """`evaluate`, and what each of the seven automatic metrics aggregated (issue 12's
    intervals recompute them under bootstrap weights). The same single scoring pass makes
    both, so the contributions cannot disagree with the published result; they stay out of
    the result, which is published, because per-sample values would leak the references."""
    if len(predictions) != len(test_set):
        raise ValueError("predictions must be aligned with the test set; use load_predictions")
    by_task: dict[Task, list[Item]] = {}
    for sample, prediction in zip(test_set.samples, predictions, strict=True):
        if sample.task is not None:
            by_task.setdefault(sample.task, []).append((sample, prediction))

    outcomes: dict[Task, TaskOutcome] = {}
    scorers = {
        Task.TAL: score_tal,
        Task.STG: score_stg,
        Task.DENSE_CAPTIONING: score_dense_captioning,
        Task.SKILL_ASSESSMENT: score_skill_assessment,
        Task.CVS_ASSESSMENT: score_cvs_assessment,
    }
    for task, scorer in scorers.items():
        if task in by_task:
            outcomes[task] = scorer(by_task[task])
    if Task.NEXT_ACTION in by_task:
        outcomes[Task.NEXT_ACTION] = score_next_action(
            by_task[Task.NEXT_ACTION],
            labels or load_action_labels(),
            nearest_class or _default_nearest_class,
        )
    for task in (Task.VIDEO_SUMMARY, Task.REGION_CAPTION):
        if task in by_task:
            # Judged later (step 2); here an answer "parses" when it is not empty.
            outcomes[task] = TaskOutcome(
                metrics={}, parsed=[bool(text.strip()) for _, text in by_task[task]]
            )

    found = {
        name: value for outcome in outcomes.values() for name, value in outcome.metrics.items()
    }
    computed: dict[str, MetricValue] = {name: found[name] for name in METRIC_NAMES if name in found}
    contributions = Contributions(
        len(test_set),
        {
            name: recorded
            for outcome in outcomes.values()
            for name, recorded in outcome.contributions.items()
        },
    )
    result = ScoreResult(
        scorer_version=SCORER_VERSION,
        test_set_checksum=test_set.checksum,
        records=len(test_set),
        metrics={name: computed[name].value if name in computed else None for name in METRIC_NAMES},
        per_dataset={name: value.per_dataset for name, value in computed.items()},
        counts={
            name: {"scored": value.scored, "total": value.total} for name, value in computed.items()
        },
        parsed={
            task.value: {
                "total": sum(flag is not None for flag in outcome.parsed),
                "parsed": sum(flag is True for flag in outcome.parsed),
            }
            for task, outcome in sorted(outcomes.items())
        },
        unparsed_examples={
            task.value: _unparsed_examples(by_task[task], outcome.parsed)
            for task, outcome in sorted(outcomes.items())
            if False in outcome.parsed
        },
    )
    return result, contributions


def _unparsed_examples(
    items: Sequence[Item], parsed: Sequence[bool | None]
) -> list[UnparsedExample]:
    examples = []
    for (sample, text), ok in zip(items, parsed, strict=True):
        if ok is False:
            shown = text if len(text) <= EXAMPLE_MAX_CHARS else text[:EXAMPLE_MAX_CHARS] + "…"
            examples.append(UnparsedExample(row=sample.index, id=sample.id, prediction=shown))
            if len(examples) == EXAMPLES_PER_TASK:
                break
    return examples


def _default_nearest_class(pairs: Sequence[tuple[str, tuple[str, ...]]]) -> list[int]:
    # Imported here: loading the encoder (tokenizer + weights) is only worth it
    # when some answer is not an exact class label.
    from .embedding import default_encoder

    return default_encoder().nearest_candidates(pairs)
