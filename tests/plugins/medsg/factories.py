"""Small MedSG-Bench test sets and predictions rows for the tests."""

from __future__ import annotations

import json
from typing import Any

from plugins.medsg.scoring.testset import MedSGTestSet, load_testset


def item(task: str, answer: list[float], size: list[float] | None = None, **extra) -> dict:
    record: dict[str, Any] = {
        "task": task,
        "question": f"Locate the lesion ({task}).",
        "images": ["images/a.png", "images/b.png"],
        "answer": answer,
    }
    if size is not None:
        record["size"] = size
    record.update(extra)
    return record


def make_test_set(*records: dict) -> MedSGTestSet:
    return load_testset(json.dumps(list(records)).encode("utf-8"))


def rows_for(test_set: MedSGTestSet, predictions: list[Any]) -> list[dict]:
    return [
        {"index": index, "task": entry.task, "prediction": prediction}
        for index, (entry, prediction) in enumerate(zip(test_set.items, predictions, strict=True))
    ]
