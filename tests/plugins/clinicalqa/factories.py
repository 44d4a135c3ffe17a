"""Small demo clinical QA test sets and predictions rows for the tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from plugins.clinicalqa.scoring import ClinicalQATestSet, load_testset

OPTIONS = {"A": "the liver", "B": "the kidneys", "C": "the lungs", "D": "the heart"}


def mc(identifier: str, answer: str = "B", **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": identifier,
        "category": "multiple_choice",
        "question": f"Which organ does question {identifier} ask about?",
        "options": dict(OPTIONS),
        "answer": answer,
    }
    record.update(extra)
    return record


def oe(identifier: str, reference: str = "Rest and fluids for a week.", **extra: Any) -> dict:
    record: dict[str, Any] = {
        "id": identifier,
        "category": "open_ended",
        "question": f"How is the condition of question {identifier} treated?",
        "reference": reference,
    }
    record.update(extra)
    return record


def make_test_set(*records: dict[str, Any]) -> ClinicalQATestSet:
    return load_testset(json.dumps(list(records)).encode("utf-8"))


def rows_for(answers: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"id": identifier, "answer": answer} for identifier, answer in answers.items()]


def as_bytes(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")
