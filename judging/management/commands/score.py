"""`python manage.py score --ground-truth GT.json PREDICTIONS.json [--format json]
[--judge-base-url URL --judge-model NAME]`, and for another benchmark's plugin
`python manage.py score --benchmark medsg-bench --ground-truth GT.json --box-format pixel
--format json PREDICTIONS.json`.

Scores a predictions file against a ground-truth file from the command line, with the same
loaders and metrics the platform uses. With the judge options it also runs step 2 against that
OpenAI-compatible endpoint (API key from OPENAI_API_KEY; any value for a local server) and adds
DVC_llm, VS_llm and RC_llm at full precision. Identical prompts are sent once. A bad file exits
non-zero with the precise message, never a traceback; so does a judge that could not judge a
metric at all (the metric is then null, never a substitute number).

`--benchmark KEY` scores with that benchmark plugin (benchmark/plugins.py) instead:
MedSG-Bench's `--format json` prints `{"metrics": {...}, "item_weighted": {...}, "per_task":
{...}}` at full precision (docs/medsg.md). A plugin's submission options (MedSG-Bench's box
convention) are options here too, `_` written `-`. Without `--benchmark` the command is
MedVidBench's, as it always was.

The command lives in `judging` because it uses both steps; step 1 alone needs no endpoint.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.plugins import DEFAULT_PLUGIN, BenchmarkPlugin, UnknownPlugin, get_plugin, plugins
from benchmark.scoring.errors import (
    GroundTruthError,
    PredictionsError,
    Problem,
    ScoringInputError,
)
from benchmark.scoring.rubric import JudgeOutcome, Rubric
from inference.client import EndpointConfig, EndpointError
from inference.settings import JUDGE
from judging.client import ENDPOINT_NAME, JudgeClient, judge_many


class Command(BaseCommand):
    help = "Score a MedVidBench predictions file against a ground-truth file."
    # No system checks: scoring files touches neither the database nor the web, and the checks
    # import every URLconf and view (DRF, allauth's, the admin's): ~0.15 s of a 1 s command
    # (docs/performance.md). --skip-checks is still accepted, below.
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        # Django adds --skip-checks only to commands with checks; scripts written for this
        # command when it had them keep working (same place, same help text).
        parser.add_argument("--skip-checks", action="store_true", help="Skip system checks.")
        parser.add_argument("predictions", type=Path, help="the predictions JSON file")
        parser.add_argument(
            "--ground-truth", type=Path, required=True, help="the private ground-truth JSON file"
        )
        parser.add_argument("--format", choices=("table", "json"), default="table")
        parser.add_argument(
            "--benchmark",
            default=DEFAULT_PLUGIN,
            help="the benchmark plugin to score with (default: medvidbench)",
        )
        # Every plugin's submission options, e.g. MedSG-Bench's --box-format.
        seen = set()
        for plugin in plugins().values():
            for option in plugin.submission_options:
                # A declaration is the submitter's, on the form: not the scorer's to ask.
                if option.key not in seen and option.kind == "choice":
                    seen.add(option.key)
                    parser.add_argument(
                        "--" + option.key.replace("_", "-"),
                        dest=option.key,
                        help=f"{option.label} ({plugin.key}): " + ", ".join(option.values),
                    )
        judge = parser.add_argument_group("LLM judge (step 2)")
        judge.add_argument(
            "--judge-base-url", help="an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1"
        )
        judge.add_argument("--judge-model", help="the judge model, e.g. gpt-4.1")
        judge.add_argument("--judge-concurrency", type=int, default=10)
        judge.add_argument("--judge-attempts", type=int, default=5)
        judge.add_argument("--judge-timeout", type=float, default=30.0, help="seconds per call")
        judge.add_argument("--judge-temperature", type=float, default=0.0)

    def handle(self, *args: object, **options: object) -> None:
        try:
            plugin = get_plugin(options["benchmark"])
        except UnknownPlugin as error:
            raise CommandError(str(error)) from None
        judging = options["judge_base_url"] or options["judge_model"]
        if judging and plugin.judge is None:
            raise CommandError(f"{plugin.key} has no LLM judge step; drop the --judge options.")
        if judging and not (options["judge_base_url"] and options["judge_model"]):
            raise CommandError("--judge-base-url and --judge-model go together.")
        chosen = _chosen_options(plugin, options)
        try:
            test_set = plugin.read_test_set(_read(options["ground_truth"], GroundTruthError))
            predictions = plugin.check_predictions(
                _read(options["predictions"], PredictionsError),
                test_set,
                options=chosen,
                # The command scores files on disk as they are; the upload limit is the site's.
                max_prediction_chars=None,
            )
        except ScoringInputError as error:
            raise CommandError(str(error)) from None
        result, _ = plugin.score(test_set, predictions, options=chosen)
        data = plugin.cli_report(result)
        outcome = None
        if judging:
            outcome = self.judge(plugin, test_set, predictions, options)
            data = plugin.judge.with_outcome(data, outcome)
        if options["format"] == "json":
            if outcome is not None:
                data["judge"] = outcome.to_dict()
            self.stdout.write(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            self.stdout.write(render_table(plugin, result.to_dict() if not judging else data))
        if outcome is not None and outcome.unavailable:
            raise CommandError(
                "The judge could not judge any item of "
                + ", ".join(outcome.unavailable)
                + "; see the failures above. No value is reported for it."
            )

    def judge(
        self, plugin: BenchmarkPlugin, test_set: Any, predictions: Any, options: dict
    ) -> JudgeOutcome:
        definition = plugin.definition
        rubric = Rubric.from_dict(
            definition.judge_settings(),
            template=definition.judge_rubric(),
            required_labels=plugin.judge.task_labels,
        )
        items = plugin.judge.items(test_set, predictions)
        prompts = {item.key: item.prompt(rubric) for item in items}
        first: dict[str, str] = {}  # prompt -> the key it is sent under
        for key, prompt in prompts.items():
            first.setdefault(prompt, key)
        config = EndpointConfig(
            base_url=options["judge_base_url"],
            model=options["judge_model"],
            api_key=os.environ.get("OPENAI_API_KEY", ""),
            temperature=options["judge_temperature"],
            timeout_seconds=options["judge_timeout"],
            concurrency=max(1, options["judge_concurrency"]),
            max_attempts=max(1, options["judge_attempts"]),
            # The command's user names the judge on their own machine, often a local server.
            allow_private=True,
        )
        scores: dict[str, dict[str, int] | None] = {}
        failures: list[str] = []
        done = 0

        def on_outcomes(outcomes) -> None:
            nonlocal done
            for outcome in outcomes:
                done += 1
                scores[outcome.key] = outcome.scores
                if outcome.scores is None:
                    failures.append(f"{outcome.key}: {outcome.error}")
            if sys.stderr.isatty():
                sys.stderr.write(f"\rjudged {done}/{len(first)} prompts")

        client = JudgeClient(config)
        try:
            judge_many(
                [(key, prompt) for prompt, key in first.items()],
                client=client,
                rubric=rubric,
                on_outcomes=on_outcomes,
                concurrency=config.concurrency,
                max_attempts=config.max_attempts,
                backoff=JUDGE.backoff(),
                # The same outage limits as a stored job: an unreachable judge is probed, then
                # given up on (exit 1) after PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS.
                outage=JUDGE.outage(ENDPOINT_NAME),
            )
        except EndpointError as error:
            raise CommandError(str(error)) from None
        finally:
            client.close()
        for message in failures[:10]:
            self.stderr.write(f"judge item failed: {message}")
        if len(failures) > 10:
            self.stderr.write(f"... and {len(failures) - 10} more failed items")
        verdicts = {key: scores.get(first[prompt]) for key, prompt in prompts.items()}
        return plugin.judge.outcome(test_set, items, verdicts, rubric)


def _read(path: Path, refused: type[ScoringInputError]) -> bytes:
    """The file's bytes; a file that cannot be read is refused as the loaders refuse one
    (`GroundTruthError` or `PredictionsError`, one problem), so the message is the same."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise refused([Problem(f"cannot read {path}: {error.strerror}")]) from None


def _chosen_options(plugin: BenchmarkPlugin, options: dict) -> dict[str, str]:
    """The plugin's choice options given on the command line, each checked (a declaration is
    the submitter's, on the form: not the scorer's to ask)."""
    chosen = {}
    for option in plugin.submission_options:
        if option.kind != "choice":
            continue
        value = options.get(option.key)
        flag = "--" + option.key.replace("_", "-")
        if value is None:
            if option.required:
                raise CommandError(f"{plugin.key} needs {flag}: one of {', '.join(option.values)}.")
            continue
        if value not in option.values:
            raise CommandError(f"{flag} {value!r} is not one of {', '.join(option.values)}.")
        chosen[option.key] = value
    return chosen


def render_table(plugin: BenchmarkPlugin, result: dict[str, Any]) -> str:
    """A readable summary of the stored result shape: the metrics, the per-group values and
    the format report."""
    judge_metrics = set(plugin.judge.metrics) if plugin.judge else set()
    lines = [f"Scorer {result['scorer_version']}, {result['records']} test samples", ""]
    lines.append(f"{'metric':<14} {'value':>8}   {'scored/total':>13}")
    for name, value in result["metrics"].items():
        shown = (
            f"{value:8.3f}"
            if value is not None
            else " pending"
            if name in judge_metrics
            else "       -"
        )
        counts = result.get("counts", {}).get(name)
        ratio = f"{counts['scored']}/{counts['total']}" if counts else ""
        lines.append(f"{name:<14} {shown}   {ratio:>13}")
    lines += ["", f"Per {plugin.breakdown_label}:"]
    for name, groups in result.get("per_dataset", {}).items():
        cells = ", ".join(f"{group} {value:.3f}" for group, value in groups.items())
        lines.append(f"  {name:<14} {cells}")
    lines += ["", "Answers that parsed, per task:"]
    for task, counts in result.get("parsed", {}).items():
        lines.append(f"  {task:<18} {counts['parsed']:>5}/{counts['total']}")
    for task, examples in result.get("unparsed_examples", {}).items():
        for example in examples:
            lines.append(f"    {task} row {example['row']}: {example['prediction']!r}")
    return "\n".join(lines)
