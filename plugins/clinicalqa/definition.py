"""The demo clinical QA benchmark as a definition (benchmark/definitions.py): a small synthetic
MEDIC-like benchmark (issue 15, point 5) with a close-ended category scored by accuracy and an
open-ended one rated from pairwise battles. `setup_benchmarks` creates it from here."""

from __future__ import annotations

from benchmark.definitions import (
    MODEL_FACT_KEYS,
    BenchmarkDefinition,
    CategoryDefinition,
    MetricDefinition,
)

from .scoring import ACCURACY, MULTIPLE_CHOICE, OPEN_ENDED

RATING = "open_ended_rating"

METRICS = (
    MetricDefinition(
        key=ACCURACY,
        label="Accuracy (multiple choice)",
        task=MULTIPLE_CHOICE,
        description=(
            "The share of multiple-choice questions answered with the right letter, from 0 "
            "to 1. The letter is read from the answer's text by a fixed rule (About: the "
            "letter rule); an answer with no readable letter counts as wrong."
        ),
    ),
    MetricDefinition(
        key=RATING,
        label="Open-ended rating (Elo scale)",
        task=OPEN_ENDED,
        description=(
            "A Bradley-Terry rating on the Elo scale from pairwise battles on the open-ended "
            "questions: the judge compares two models' answers with the reference answer, "
            "twice with the positions swapped, and a verdict that changes with the positions "
            "is a tie. Ratings are centred on 1000, with 95% bootstrap intervals."
        ),
        display_decimals=0,
        is_rating=True,
    ),
)

CATEGORIES = (
    CategoryDefinition(
        key="close_ended",
        label="Close-ended",
        metrics=(ACCURACY,),
        description="Multiple-choice questions with four options, scored by accuracy.",
        ranking="metrics",
    ),
    CategoryDefinition(
        key="open_ended",
        label="Open-ended",
        metrics=(RATING,),
        description=(
            "Free-text answers, compared two at a time by an LLM judge against a reference "
            "answer and ranked by their Bradley-Terry rating."
        ),
        judge_note="The demo's stand-in judge is the judge here (a deterministic program, not an LLM).",
        ranking="rating",
    ),
)

ABOUT = """\
Demo clinical QA is a small synthetic benchmark in the shape of the MEDIC leaderboard: it \
exists to show how Podium runs a benchmark with categories, hosted evaluation and pairwise \
ratings. Its questions are invented for the demo (the conditions, tests and drugs in them do \
not exist); nothing here is medical knowledge or advice.

Categories

- Close-ended: multiple-choice questions with options A to D, scored by accuracy (the share \
answered with the right letter).
- Open-ended: questions answered in free text. An LLM judge compares two models' answers with \
the question's reference answer, twice with the answers' positions swapped; if the preferred \
answer changes with the positions, the battle is a tie. The ratings are a Bradley-Terry fit \
on the Elo scale with 95% bootstrap intervals.

The letter rule

A multiple-choice answer is read as text. Its letter is, in this order: the whole answer when \
it is one letter ("B", "(c)"); a stated answer ("Answer: C", "the answer is (b)"); the first \
letter in brackets ("(d)"); the first capital A to D standing alone ("B. Fever"). An answer \
with no letter counts as wrong and is counted in the file's report.

Hosted evaluation

Instead of a predictions file, a submitter may give an OpenAI-compatible model endpoint: \
Podium asks it every question (a multiple-choice question with its options and "Answer with \
the letter."), writes the predictions file from the answers and scores it as an upload.

The test set is private: submissions carry answers only, and are scored on the server.
"""

CITATION = """\
@misc{podium2026clinicalqa,
  title = {Demo clinical QA: a synthetic MEDIC-like benchmark for Podium's demo},
  note  = {Synthetic demo data, invented for Podium; not a published benchmark},
  year  = {2026}
}
"""

LICENCE = """\
Synthetic demo data: CC0
"""

CLINICALQA = BenchmarkDefinition(
    slug="clinicalqa",
    name="Demo clinical QA",
    description=(
        "Synthetic demo data in MEDIC's shape: invented multiple-choice questions scored by "
        "accuracy and open-ended ones rated from pairwise battles."
    ),
    about=ABOUT,
    citation=CITATION,
    licence=LICENCE,
    metrics=METRICS,
    plugin="clinicalqa",
    categories=CATEGORIES,
    model_facts=MODEL_FACT_KEYS,
    hosted_evaluation=True,
    # A few dozen short answers; an open-ended answer may be a few paragraphs.
    max_upload_mb=5,
    max_prediction_chars=20_000,
    # The overview ranks by the mean of the per-metric ranks (accuracy and the rating), as
    # the default policy does; each category ranks its own metrics (definitions.py).
)
