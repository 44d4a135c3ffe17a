"""A synthetic demo clinical QA test set and the answers of four demo models.

Nothing here is medical knowledge: ten invented conditions, each with an invented organ
pattern, sign, test, drug, course, risk and complication, give 40 multiple-choice questions
(four per condition: the organ, the sign, the test, the first-line drug) and 16 open-ended
ones (two for each of the first eight conditions), whose reference answers are sentences of
those facts.

Four demo models answer them, of clearly different quality (docs/clinicalqa.md, "The demo"):

- multiple choice: exactly 36, 30, 22 and 12 of the 40 right (accuracy 0.9, 0.75, 0.55,
  0.3), each in its own style ("Answer: C", "C. the liver", "(c) the liver", "I think it
  is C."), the weaker two with some answers that hold no letter (unreadable, scored 0);
- open-ended: answers built from the reference's sentences, fewer of them the weaker the
  model (the rest vague filler or a wrong fact), so a judge that prefers the answer sharing
  more words with the reference ranks the models in order; on a few questions two
  neighbouring models give the very same answer, so such a judge calls a tie.

One predictions file per model, `[{"id", "answer"}]`; the "fair" model's lists its
open-ended answers first (rows are matched by id, not by position).

Pure Python, no Django. Everything is drawn from `random.Random` seeded with strings, so one
seed always gives byte-identical JSON (no `hash()`, no set iteration, no clock).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .scoring.testset import LETTERS, MULTIPLE_CHOICE, OPEN_ENDED

TESTSET_FILENAME = "clinicalqa_testset.json"
INSTITUTION = "Podium demo data"


@dataclass(frozen=True)
class Condition:
    name: str
    organ: str
    sign: str
    test: str
    drug: str
    course: str
    risk: str
    complication: str
    review_days: int


CONDITIONS = (
    Condition("Carrow fever", "liver", "a violet tint of the tongue",
              "the Harrow stain of a blood smear", "veloxamine", "five days",
              "drinking water from open wells", "scarring of the liver", 7),
    Condition("Dellin syndrome", "kidneys", "itching behind the knees",
              "a Lindqvist urine strip", "corbital", "ten days",
              "long hours of standing", "kidney stones", 10),
    Condition("Marsh-Otto disease", "lungs", "a dry cough that worsens at dusk",
              "the Orme breath test", "dranufen", "two weeks",
              "work in grain stores", "shortness of breath on stairs", 14),
    Condition("Pellan anaemia", "spleen", "cold fingertips at rest",
              "a Tove antibody panel", "ezotrine", "three weeks",
              "a diet without leafy greens", "fainting spells", 21),
    Condition("Quenby palsy", "inner ear", "ringing in one ear",
              "the Ivers ear swab", "halvocin", "seven days",
              "swimming in cold lakes", "loss of balance", 7),
    Condition("Rostel carditis", "heart", "a fluttering pulse after meals",
              "the Brannock pulse test", "mepraline", "one month",
              "recent dental work", "swollen ankles", 28),
    Condition("Silbo pancreatitis", "pancreas", "hiccups after fatty meals",
              "a Kessel stool assay", "nostrazole", "twelve days",
              "heavy lifting", "low blood sugar", 12),
    Condition("Tarn dermatosis", "skin", "a copper-coloured rash on the shins",
              "a Pasco skin patch", "pirafen", "four weeks",
              "contact with cattle", "brittle nails", 14),
    Condition("Varga colitis", "colon", "a metallic taste in the morning",
              "the Renard ultrasound sign", "quintabar", "nine days",
              "working night shifts", "joint stiffness", 9),
    Condition("Wendle goitre", "thyroid", "swelling of the eyelids",
              "an Ulm thyroid scan", "sulvane", "six weeks",
              "living at high altitude", "hair thinning", 42),
)  # fmt: skip

# (attribute, question) of the four multiple-choice questions per condition.
MC_TEMPLATES = (
    ("organ", "In {name} (an invented condition), which organ is mainly affected?"),
    ("sign", "What is the hallmark sign of {name} (an invented condition)?"),
    ("test", "Which test confirms {name} (an invented condition)?"),
    ("drug", "What is the first-line treatment of {name} (an invented condition)?"),
)
OPEN_ENDED_CONDITIONS = 8
OE_TEMPLATES = (
    "How is {name} (an invented condition) confirmed, and how is it treated?",
    "What should a patient with {name} (an invented condition) be told about it?",
)
# Sentences with no word of four letters or more from any reference answer.
FILLER = (
    "It is best to ask a doctor about it.",
    "Everyone is different, so advice varies.",
    "Rest and plenty of fluids can help.",
    "More tests may be needed.",
    "The outlook varies from person to person.",
    "Some people recover quickly.",
)
UNREADABLE = (
    "I am not sure.",
    "It depends on the case.",
    "",
    "Maybe the second one, or the third.",
    "I would need more information.",
)


@dataclass(frozen=True)
class DemoModel:
    """One demo model: its name, its file's kind, its multiple-choice right answers (of 40)
    and unreadable answers (among the wrong ones), how many of an open-ended reference's
    sentences it leaves out, and the model facts a submitter would give (issue 15, point 4;
    `parameters` in billions)."""

    name: str
    kind: str
    mc_correct: int
    mc_unreadable: int
    kept_drop: tuple[int, int]  # how many reference sentences it leaves out: (fewest, most)
    wrong_facts: int  # of those left out, how many become a wrong fact rather than filler
    facts: Mapping[str, str]

    @property
    def filename(self) -> str:
        return f"predictions_{self.kind}.json"


MODELS = (
    DemoModel(
        name="demo-strong",
        kind="strong",
        mc_correct=36,
        mc_unreadable=0,
        kept_drop=(0, 0),
        wrong_facts=0,
        facts={
            "type": "preference-tuned",
            "parameters": "70",
            "licence": "apache-2.0",
            "precision": "bfloat16",
            "domain_specific": "no",
        },
    ),
    DemoModel(
        name="demo-good",
        kind="good",
        mc_correct=30,
        mc_unreadable=0,
        kept_drop=(1, 2),
        wrong_facts=0,
        facts={
            "type": "fine-tuned",
            "parameters": "13",
            "licence": "mit",
            "precision": "float16",
            "domain_specific": "yes",
        },
    ),
    DemoModel(
        name="demo-fair",
        kind="fair",
        mc_correct=22,
        mc_unreadable=2,
        kept_drop=(2, 3),
        wrong_facts=1,
        facts={
            "type": "preference-tuned",
            "parameters": "7",
            "licence": "cc-by-nc-4.0",
            "precision": "bfloat16",
            "domain_specific": "yes",
        },
    ),
    DemoModel(
        name="demo-weak",
        kind="weak",
        mc_correct=12,
        mc_unreadable=5,
        kept_drop=(2, 4),
        wrong_facts=1,
        facts={
            "type": "pretrained",
            "parameters": "1.3",
            "licence": "apache-2.0",
            "precision": "float32",
            "domain_specific": "no",
        },
    ),
)
# Neighbours that give the very same answer on this many open-ended questions (ties for a
# judge that compares word overlap): (better, worse, count).
SAME_ANSWERS = (("strong", "good", 3), ("good", "fair", 2), ("fair", "weak", 2))


def write_demo(folder: Path, seed: int = 0, *, force: bool = False) -> dict[str, Path]:
    """Write the test set and the four predictions files under `folder`: each file that is
    not there yet, every file with `force` (the same seed gives the same bytes). Returns the
    paths by name: "testset" and each model's kind ("strong", "good", "fair", "weak")."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    records = generate_testset(seed)
    contents = {"testset": (folder / TESTSET_FILENAME, records)}
    for kind, rows in make_predictions(records, seed).items():
        contents[kind] = (folder / _model(kind).filename, rows)
    for path, value in contents.values():
        if force or not path.exists():
            path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return {name: path for name, (path, _) in contents.items()}


def _model(kind: str) -> DemoModel:
    return next(model for model in MODELS if model.kind == kind)


def _value(condition: Condition, attribute: str) -> str:
    value = getattr(condition, attribute)
    return f"the {value}" if attribute == "organ" else value


def reference_sentences(condition: Condition, template: int) -> tuple[str, ...]:
    """The sentences of an open-ended question's reference answer."""
    if template == 0:
        return (
            f"{condition.name} is confirmed with {condition.test}.",
            f"The first-line treatment is {condition.drug} for {condition.course}.",
            f"Review the patient after {condition.review_days} days.",
            f"Watch for {condition.complication}.",
        )
    return (
        f"{condition.name} mainly affects the {condition.organ}.",
        f"Its hallmark sign is {condition.sign}.",
        f"It is linked to {condition.risk}.",
        f"Without treatment it can lead to {condition.complication}.",
        f"Treatment with {condition.drug} usually helps within {condition.review_days} days.",
    )


def generate_testset(seed: int = 0) -> list[dict[str, Any]]:
    """The test set's records: 40 multiple-choice items, then 16 open-ended ones."""
    records: list[dict[str, Any]] = []
    for number, (condition, (attribute, question)) in enumerate(
        ((condition, template) for condition in CONDITIONS for template in MC_TEMPLATES), 1
    ):
        rng = random.Random(f"clinicalqa-demo:{seed}:mc:{number}")
        others = [_value(other, attribute) for other in CONDITIONS if other is not condition]
        choices = [_value(condition, attribute), *rng.sample(others, 3)]
        rng.shuffle(choices)
        records.append(
            {
                "id": f"mc-{number:03d}",
                "category": MULTIPLE_CHOICE,
                "question": question.format(name=condition.name),
                "options": dict(zip(LETTERS, choices, strict=True)),
                "answer": LETTERS[choices.index(_value(condition, attribute))],
            }
        )
    number = 0
    for condition in CONDITIONS[:OPEN_ENDED_CONDITIONS]:
        for template, question in enumerate(OE_TEMPLATES):
            number += 1
            records.append(
                {
                    "id": f"oe-{number:03d}",
                    "category": OPEN_ENDED,
                    "question": question.format(name=condition.name),
                    "reference": " ".join(reference_sentences(condition, template)),
                }
            )
    return records


def make_predictions(
    records: list[dict[str, Any]], seed: int = 0
) -> dict[str, list[dict[str, str]]]:
    """Each demo model's rows (by kind), as the module docstring describes them."""
    multiple_choice = [record for record in records if record["category"] == MULTIPLE_CHOICE]
    open_ended = [record for record in records if record["category"] == OPEN_ENDED]
    answers = {model.kind: _mc_answers(model, multiple_choice, seed) for model in MODELS}
    for kind, texts in _open_ended_answers(open_ended, seed).items():
        answers[kind].update(texts)
    files = {}
    for model in MODELS:
        order = records if model.kind != "fair" else [*open_ended, *multiple_choice]
        files[model.kind] = [
            {"id": record["id"], "answer": answers[model.kind][record["id"]]} for record in order
        ]
    return files


def _mc_answers(model: DemoModel, records: list[dict[str, Any]], seed: int) -> dict[str, str]:
    rng = random.Random(f"clinicalqa-demo-mc:{seed}:{model.kind}")
    wrong = rng.sample(range(len(records)), len(records) - model.mc_correct)
    unreadable = set(wrong[: model.mc_unreadable])
    wrong_set = set(wrong)
    texts = {}
    for index, record in enumerate(records):
        if index in unreadable:
            texts[record["id"]] = UNREADABLE[index % len(UNREADABLE)]
            continue
        letter = record["answer"]
        if index in wrong_set:
            letter = rng.choice([other for other in LETTERS if other != letter])
        texts[record["id"]] = _styled(model.kind, letter, record["options"][letter], rng)
    return texts


def _styled(kind: str, letter: str, option: str, rng: random.Random) -> str:
    """A multiple-choice answer in the model's style (each read by the letter rule)."""
    second = rng.random() < 0.5
    if kind == "strong":
        return f"The answer is {letter}." if second else f"Answer: {letter}"
    if kind == "good":
        return f"{letter}. {option}" if second else letter
    if kind == "fair":
        return f"{letter}) {option}" if second else f"({letter.lower()}) {option}"
    return f"{option}, so {letter}" if second else f"I think it is {letter}."


def _open_ended_answers(records: list[dict[str, Any]], seed: int) -> dict[str, dict[str, str]]:
    """Each model's open-ended answers: the reference's sentences, a few left out (replaced
    by filler or, for the weaker models, a wrong fact taken from another condition)."""
    answers: dict[str, dict[str, str]] = {model.kind: {} for model in MODELS}
    pairs = [
        (number, condition, template)
        for number, (condition, template) in enumerate(
            (condition, template)
            for condition in CONDITIONS[:OPEN_ENDED_CONDITIONS]
            for template in range(len(OE_TEMPLATES))
        )
    ]
    for (number, condition, template), record in zip(pairs, records, strict=True):
        sentences = reference_sentences(condition, template)
        for model in MODELS:
            rng = random.Random(f"clinicalqa-demo-oe:{seed}:{model.kind}:{number}")
            low, high = model.kept_drop
            dropped = set(
                rng.sample(range(len(sentences)), min(len(sentences), rng.randint(low, high)))
            )
            wrong = set(sorted(dropped)[: model.wrong_facts])
            other = CONDITIONS[
                (CONDITIONS.index(condition) + 1 + rng.randrange(8)) % len(CONDITIONS)
            ]
            wrong_sentences = reference_sentences(other, template)
            parts = []
            for position, sentence in enumerate(sentences):
                if position not in dropped:
                    parts.append(sentence)
                elif position in wrong:
                    parts.append(wrong_sentences[position].replace(other.name, condition.name))
                else:
                    parts.append(FILLER[rng.randrange(len(FILLER))])
            answers[model.kind][record["id"]] = " ".join(dict.fromkeys(parts))
    # Neighbours giving the same answer: ties for a word-overlap judge.
    for better, worse, count in SAME_ANSWERS:
        rng = random.Random(f"clinicalqa-demo-same:{seed}:{better}:{worse}")
        for index in rng.sample(range(len(records)), count):
            identifier = records[index]["id"]
            answers[worse][identifier] = answers[better][identifier]
    return answers
