"""The toy benchmark as its maintainers would publish it: texts, board columns and ranking
(what `ensure_benchmark` and `setup_benchmarks` create)."""

from __future__ import annotations

from benchmark.definitions import BenchmarkDefinition, MetricDefinition
from benchmark.enums import RankingMethod

from .scoring import CLASSES

METRICS = (
    MetricDefinition(
        key="accuracy",
        label="Accuracy",
        task="overall",
        description="The share of items whose predicted class is the reference class.",
    ),
    MetricDefinition(
        key="macro_accuracy",
        label="Macro accuracy",
        task="overall",
        description="Each class's accuracy, then their unweighted mean over the classes.",
    ),
    *(
        MetricDefinition(
            key=f"accuracy_{name}",
            label=f"Accuracy on {name}",
            task=name,
            description=f"The share of the {name} items answered {name}.",
        )
        for name in CLASSES
    ),
)

TOY = BenchmarkDefinition(
    slug="toy-classification",
    name="Toy classification",
    description="Ten pictures, three classes: the smallest benchmark a plugin can serve.",
    about="A toy benchmark of the test suite: each item is a bird, a cat or a dog.\n",
    citation="@misc{toy, title = {A toy benchmark}, year = {2026}}\n",
    licence="CC0\n",
    metrics=METRICS,
    plugin="toy-classification",
    is_public=True,
    # By accuracy, then macro accuracy (a lexicographic board; benchmark/enums.py).
    ranking_method=RankingMethod.LEXICOGRAPHIC,
    ranking_order=("accuracy", "macro_accuracy"),
    # Small, so the tests' bootstrap is quick; still above the 39 a 95% interval needs.
    bootstrap_replicates=200,
    max_upload_mb=1,
)
