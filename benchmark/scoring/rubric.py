"""The LLM judge's generic parts: the rubric (a prompt template, aspects, the patterns that read
a verdict, the score range, task labels) and the outcome a benchmark's judge aggregates its
verdicts into. Pure Python, no Django, and nothing of any one benchmark: a plugin's judge
(`benchmark.plugins`, `plugin.judge`) builds the items and aggregates them (MedVidBench's in
`plugins/medvidbench/scoring/judge.py`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PLACEHOLDERS = ("task", "ground_truth", "prediction")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


class RubricError(ValueError):
    """A rubric that cannot work: a missing placeholder, a pattern without a score group..."""


class VerdictError(ValueError):
    """A judge's answer that does not hold a valid score for every aspect (a failed attempt)."""


# --- the rubric -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rubric:
    """The judge's instructions as data: the prompt template with `{task}`, `{ground_truth}`
    and `{prediction}`, the aspects in the order they are averaged, the patterns that read an
    aspect's score from an answer (`{aspect}` stands for the aspect's code; the first pattern
    that matches wins), the allowed score range, and the task names the prompt uses."""

    template: str
    aspects: tuple[str, ...]
    patterns: tuple[str, ...]
    score_min: int
    score_max: int
    task_labels: Mapping[str, str]
    aspect_names: Mapping[str, str] = field(default_factory=dict)
    # The tasks the benchmark's judge writes prompts for (its plugin's `judge.task_labels`):
    # each needs a label. Not part of the stored settings.
    required_labels: tuple[str, ...] = field(default=(), compare=False)
    _compiled: Mapping[str, tuple[re.Pattern[str], ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        found = set(_PLACEHOLDER.findall(self.template))
        missing = [name for name in PLACEHOLDERS if name not in found]
        if missing:
            raise RubricError(
                "the prompt template lacks " + ", ".join("{" + name + "}" for name in missing)
            )
        if not self.aspects:
            raise RubricError("the rubric needs at least one aspect")
        if not self.patterns:
            raise RubricError("the rubric needs at least one answer pattern")
        for pattern in self.patterns:
            if "{aspect}" not in pattern:
                raise RubricError(f"the answer pattern {pattern!r} lacks {{aspect}}")
            try:
                compiled = re.compile(pattern.replace("{aspect}", "R1"))
            except re.error as error:
                raise RubricError(
                    f"the answer pattern {pattern!r} is not a regex: {error}"
                ) from None
            if compiled.groups != 1:
                raise RubricError(f"the answer pattern {pattern!r} needs exactly one group")
        if not 0 < self.score_min <= self.score_max:
            raise RubricError("the score range must be positive, min <= max")
        unlabelled = [task for task in self.required_labels if task not in self.task_labels]
        if unlabelled:
            raise RubricError("no task label for " + ", ".join(unlabelled))
        compiled_patterns = {
            aspect: tuple(
                re.compile(pattern.replace("{aspect}", re.escape(aspect)))
                for pattern in self.patterns
            )
            for aspect in self.aspects
        }
        object.__setattr__(self, "_compiled", compiled_patterns)

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        template: str,
        required_labels: tuple[str, ...] | None = None,
    ) -> Rubric:
        """A rubric from its stored JSON form (`to_dict` without the template); each task in
        `required_labels` (None: the class's default) must have a label."""
        extra = {} if required_labels is None else {"required_labels": tuple(required_labels)}
        try:
            return cls(
                **extra,
                template=template,
                aspects=tuple(data["aspects"]),
                patterns=tuple(data["patterns"]),
                score_min=int(data["score_min"]),
                score_max=int(data["score_max"]),
                task_labels=dict(data["task_labels"]),
                aspect_names=dict(data.get("aspect_names", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, RubricError):
                raise
            raise RubricError(f"the rubric's settings are incomplete: {error!r}") from None

    def settings(self) -> dict[str, Any]:
        """The rubric without its template, as stored beside it."""
        return {
            "aspects": list(self.aspects),
            "aspect_names": dict(self.aspect_names),
            "patterns": list(self.patterns),
            "score_min": self.score_min,
            "score_max": self.score_max,
            "task_labels": dict(self.task_labels),
        }

    @property
    def version(self) -> str:
        """A short content hash of everything that changes a prompt or the reading of an
        answer: the verdict cache is keyed by it."""
        settings = self.settings()
        del settings["aspect_names"]  # names are for people; they change no prompt or reading
        canonical = json.dumps(
            {"template": self.template, **settings}, sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def prompt(self, task: str, *, ground_truth: str, prediction: str) -> str:
        """The one user message for an item. The placeholders are filled in one pass, so
        braces or placeholder names inside the texts are left as written."""
        values = {
            "task": self.task_labels[str(task)],
            "ground_truth": ground_truth,
            "prediction": prediction,
        }
        return _PLACEHOLDER.sub(lambda match: values[match.group(1)], self.template)

    def parse(self, answer: str | None) -> dict[str, int]:
        """The aspect scores in an answer, or `VerdictError` saying what is wrong."""
        if not answer:
            raise VerdictError("the answer is empty")
        scores: dict[str, int] = {}
        for aspect, patterns in self._compiled.items():
            for pattern in patterns:
                match = pattern.search(answer)
                if match:
                    scores[aspect] = int(match.group(1))
                    break
        missing = [aspect for aspect in self.aspects if aspect not in scores]
        if missing:
            raise VerdictError("no score for " + ", ".join(missing))
        outside = [
            f"{aspect}={score}"
            for aspect, score in scores.items()
            if not self.score_min <= score <= self.score_max
        ]
        if outside:
            raise VerdictError(
                f"scores outside {self.score_min}-{self.score_max}: " + ", ".join(outside)
            )
        return scores


@dataclass(frozen=True)
class JudgeOutcome:
    """The judge metrics and how they came about.

    `metrics[name]` is None when the test set has no sample of that task, or when it had items
    and not one was judged (the judge failed; never a made-up number). `counts[name]` has
    `items`, `judged` and `failed`; `per_dataset[name]` the dataset values; `aspects[name]`
    the pooled aspect means (VS, RC) and `thresholds[dataset][threshold]` DVC's scores.
    """

    metrics: dict[str, float | None]
    counts: dict[str, dict[str, int]]
    per_dataset: dict[str, dict[str, float]]
    aspects: dict[str, dict[str, float]]
    thresholds: dict[str, dict[str, float]]

    @property
    def unavailable(self) -> list[str]:
        """Metrics that had items but no successful verdict."""
        return [
            name for name, counts in self.counts.items() if counts["items"] and not counts["judged"]
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "metrics": self.metrics,
            "counts": self.counts,
            "per_dataset": self.per_dataset,
            "aspects": self.aspects,
            "dvc_thresholds": self.thresholds,
        }


Verdicts = Mapping[str, Mapping[str, int] | None]
