"""`python manage.py rate_battles BATTLES.jsonl [--format table|json] [--anchor MODEL]
[--rounds B] [--seed S]`.

Bradley-Terry ratings on the Elo scale with 95% percentile bootstrap intervals for a battles
file (docs/ratings.md). The file is JSON Lines, one battle per line,
`{"model_a": "...", "model_b": "...", "winner": "model_a" | "model_b" | "tie"}`; blank lines and
other keys are allowed. `--format json` prints exactly one JSON object on stdout,
`{"ratings": {model: {"rating", "ci_low", "ci_high", "battles"}}}` (an interval end is null
when it is unbounded); the default is a table. A file with any bad line, battles without
finite ratings, or an unknown anchor exit non-zero with the reason on stderr (line, field,
what was expected; or the models at fault) and nothing on stdout.

The command reads a file and writes to the terminal: no database, no model.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.scoring.battles_file import read_battles
from benchmark.scoring.errors import ScoringInputError
from benchmark.scoring.ratings import (
    DEFAULT_ROUNDS,
    DEFAULT_SEED,
    RatingError,
    Ratings,
    rate_battles,
)


class Command(BaseCommand):
    help = "Rate models from a JSON Lines file of pairwise battles (Bradley-Terry, Elo scale)."
    # It touches no model, setting or database: the system checks would only slow it down.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("battles", type=Path, help="the battles file, one JSON object a line")
        parser.add_argument("--format", choices=("table", "json"), default="table")
        parser.add_argument(
            "--anchor",
            metavar="MODEL",
            help="pin this model at 1000 (default: the mean of all ratings is 1000)",
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=DEFAULT_ROUNDS,
            metavar="B",
            help=f"bootstrap rounds for the 95%% intervals (default {DEFAULT_ROUNDS})",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=DEFAULT_SEED,
            metavar="S",
            help=f"seed of the bootstrap resampling (default {DEFAULT_SEED})",
        )

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["battles"]
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}") from None
        try:
            ratings = rate_battles(
                read_battles(data),
                anchor=options["anchor"],
                rounds=options["rounds"],
                seed=options["seed"],
            )
        except (ScoringInputError, RatingError) as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(ratings.to_dict(), ensure_ascii=False))
            if ratings.degenerate_rounds and options["verbosity"]:
                self.stderr.write(degenerate_note(ratings))
        else:
            self.stdout.write(render_table(ratings))


def degenerate_note(ratings: Ratings) -> str:
    return (
        f"note: {ratings.degenerate_rounds:,} of {ratings.rounds:,} bootstrap rounds left some "
        "model without a finite rating; an interval end those rounds reach is unbounded "
        "(null), see docs/ratings.md"
    )


def _end(value: float | None) -> str:
    return "unbounded" if value is None else f"{value:.2f}"


def _margins(row) -> str:
    above = "inf" if row.ci_high is None else f"{row.ci_high - row.rating:.2f}"
    below = "inf" if row.ci_low is None else f"{row.rating - row.ci_low:.2f}"
    return f"+{above}/-{below}"


def render_table(ratings: Ratings) -> str:
    """The ratings highest first, with the interval's ends and its margins (MEDIC's
    "+19/-18")."""
    centre = f"{ratings.anchor} = 1000" if ratings.anchor else "mean 1000"
    width = max(len("model"), *(len(row.model) for row in ratings.models))
    lines = [
        f"Bradley-Terry ratings, Elo scale ({centre}); {ratings.level:.0%} percentile "
        f"bootstrap intervals from {ratings.rounds:,} rounds, seed {ratings.seed}",
        "",
        f"{'model':<{width}}  {'rating':>9}  {'ci_low':>9}  {'ci_high':>9}  "
        f"{'margins':>17}  {'battles':>8}",
    ]
    lines += [
        f"{row.model:<{width}}  {row.rating:>9.2f}  {_end(row.ci_low):>9}  "
        f"{_end(row.ci_high):>9}  {_margins(row):>17}  {row.battles:>8,}"
        for row in ratings.models
    ]
    if ratings.degenerate_rounds:
        lines += ["", degenerate_note(ratings).removeprefix("note: ").capitalize()]
    return "\n".join(lines)
