"""A board's rows as CSV (docs/api.md): the columns and the bytes, the same values as the
rankings API's JSON rows (`board_json.ranking_rows`). Below the API so a board snapshot
(`submissions.snapshots`) writes the same file the rankings' CSV download is.

Cells are written by defusedcsv, which neutralises spreadsheet formulas the usual way (OWASP's
"CSV injection"): a text cell starting with `=`, `+`, `-`, `@`, `|` or `%` gets a leading `'`
(and its `|` are escaped), so a spreadsheet shows a model named `=HYPERLINK(...)` as text
instead of running it. Numbers are written as they are, negative ones included; the JSON keeps
every text exact (docs/api.md). A leading tab or carriage return, the other two OWASP triggers,
cannot reach a cell: names refuse control characters and the other text cells are URLs, dates
and numbers Podium writes itself.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from typing import Any

from defusedcsv import csv as defused_csv

from .board_json import RankingRow


@dataclass(frozen=True)
class CSVExtras:
    """The columns a board with categories, ratings or model facts adds (issue 15), after
    every column a board without them has (so those keep their places): `category_rank` on a
    category's tab, `<key>_battles` per rating metric shown, then each model fact asked; and,
    in a board snapshot's CSV (issue 33), last, the row's `testset_version` and
    `scorer_version` (what its numbers were scored against)."""

    category: bool = False
    ratings: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    versions: bool = False

    def header(self) -> list[str]:
        return [
            *(["category_rank"] if self.category else []),
            *[f"{key}_battles" for key in self.ratings],
            *self.facts,
            *(["testset_version", "scorer_version"] if self.versions else []),
        ]

    def cells(self, body: dict[str, Any]) -> list[Any]:
        facts = body["model_facts"]
        return [
            *([body["category_rank"]] if self.category else []),
            *[body["metrics"][key].get("battles") for key in self.ratings],
            *[facts.get(key) for key in self.facts],
            *([body["testset_version"], body["scorer_version"]] if self.versions else []),
        ]


def csv_header(keys: list[str], extra: CSVExtras | None = None) -> list[str]:
    """The HTML board's columns in its order (`submissions.selectors.board_columns`: rank,
    model, team, the metrics, date), then the rest of a JSON row: each metric's interval as
    `<key>_low`, `<key>_high` (metric by metric) and the rank interval as `rank_best`,
    `rank_worst`, then the `extra` columns, last. An empty cell is a null."""
    return [
        "rank",
        "model",
        "team",
        *keys,
        "date",
        "board",
        "verified",
        "verified_at",
        "submitted_at",
        "judge_pending",
        "judged_over",
        "mean_rank",
        "wins",
        "rank_sum",
        "normalized_sum",
        "is_baseline",
        "imported",
        "model_url",
        "paper_url",
        "code_url",
        "submission_id",
        *[f"{key}_ranked_value" for key in keys],
        *[f"{key}_rank" for key in keys],
        # Issue 12: appended, so the columns before keep their places for existing scripts.
        *[f"{key}_{end}" for key in keys for end in ("low", "high")],
        "rank_best",
        "rank_worst",
        "tier",
        "interval_note",
        *(extra.header() if extra else []),
    ]


def csv_body(rows: list[RankingRow], keys: list[str], extra: CSVExtras | None = None) -> bytes:
    """The rows as CSV, the same values as the JSON: floats at full precision (`repr`, as
    JSON prints them), empty for null (the csv module writes None so), true/false for booleans.

    Written by the csv module's own writer, and again by defusedcsv's only when some cell
    starts with a character it neutralises (`_MAY_BE_DEFUSED`, a negative number included):
    the bytes are defusedcsv's either way, without its Python call per cell (7.6 million at
    100,000 rows, most of a board snapshot's CSV, bench/snapshots.py)."""
    header = csv_header(keys, extra)
    lines = []
    for row in rows:
        body = row.body
        metrics, tiebreakers = body["metrics"], body["tiebreakers"]
        lines.append(
            [
                body["rank"],
                body["model"],
                body["team"],
                *[metrics[key]["value"] for key in keys],
                body["date"],
                body["board"],
                BOOLEAN_TEXT[body["verified"]],
                body["verified_at"],
                body["submitted_at"],
                BOOLEAN_TEXT[body["judge_pending"]],
                judged_over_text(body["judged_over"]),
                body["mean_rank"],
                body["wins"],
                tiebreakers["rank_sum"],
                tiebreakers["normalized_sum"],
                BOOLEAN_TEXT[body["is_baseline"]],
                BOOLEAN_TEXT[body["imported"]],
                body["model_url"],
                body["paper_url"],
                body["code_url"],
                body["submission_id"],
                *[metrics[key]["ranked_value"] for key in keys],
                *[metrics[key]["rank"] for key in keys],
                *[end for key in keys for end in (metrics[key]["interval"] or (None, None))],
                *(body["rank_interval"] or (None, None)),
                body["tier"],
                body["interval_note"],
                *(extra.cells(body) if extra else []),
            ]
        )
    text = _written(csv.writer, header, lines)
    if _MAY_BE_DEFUSED.search(text):
        text = _written(defused_csv.writer, header, lines)
    return text.encode()


# A cell starting with a character defusedcsv neutralises (its `_escape`): at a line's start,
# after a delimiter or after a quote (a quoted cell's first character). A quoted cell's own
# line break or quote may match too, and costs only the second writing.
_MAY_BE_DEFUSED = re.compile(r'(?:^|[,"])[@+\-=|%]', re.MULTILINE)


def _written(writer: Any, header: list[str], lines: list[list[Any]]) -> str:
    stream = io.StringIO()
    out = writer(stream, lineterminator="\n")
    out.writerow(header)
    out.writerows(lines)
    return stream.getvalue()


def judged_over_text(judged_over: dict[str, dict[str, int]]) -> str:
    """ "VS_llm 2460/2472" per metric accepted over a subset, "; " between; "" for none."""
    return "; ".join(
        f"{key} {counts['judged']}/{counts['items']}" for key, counts in judged_over.items()
    )


# As JSON spells them (the csv module would write True / False).
BOOLEAN_TEXT = {True: "true", False: "false"}
