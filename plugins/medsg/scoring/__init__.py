"""MedSG-Bench's pure scoring core: boxes, the test set, predictions, metrics, contributions.

Plain Python + numpy, no Django (tests/plugins/medsg/test_boundary.py walks the AST to keep it
so); it may import `benchmark.scoring.errors` and `benchmark.scoring.strict_json`, which are
pure too. The plugin protocol wraps these functions; see docs/medsg.md for the choices made.
"""

from .boxes import BOX_CONVENTIONS, iou, iou_array, parse_box, to_pixels, to_pixels_array
from .evaluate import (
    FLAT_METRIC_KEYS,
    SUMMARY_KEYS,
    FormatReport,
    MedSGContributions,
    MedSGResult,
    score,
    score_with_contributions,
)
from .predictions import load_predictions
from .testset import TASKS, Item, MedSGTestSet, load_testset

__all__ = [
    "BOX_CONVENTIONS",
    "FLAT_METRIC_KEYS",
    "SUMMARY_KEYS",
    "TASKS",
    "FormatReport",
    "Item",
    "MedSGContributions",
    "MedSGResult",
    "MedSGTestSet",
    "iou",
    "iou_array",
    "load_predictions",
    "load_testset",
    "parse_box",
    "score",
    "score_with_contributions",
    "to_pixels",
    "to_pixels_array",
]
