"""Errors raised when a ground-truth or predictions file cannot be scored.

The scorer never lets a traceback reach a user: every input problem becomes a
`Problem` that names the row, the field and what was expected. Django code maps
these onto `core.exceptions.InvalidPredictions`; this package must not import it.
"""

from __future__ import annotations

from dataclasses import dataclass

# How many problems a message spells out; the rest are counted, not listed.
MAX_LISTED_PROBLEMS = 10


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input file.

    `row` is the 0-based position in the JSON list (None for file-level problems),
    `field` the key at fault ("" when the row itself is wrong).
    """

    message: str
    row: int | None = None
    field: str = ""

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class ScoringInputError(ValueError):
    """An input file was rejected; nothing was scored."""

    kind = "input"

    def __init__(self, problems: list[Problem], *, total: int | None = None) -> None:
        if not problems:
            raise ValueError("ScoringInputError needs at least one problem")
        self.problems = problems
        self.total = total if total is not None else len(problems)
        super().__init__(self.render())

    def render(self) -> str:
        shown = self.problems[:MAX_LISTED_PROBLEMS]
        lines = [f"The {self.kind} file was rejected ({self.total} problem(s)):"]
        lines += [f"  - {problem}" for problem in shown]
        hidden = self.total - len(shown)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more problem(s) not listed.")
        return "\n".join(lines)


class GroundTruthError(ScoringInputError):
    """The maintainers' ground-truth file does not follow the official format."""

    kind = "ground-truth"


class PredictionsError(ScoringInputError):
    """A submitted predictions file does not fit the test set."""

    kind = "predictions"
