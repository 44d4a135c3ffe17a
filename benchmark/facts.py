"""Model facts (issue 15, point 4): what a submitter says about their model where a benchmark
asks for it (`BenchmarkDefinition.model_facts`, a subset of `definitions.MODEL_FACT_KEYS`), as
MEDIC's board shows them: its type, size, licence, numeric precision and whether it was built
for the domain.

The vocabulary and the one check every interface uses (the web form, the API, the owner's
edit, the services): plain Python, no Django, so a form field, a serializer and a writer say
the same thing in the same words. A refusal names the fact and what it takes.

Stored on the submission as JSON (`Submission.model_facts`): a choice as its value, the
parameters as a float (billions), the licence as its text. Which facts are required is
decided here, per fact, not per benchmark: the three the boards filter on (type, precision,
domain-specific) and the licence, which everybody knows ("proprietary" is one), are; the
parameter count is not, since the makers of a closed model often do not publish it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The largest parameter count taken, in billions: beyond any model yet, so only a typo (a
# count in units rather than billions) is refused.
MAX_PARAMETERS_BILLIONS = 100_000.0
MAX_LICENCE_CHARS = 50
# Control, format (bidi, zero-width) and line or paragraph separator characters.
UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


@dataclass(frozen=True)
class FactDefinition:
    """One model fact: its key (the stored key, the form field and the API's name), what it
    is called, what kind of value it takes ("choice", "number" or "text") and whether an
    entry must give it."""

    key: str
    label: str
    kind: str
    help_text: str
    required: bool = True
    choices: tuple[tuple[str, str], ...] = ()  # (value, label), for a "choice"
    # The boards filter on it (`?type=`, `?precision=`, `?domain_specific=`).
    filterable: bool = False

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.choices)

    @property
    def allowed(self) -> str:
        """What the fact takes, for a refusal: "one of pretrained, fine-tuned, ..."."""
        if self.kind == "choice":
            return f"one of {', '.join(self.values)}"
        if self.kind == "number":
            return "a positive number of billions, e.g. 7 or 0.5"
        return f"a short text of at most {MAX_LICENCE_CHARS} characters, e.g. apache-2.0"


FACTS: dict[str, FactDefinition] = {
    fact.key: fact
    for fact in (
        FactDefinition(
            key="type",
            label="Model type",
            kind="choice",
            help_text="How the model was trained: a pretrained model as released, a "
            "fine-tuned one (supervised on task data), or one tuned on preferences (RLHF, DPO).",
            choices=(
                ("pretrained", "pretrained"),
                ("fine-tuned", "fine-tuned"),
                ("preference-tuned", "preference-tuned"),
            ),
            filterable=True,
        ),
        FactDefinition(
            key="parameters",
            label="Parameters",
            kind="number",
            help_text="In billions: 7 for a 7B model, 0.5 for 500M. Leave empty if the "
            "makers do not say.",
            required=False,
        ),
        FactDefinition(
            key="licence",
            label="Licence",
            kind="text",
            help_text="Its identifier, e.g. apache-2.0, mit, llama3.1, or proprietary.",
        ),
        FactDefinition(
            key="precision",
            label="Precision",
            kind="choice",
            help_text="The numeric precision the predictions were made at.",
            choices=(
                ("float32", "float32"),
                ("bfloat16", "bfloat16"),
                ("float16", "float16"),
                ("int8", "int8"),
                ("int4", "int4"),
            ),
            filterable=True,
        ),
        FactDefinition(
            key="domain_specific",
            label="Domain-specific",
            kind="choice",
            help_text="Yes if the model was built or tuned for this domain (medicine), no "
            "for a general-purpose model.",
            choices=(("yes", "yes"), ("no", "no")),
            filterable=True,
        ),
    )
}
# `benchmark.definitions.MODEL_FACT_KEYS` names the same keys in the same order (a test holds
# the two together; the definitions import Django's enums, this module nothing).


class FactError(ValueError):
    """A model fact that cannot be stored; `field` is its key, the message names it and what
    it takes."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class FactsError(ValueError):
    """Every refused fact of one submission: `problems` maps each key to its message."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__("; ".join(self.problems.values()))


def fact(key: str) -> FactDefinition:
    """The fact of `key`, or KeyError naming the known ones."""
    try:
        return FACTS[key]
    except KeyError:
        raise KeyError(f"no model fact {key!r}; known: {', '.join(FACTS)}") from None


def clean_fact(key: str, raw: Any) -> Any:
    """`raw` as `key` is stored: a choice's value, the parameters as a float, the licence as
    its stripped text; None for an empty optional fact. `FactError` naming the fact and what
    it takes for anything else (a missing required fact too)."""
    definition = fact(key)
    if isinstance(raw, str):
        raw = raw.strip()
    if raw is None or raw == "":
        if definition.required:
            raise FactError(key, f"{definition.label}: required; {definition.allowed}.")
        return None
    if definition.kind == "choice":
        if isinstance(raw, bool) and definition.values == ("yes", "no"):
            return "yes" if raw else "no"  # JSON's true/false for a yes/no fact
        if raw not in definition.values:
            raise FactError(key, f"{definition.label}: {_shown(raw)} is not {definition.allowed}.")
        return raw
    if definition.kind == "number":
        return _parameters(definition, raw)
    return _licence(definition, raw)


def _parameters(definition: FactDefinition, raw: Any) -> float:
    refused = FactError(
        definition.key, f"{definition.label}: {_shown(raw)} is not {definition.allowed}."
    )
    if isinstance(raw, bool):
        raise refused
    if isinstance(raw, str):
        # "7", "0.5", "7B" and "7 b" alike: the unit is the field's.
        text = re.sub(r"\s*[bB]$", "", raw)
        try:
            value = float(text)
        except ValueError:
            raise refused from None
    elif isinstance(raw, int | float):
        value = float(raw)
    else:
        raise refused
    if not math.isfinite(value) or value <= 0:
        raise refused
    if value > MAX_PARAMETERS_BILLIONS:
        raise FactError(
            definition.key,
            f"{definition.label}: {value:g} billion is more than any model has; give the "
            "count in billions (7 for a 7B model).",
        )
    return value


def _licence(definition: FactDefinition, raw: Any) -> str:
    if not isinstance(raw, str):
        raise FactError(
            definition.key, f"{definition.label}: {_shown(raw)} is not {definition.allowed}."
        )
    if len(raw) > MAX_LICENCE_CHARS or any(unicodedata.category(c) in UNPRINTABLE for c in raw):
        raise FactError(
            definition.key,
            f"{definition.label}: {definition.allowed}, without line breaks or control characters.",
        )
    return raw


def _shown(raw: Any) -> str:
    text = repr(raw) if isinstance(raw, str) else str(raw)
    return text if len(text) <= 40 else text[:39] + "…"


def check_model_facts(
    asked: Iterable[str], given: Mapping[str, Any], *, partial: bool = False
) -> dict[str, Any]:
    """The facts a benchmark asks for (`asked`, its `model_facts`) as stored, from what a
    submitter gave: each cleaned by `clean_fact`, an empty optional one left out. A fact the
    benchmark does not ask for is refused, and so is every missing required one unless
    `partial` (a maintainer's import, which may not know them). `FactsError` lists every
    problem by key; nothing is returned then."""
    asked = list(asked)
    problems: dict[str, str] = {}
    for key in given:
        if key not in asked:
            problems[key] = f"{key!r} is not a model fact this benchmark asks for" + (
                f"; it asks for {', '.join(asked)}." if asked else "; it asks for none."
            )
    cleaned: dict[str, Any] = {}
    for key in asked:
        raw = given.get(key)
        if partial and (raw is None or raw == ""):
            continue
        try:
            value = clean_fact(key, raw)
        except FactError as error:
            problems[key] = str(error)
            continue
        if value is not None:
            cleaned[key] = value
    if problems:
        raise FactsError(problems)
    return cleaned


def parameters_text(value: Any) -> str:
    """A parameter count as boards show it: "7B", "0.5B", "1.3B", "70B"; "" for none."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return ""
    return f"{value:g}B"


def fact_text(key: str, value: Any) -> str:
    """A stored fact as a board shows it ("7B", "fine-tuned", "domain-specific")."""
    if value is None or value == "":
        return ""
    if key == "parameters":
        return parameters_text(value)
    if key == "domain_specific":
        return "domain-specific" if value == "yes" else "general"
    return str(value)


def filterable_facts(asked: Iterable[str]) -> list[FactDefinition]:
    """The facts a board asking `asked` filters on, in the vocabulary's order."""
    asked = set(asked)
    return [
        definition for key, definition in FACTS.items() if key in asked and definition.filterable
    ]
