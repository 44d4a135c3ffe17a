"""MedVidBench scoring: a pure Python + numpy reimplementation of the official scorer.

No Django imports here (a test walks the AST to keep it so). Typical use:

    test_set = load_ground_truth(path)
    predictions = load_predictions(file_bytes, test_set)
    result = evaluate(test_set, predictions)
"""

from benchmark.scoring.errors import GroundTruthError, PredictionsError, Problem, ScoringInputError

from .evaluate import evaluate
from .ground_truth import Sample, TestSet, load_ground_truth
from .result import ScoreResult
from .submission import load_predictions
from .tasks import METRIC_NAMES, Task
from .version import SCORER_VERSION

__all__ = [
    "METRIC_NAMES",
    "SCORER_VERSION",
    "GroundTruthError",
    "PredictionsError",
    "Problem",
    "Sample",
    "ScoreResult",
    "ScoringInputError",
    "Task",
    "TestSet",
    "evaluate",
    "load_ground_truth",
    "load_predictions",
]
