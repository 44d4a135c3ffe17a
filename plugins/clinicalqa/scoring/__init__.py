"""The demo clinical QA benchmark's pure scoring core: the test set, predictions, the letter
rule, accuracy and its bootstrap contributions.

Plain Python + numpy, no Django (tests/plugins/clinicalqa/test_boundary.py walks the AST to
keep it so); it may import the platform's pure modules `benchmark.scoring.errors`,
`strict_json`, `json_file` and `weights`. The choices are in docs/clinicalqa.md.
"""

from .evaluate import (
    ACCURACY,
    METRIC_KEYS,
    ClinicalQAContributions,
    ClinicalQAResult,
    score,
    score_with_contributions,
)
from .letters import read_letter
from .predictions import load_predictions
from .testset import (
    CATEGORIES,
    LETTERS,
    MULTIPLE_CHOICE,
    OPEN_ENDED,
    ClinicalQATestSet,
    Item,
    load_testset,
)

__all__ = [
    "ACCURACY",
    "CATEGORIES",
    "LETTERS",
    "METRIC_KEYS",
    "MULTIPLE_CHOICE",
    "OPEN_ENDED",
    "ClinicalQAContributions",
    "ClinicalQAResult",
    "ClinicalQATestSet",
    "Item",
    "load_predictions",
    "load_testset",
    "read_letter",
    "score",
    "score_with_contributions",
]
