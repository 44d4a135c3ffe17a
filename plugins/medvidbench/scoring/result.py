"""The result of scoring one predictions file: plain data that serialises to JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .tasks import METRIC_NAMES


@dataclass(frozen=True)
class UnparsedExample:
    """One of the submitter's own answers that did not parse (never a reference answer)."""

    row: int
    id: str
    prediction: str


@dataclass(frozen=True)
class ScoreResult:
    """Everything a scoring run publishes or shows its submitter.

    `metrics` always has the ten leaderboard names; a value is None where it was not
    computed (the judge metrics until the judge ran, or a task with nothing to score).
    Per-sample scores are deliberately absent: they would leak the reference answers.
    """

    scorer_version: str
    test_set_checksum: str
    records: int
    metrics: dict[str, float | None]
    per_dataset: dict[str, dict[str, float]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    parsed: dict[str, dict[str, int]] = field(default_factory=dict)
    unparsed_examples: dict[str, list[UnparsedExample]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if tuple(self.metrics) != METRIC_NAMES:
            raise ValueError(f"metrics must be exactly {METRIC_NAMES}, in that order")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreResult:
        examples = {
            task: [UnparsedExample(**example) for example in rows]
            for task, rows in data.get("unparsed_examples", {}).items()
        }
        # A JSON store may reorder keys (PostgreSQL's jsonb does): put the metrics back in order.
        metrics = {name: data["metrics"].get(name) for name in METRIC_NAMES}
        return cls(**{**data, "metrics": metrics, "unparsed_examples": examples})
