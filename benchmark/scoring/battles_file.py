"""Reading a battles file (issue 15's `rate_battles` contract): JSON Lines, one battle per line,
`{"model_a": "...", "model_b": "...", "winner": "model_a" | "model_b" | "tie"}`. Blank lines
are allowed, and so are other keys (the question, the positions, the judge's raw verdicts: an
exported battle keeps them), which are not read.

Every problem names the line (counted from 1, blank lines included, as an editor shows it),
the field and what was expected; a file with any problem is refused whole, so nothing is rated
from part of it. Each line is parsed by `strict_json` (no NaN, no repeated keys).

Plain Python, no Django.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from benchmark.scoring import strict_json
from benchmark.scoring.errors import Problem, ScoringInputError
from benchmark.scoring.json_file import ends_early
from benchmark.scoring.ratings import Battle, battle_problem, field_problem

FIELDS = ("model_a", "model_b", "winner")
EXPECTED_ROW = '{"model_a": "...", "model_b": "...", "winner": "model_a" | "model_b" | "tie"}'


class BattlesFileError(ScoringInputError):
    """A battles file that is not one valid battle per line; nothing was rated."""

    kind = "battles"


@dataclass(frozen=True, slots=True)
class LineProblem(Problem):
    """A problem on one line of a JSON Lines file: `row` is the 1-based line number."""

    def __str__(self) -> str:
        where = f"line {self.row}" + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.message}"


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"a string ({strict_json.printable(value)})"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return f"a number ({value})"


def _line_problems(
    number: int, line: str, *, file_size: int | None = None
) -> tuple[Battle | None, list[LineProblem]]:
    """The line's battle, or its problems. `file_size` is given for the file's last line,
    which may be cut off."""
    # The parser recurses once per level: a line of 100,000 "[" would exhaust the stack.
    if line.count("[") + line.count("{") > strict_json.MAX_JSON_DEPTH and (
        strict_json.nesting_problem(line.encode("utf-8", "surrogatepass"))
    ):
        message = (
            f"the JSON is nested more than {strict_json.MAX_JSON_DEPTH} levels deep; a battle "
            "is one flat object, so the line was not read"
        )
        return None, [LineProblem(message, number)]
    try:
        row = strict_json.loads(line)
    except json.JSONDecodeError as failure:
        if file_size is not None and ends_early(failure, line):
            message = (
                f"the file ends early, at byte {file_size:,}, inside this line: it looks cut "
                "off (an interrupted upload or copy); upload the whole file"
            )
            return None, [LineProblem(message, number)]
        what = failure.msg.removesuffix(" at")
        return None, [LineProblem(f"not valid JSON: {what} at column {failure.colno}", number)]
    if not isinstance(row, dict):
        return None, [
            LineProblem(f"expected a JSON object {EXPECTED_ROW}, got {_kind(row)}", number)
        ]
    problems = [
        LineProblem("appears more than once in the object", number, key)
        for key in getattr(row, "duplicates", ())
        if key in FIELDS
    ]
    for field in FIELDS:
        if field not in row:
            problems.append(LineProblem(f"missing: every battle is {EXPECTED_ROW}", number, field))
            continue
        value = row[field]
        if isinstance(value, strict_json.Rejected):
            problem = f"expected a string, got {value.describe()}"
        elif isinstance(value, str) and strict_json.text_problem(value):
            problem = f"the value {strict_json.text_problem(value)}"
        else:
            problem = field_problem(field, value)
        if problem:
            problems.append(LineProblem(problem, number, field))
    if problems:
        return None, problems
    if row["model_a"] == row["model_b"]:
        _, message = battle_problem(row["model_a"], row["model_b"], row["winner"])
        return None, [LineProblem(message, number)]
    return Battle(row["model_a"], row["model_b"], row["winner"]), []


def read_battles(data: bytes) -> list[Battle]:
    """The battles of a JSON Lines file's bytes, in file order; BattlesFileError listing every
    problem (line, field, what was expected) when any line is not a valid battle, or when the
    file holds none."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as failure:
        raise BattlesFileError(
            [
                Problem(
                    f"the file is not UTF-8 text (byte 0x{failure.object[failure.start]:02x} at "
                    f"offset {failure.start:,}); save it as UTF-8"
                )
            ]
        ) from None
    text = text.removeprefix("\ufeff")
    battles: list[Battle] = []
    problems: list[Problem] = []
    # Lines end at "\n" only (a "\r" before it is dropped): JSON strings may hold U+2028 and
    # other characters `str.splitlines` would split on.
    lines = text.split("\n")
    last = max((number for number, line in enumerate(lines, start=1) if line.strip()), default=0)
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        battle, found = _line_problems(
            number, line, file_size=len(data) if number == last else None
        )
        problems.extend(found)
        if battle is not None:
            battles.append(battle)
    if problems:
        raise BattlesFileError(problems)
    if not battles:
        raise BattlesFileError(
            [
                Problem(
                    f"the file holds no battles: expected one JSON object per line, {EXPECTED_ROW}"
                )
            ]
        )
    return battles
