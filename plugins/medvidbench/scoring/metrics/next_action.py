"""NAP_acc: next action prediction, nearest class by exact match or MiniLM embedding (spec 4)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..contributions import PooledMean
from ..labels import ActionLabels
from ..parsers import normalize_action
from ..tasks import NAP_ACC
from .common import Item, MetricValue, TaskOutcome

# [(query, candidates), ...] -> per pair, the index of the candidate most similar to the query
# (cosine similarity of sentence embeddings; the first index on ties). All pairs of a run come
# in one call, so the encoder can embed every query in a few large batches.
NearestClass = Callable[[Sequence[tuple[str, tuple[str, ...]]]], list[int]]


def class_list(dataset: str, question: str, labels: ActionLabels) -> tuple[str, ...] | None:
    """The dataset's fixed list, NurViD's per-procedure list (else the sorted union), or
    None for a dataset without a list (its reference labels are used instead)."""
    if dataset in labels.fixed:
        return labels.fixed[dataset]
    if dataset == "NurViD":
        procedure = labels.nurvid_procedure(question)
        return labels.nurvid_by_procedure[procedure] if procedure else labels.nurvid_union
    return None


def score_next_action(
    items: Sequence[Item], labels: ActionLabels, nearest_class: NearestClass
) -> TaskOutcome:
    """Accuracy over counted samples; a reference label outside its list is skipped.

    A prediction that is exactly a class (after strip and, for CoPESD, the legacy
    mapping) takes it; any other text, even empty, takes the class whose sentence
    embedding is most similar. "Parsed" here means "answered with an exact label";
    skipped samples are neither parsed nor unparsed.
    The class lists hold no repeated label, so comparing labels equals the official
    comparison of class indices.
    """
    normalized = [
        (
            normalize_action(text, sample.dataset, labels.copesd_legacy),
            normalize_action(sample.reference, sample.dataset, labels.copesd_legacy),
            class_list(sample.dataset, sample.question, labels),
        )
        for sample, text in items
    ]
    reference_labels: dict[str, set[str]] = {}
    for (sample, _), (_, reference, classes) in zip(items, normalized, strict=True):
        if classes is None and reference:
            reference_labels.setdefault(sample.dataset, set()).add(reference)
    free_lists = {name: tuple(sorted(refs)) for name, refs in reference_labels.items()}

    rows = []  # (dataset, prediction, reference, classes) of each counted sample
    counted_rows = []  # their test-set rows
    parsed = []
    for (sample, _), (prediction, reference, classes) in zip(items, normalized, strict=True):
        classes = classes if classes is not None else free_lists.get(sample.dataset, ())
        if reference and reference in classes:
            rows.append((sample.dataset, prediction, reference, classes))
            counted_rows.append(sample.index)
            parsed.append(prediction in classes)
        else:
            parsed.append(None)

    chosen = _choose_classes(
        [(prediction, classes) for _, prediction, _, classes in rows], nearest_class
    )
    hits: dict[str, list[bool]] = {}
    sample_hits = []
    for (dataset, _, reference, _), label in zip(rows, chosen, strict=True):
        hits.setdefault(dataset, []).append(label == reference)
        sample_hits.append(float(label == reference))
    metric = MetricValue(
        value=sum(map(sum, hits.values())) / len(rows) if rows else None,
        per_dataset={name: sum(values) / len(values) for name, values in hits.items()},
        scored=len(rows),
        total=len(items),
    )
    # Hits of 0.0/1.0: their float sums are exact integers, so the pooled mean is the
    # published ratio of counts bit for bit, in any order.
    contribution = PooledMean.build(counted_rows, sample_hits)
    return TaskOutcome(
        metrics={NAP_ACC: metric}, parsed=parsed, contributions={NAP_ACC: contribution}
    )


def _choose_classes(
    questions: Sequence[tuple[str, tuple[str, ...]]], nearest_class: NearestClass
) -> list[str]:
    """Each question's class: exact match, else the nearest by embedding (one call in all)."""
    pending = [
        position
        for position, (prediction, classes) in enumerate(questions)
        if prediction not in classes
    ]
    nearest = nearest_class([questions[position] for position in pending]) if pending else []
    chosen = [prediction for prediction, _ in questions]
    for position, index in zip(pending, nearest, strict=True):
        chosen[position] = questions[position][1][index]
    return chosen
