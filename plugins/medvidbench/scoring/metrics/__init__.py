"""The seven automatic MedVidBench metrics (spec 4), one module per task.

Each `score_<task>(items)` takes `(sample, prediction)` pairs of one task in
test-set order and returns a `TaskOutcome`: the metric values with their
per-dataset breakdown, and for every item whether its answer parsed.
"""

from .common import MetricValue, TaskOutcome

__all__ = ["MetricValue", "TaskOutcome"]
