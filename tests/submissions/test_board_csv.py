"""The board's CSV (`board_csv.csv_body`): written by the csv module's writer, and by
defusedcsv's when a cell may need neutralising; the bytes are defusedcsv's either way."""

import re

import pytest

from submissions import board_csv
from submissions.board_csv import CSVExtras, csv_body
from submissions.board_json import RankingRow

pytestmark = pytest.mark.unit

KEYS = ["CVS_acc", "NAP_acc"]


def row(rank, model, *, team="Lab", value=0.5, note=None, url="https://example.org/m"):
    cell = {"value": value, "ranked_value": value, "rank": rank, "interval": [value, value]}
    body = {
        "rank": rank,
        "board": "official",
        "model": model,
        "team": team,
        "model_url": url,
        "paper_url": "",
        "code_url": "",
        "is_baseline": False,
        "imported": False,
        "verified": True,
        "verified_at": "2026-08-15T10:00:00Z",
        "submitted_at": "2026-08-14T10:00:00Z",
        "date": "2026-08-15T10:00:00Z",
        "judge_pending": False,
        "judged_over": {},
        "mean_rank": 1.5,
        "wins": 2,
        "tiebreakers": {"wins": 2, "rank_sum": 3, "normalized_sum": 0.1 + 0.2},
        "metrics": {key: dict(cell) for key in KEYS},
        "submission_id": rank,
        "rank_interval": [rank, rank + 1],
        "tier": 1,
        "category_ranks": {},
        "model_facts": {"type": "open", "parameters": 7},
        "interval_note": note,
        "testset_version": "v2",
        "scorer_version": "1.0",
    }
    return RankingRow("official", body)


def always_defused(monkeypatch, rows, extra):
    with monkeypatch.context() as patched:
        patched.setattr(board_csv, "_MAY_BE_DEFUSED", re.compile(""))  # matches any text
        return csv_body(rows, KEYS, extra)


EXTRA = CSVExtras(facts=["type", "parameters"], versions=True)


@pytest.mark.parametrize(
    "rows",
    [
        [row(1, "GPT-4o"), row(2, 'A "quoted", model', team="Lab, Inc.")],
        [row(1, '=HYPERLINK("https://evil")'), row(2, "Fine")],
        [row(1, "Fine", team="+1 team"), row(2, "@mention", team="|pipe|")],
        [row(1, "Negative", value=-0.25)],
        [row(1, "Line\nbreak", team="%percent")],
        [row(1, "Plain", note="no interval (imported)", url="")],
    ],
)
def test_the_bytes_are_defusedcsvs_whichever_writer_wrote_them(monkeypatch, rows):
    assert csv_body(rows, KEYS, EXTRA) == always_defused(monkeypatch, rows, EXTRA)


def test_a_formula_is_neutralised_and_plain_rows_are_left_as_they_are():
    text = csv_body([row(1, "=SUM(A1)"), row(2, "Plain")], KEYS).decode()

    assert "\n1,'=SUM(A1),Lab,0.5,0.5," in text
    assert "\n2,Plain,Lab,0.5,0.5," in text
