"""SA_acc and CVS_acc: per-aspect (per-component) accuracy, balanced, then per dataset (spec 4)."""

from __future__ import annotations

from collections.abc import Sequence

from ..contributions import BalancedAccuracy
from ..ground_truth import CvsTarget, SkillTarget
from ..parsers import has_skill_score, parse_cvs, parse_skill_aspects
from ..tasks import CVS_ACC, SA_ACC
from .common import Item, MetricValue, TaskOutcome, mean

# per dataset: part name -> [counted, correct]
Tally = dict[str, dict[str, list[int]]]
# (test-set row, dataset, part name, correct) of every counted part, in counting order
Entries = list[tuple[int, str, str, bool]]


def _count(
    tally: Tally,
    entries: Entries,
    row: int,
    dataset: str,
    reference: dict[str, int],
    predicted: dict[str, int],
) -> int:
    """Count the reference parts the prediction also names, recording each in `entries`;
    return how many."""
    parts = tally.setdefault(dataset, {})
    named = 0
    for name, expected in reference.items():
        if name in predicted:
            counts = parts.setdefault(name, [0, 0])
            counts[0] += 1
            counts[1] += predicted[name] == expected
            entries.append((row, dataset, name, predicted[name] == expected))
            named += 1
    return named


def _balanced(tally: Tally, total: int, scored: int) -> MetricValue:
    """Per dataset, the mean accuracy over parts with a count (0.0 when none was named);
    the metric is the mean over datasets."""
    per_dataset = {
        dataset: mean([correct / counted for counted, correct in parts.values()]) if parts else 0.0
        for dataset, parts in tally.items()
    }
    return MetricValue(
        value=mean(list(per_dataset.values())) if per_dataset else None,
        per_dataset=per_dataset,
        scored=scored,
        total=total,
    )


def score_skill_assessment(items: Sequence[Item]) -> TaskOutcome:
    """A prediction without any "N/5", or a reference whose skill level cannot be read,
    leaves its sample out; aspects the prediction does not name are left out too."""
    tally: Tally = {}
    entries: Entries = []
    parsed = []
    scored = 0
    for sample, text in items:
        assert isinstance(sample.target, SkillTarget)
        predicted = parse_skill_aspects(text)
        parsed.append(bool(predicted))
        # A dataset whose samples are all left out still enters the mean, at 0.0.
        tally.setdefault(sample.dataset, {})
        if not has_skill_score(text) or not sample.target.level_known:
            continue
        scored += (
            _count(tally, entries, sample.index, sample.dataset, sample.target.aspects, predicted)
            > 0
        )
    return TaskOutcome(
        metrics={SA_ACC: _balanced(tally, len(items), scored)},
        parsed=parsed,
        contributions={SA_ACC: _contributions(items, entries)},
    )


def score_cvs_assessment(items: Sequence[Item]) -> TaskOutcome:
    """Every sample enters its dataset; components absent from the prediction are left out."""
    tally: Tally = {}
    entries: Entries = []
    parsed = []
    scored = 0
    for sample, text in items:
        assert isinstance(sample.target, CvsTarget)
        predicted = parse_cvs(text)
        parsed.append(bool(predicted))
        tally.setdefault(sample.dataset, {})
        scored += (
            _count(
                tally, entries, sample.index, sample.dataset, sample.target.components, predicted
            )
            > 0
        )
    return TaskOutcome(
        metrics={CVS_ACC: _balanced(tally, len(items), scored)},
        parsed=parsed,
        contributions={CVS_ACC: _contributions(items, entries)},
    )


def _contributions(items: Sequence[Item], entries: Entries) -> BalancedAccuracy:
    # Every item's dataset enters the mean over datasets, counted parts or not.
    return BalancedAccuracy.build([(sample.index, sample.dataset) for sample, _ in items], entries)
