"""`python manage.py score --ground-truth GT.json PREDICTIONS.json [--format json]`.

Scores a predictions file against a ground-truth file from the command line, with
the same loaders and metrics the platform uses. A bad file exits non-zero with the
precise message, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.scoring import (
    METRIC_NAMES,
    ScoreResult,
    ScoringInputError,
    evaluate,
    load_ground_truth,
    load_predictions,
)


class Command(BaseCommand):
    help = "Score a MedVidBench predictions file against a ground-truth file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("predictions", type=Path, help="the predictions JSON file")
        parser.add_argument(
            "--ground-truth", type=Path, required=True, help="the private ground-truth JSON file"
        )
        parser.add_argument("--format", choices=("table", "json"), default="table")

    def handle(self, *args: object, **options: object) -> None:
        try:
            test_set = load_ground_truth(options["ground_truth"])
            predictions = load_predictions(options["predictions"], test_set)
        except ScoringInputError as error:
            raise CommandError(str(error)) from None
        result = evaluate(test_set, predictions)
        if options["format"] == "json":
            self.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        else:
            self.stdout.write(render_table(result))


def render_table(result: ScoreResult) -> str:
    """A readable summary: the ten metrics, per-dataset values, and the format report."""
    lines = [f"Scorer {result.scorer_version}, {result.records} test samples", ""]
    lines.append(f"{'metric':<14} {'value':>8}   {'scored/total':>13}")
    for name in METRIC_NAMES:
        value = result.metrics[name]
        shown = (
            f"{value:8.3f}"
            if value is not None
            else " pending"
            if name.endswith("_llm")
            else "       -"
        )
        counts = result.counts.get(name)
        ratio = f"{counts['scored']}/{counts['total']}" if counts else ""
        lines.append(f"{name:<14} {shown}   {ratio:>13}")
    lines += ["", "Per dataset:"]
    for name, datasets in result.per_dataset.items():
        cells = ", ".join(f"{dataset} {value:.3f}" for dataset, value in datasets.items())
        lines.append(f"  {name:<14} {cells}")
    lines += ["", "Answers that parsed, per task:"]
    for task, counts in result.parsed.items():
        lines.append(f"  {task:<18} {counts['parsed']:>5}/{counts['total']}")
    for task, examples in result.unparsed_examples.items():
        for example in examples:
            lines.append(f"    {task} row {example.row}: {example.prediction!r}")
    return "\n".join(lines)
