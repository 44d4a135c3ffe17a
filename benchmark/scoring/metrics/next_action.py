"""NAP_acc: next action prediction, nearest class by exact match or MiniLM embedding (spec 4)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..labels import ActionLabels
from ..parsers import normalize_action
from ..tasks import NAP_ACC
from .common import Item, MetricValue, TaskOutcome

# (queries, candidates) -> per query, the index of the most cosine-similar candidate.
MostSimilar = Callable[[Sequence[str], Sequence[str]], list[int]]


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
    items: Sequence[Item], labels: ActionLabels, most_similar: MostSimilar
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
    parsed = []
    for (sample, _), (prediction, reference, classes) in zip(items, normalized, strict=True):
        classes = classes if classes is not None else free_lists.get(sample.dataset, ())
        if reference and reference in classes:
            rows.append((sample.dataset, prediction, reference, classes))
            parsed.append(prediction in classes)
        else:
            parsed.append(None)

    chosen = _choose_classes(
        [(prediction, classes) for _, prediction, _, classes in rows], most_similar
    )
    hits: dict[str, list[bool]] = {}
    for (dataset, _, reference, _), label in zip(rows, chosen, strict=True):
        hits.setdefault(dataset, []).append(label == reference)
    metric = MetricValue(
        value=sum(map(sum, hits.values())) / len(rows) if rows else None,
        per_dataset={name: sum(values) / len(values) for name, values in hits.items()},
        scored=len(rows),
        total=len(items),
    )
    return TaskOutcome(metrics={NAP_ACC: metric}, parsed=parsed)


def _choose_classes(
    questions: Sequence[tuple[str, tuple[str, ...]]], most_similar: MostSimilar
) -> list[str]:
    """Each question's class: exact match, else nearest by embedding (one call per list)."""
    chosen: list[str] = [""] * len(questions)
    pending: dict[tuple[str, ...], list[int]] = {}
    for position, (prediction, classes) in enumerate(questions):
        if prediction in classes:
            chosen[position] = prediction
        else:
            pending.setdefault(classes, []).append(position)
    for classes, positions in pending.items():
        indices = most_similar([questions[p][0] for p in positions], classes)
        for position, index in zip(positions, indices, strict=True):
            chosen[position] = classes[index]
    return chosen
