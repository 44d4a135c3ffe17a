"""A board as a snapshot holds it (issue 33, docs/boards.md "As of"): its rows filtered,
sorted and shown by the rules the live board's queries follow (`board_page.board_ordering`,
`filter_board_entries`, `boards.board_row`), in Python over the snapshot's stored rows, so
an "as of" page and the rankings' `?as_of=` offer everything the live ones do."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, time
from types import SimpleNamespace
from typing import Any

from django.utils.dateparse import parse_datetime

from benchmark.models import Category, Metric

from .board_json import NOTE_IMPORTED, NOTE_NOT_COMPUTED
from .enums import BoardKind, SubmissionSource
from .selectors import (
    NO_INTERVALS,
    BoardFilter,
    BoardIntervals,
    BoardRow,
    BoardSort,
    BoardSummary,
    board_row,
)
from .snapshots import DecodedSnapshot

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_as_of(text: str) -> datetime:
    """The moment `?as_of=` names: an ISO 8601 date (its end: a board "as of 15 August" is
    the board at the end of that day, UTC) or date and time (UTC unless it says otherwise).
    `ValueError` saying what was expected."""
    text = text.strip()
    if _DATE.fullmatch(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"as_of {text!r} is not a date.") from None
        return datetime.combine(day, time.max, tzinfo=UTC)
    try:
        moment = parse_datetime(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        moment = None
    if moment is None:
        raise ValueError(
            f"as_of {text[:40]!r} is not an ISO 8601 date or date and time "
            "(e.g. 2026-08-15 or 2026-08-15T12:00:00Z)."
        )
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59-01:00 is past the last moment Python can hold
        return (
            datetime.max.replace(tzinfo=UTC)
            if moment.year > 1
            else datetime.min.replace(tzinfo=UTC)
        )


def _tagged(row: dict[str, Any], tag: str) -> bool:
    return {
        "verified": lambda: row["verified"],
        "baseline": lambda: row["is_baseline"],
        "imported": lambda: row["imported"],
        "paper": lambda: bool(row["paper_url"]),
        "code": lambda: bool(row["code_url"]),
    }[tag]()


def _fact_matches(stored: Any, value: str) -> bool:
    if isinstance(stored, bool):
        return value == ("yes" if stored else "no") or value == str(stored).lower()
    return stored is not None and str(stored) == value


def snapshot_filtered(
    rows: Iterable[dict[str, Any]], boards: Sequence[str], board_filter: BoardFilter
) -> list[dict[str, Any]]:
    """The rows of `boards` the filter selects (`filter_board_entries`' rule)."""
    needle = board_filter.text.casefold()
    low, high = board_filter.size
    found = []
    for row in rows:
        if row["board"] not in boards:
            continue
        if (
            needle
            and needle not in row["model"].casefold()
            and needle not in row["team"].casefold()
        ):
            continue
        if board_filter.tag and not _tagged(row, board_filter.tag):
            continue
        facts = row["model_facts"] or {}
        if any(not _fact_matches(facts.get(key), value) for key, value in board_filter.facts):
            continue
        size = facts.get("parameters")
        if (low is not None or high is not None) and not isinstance(size, int | float):
            continue
        if (low is not None and size < low) or (high is not None and size > high):
            continue
        found.append(row)
    return found


def _sort_value(row: dict[str, Any], key: str) -> Any:
    if key == "model":
        return row["model"].casefold() or None
    if key == "team":
        return row["team"].casefold() or None
    if key == "date":
        return row["date"]
    cell = row["metrics"].get(key)
    return None if cell is None else cell["value"]


def snapshot_sorted(
    rows: list[dict[str, Any]], sort: BoardSort, category: str = ""
) -> list[dict[str, Any]]:
    """`rows` in `board_ordering`'s order: by the column, equal values in rank order (the
    category's rank on its tab), empty ones last either way; then the submission, as the
    rankings order both boards' shared ranks."""

    def rank_key(row: dict[str, Any]) -> tuple[Any, ...]:
        if category:
            place = (row["category_ranks"] or {}).get(category)
            return (place is None, place or 0, row["rank"], row["submission_id"])
        return (row["rank"], row["submission_id"])

    ranked = sorted(rows, key=rank_key)
    if sort.key == "rank":
        if not sort.descending:
            return ranked
        if category:  # the category's rank descending, rows without one first (nulls first)
            return sorted(
                ranked,
                key=lambda row: (
                    (row["category_ranks"] or {}).get(category) is not None,
                    -((row["category_ranks"] or {}).get(category) or 0),
                    -row["rank"],
                    -row["submission_id"],
                ),
            )
        return ranked[::-1]
    present = [row for row in ranked if _sort_value(row, sort.key) is not None]
    missing = [row for row in ranked if _sort_value(row, sort.key) is None]
    # Python's sort is stable in either direction: equal values keep their rank order.
    present.sort(key=lambda row: _sort_value(row, sort.key), reverse=sort.descending)
    return present + missing


def snapshot_board_row(
    row: dict[str, Any],
    metrics: list[Metric],
    *,
    category: Category | None = None,
    facts: Sequence[str] = (),
) -> BoardRow:
    """A snapshot row as the table prints it: the live board's own `board_row`, given the
    snapshot's row in the shape of the `BoardEntry` it was written from."""
    cells = row["metrics"]
    # A run without intervals (an imported row, one scored before issue 12) held none.
    without = row["interval_note"] in (NOTE_IMPORTED, NOTE_NOT_COMPUTED)
    source = (
        SubmissionSource.IMPORTED
        if row["imported"]
        else SubmissionSource.HOSTED
        if row["evaluated_by_podium"]
        else SubmissionSource.UPLOAD
    )
    submission = SimpleNamespace(
        pk=row["submission_id"],
        model_name=row["model"],
        model_url=row["model_url"],
        team_name=row["team"],
        institution="",
        is_verified=row["verified"],
        is_baseline=row["is_baseline"],
        source=source,
        verified_at=_moment(row["verified_at"]),
        paper_url=row["paper_url"],
        code_url=row["code_url"],
    )
    interval = row["rank_interval"]
    entry = SimpleNamespace(
        submission=submission,
        values={key: cell["value"] for key, cell in cells.items()},
        intervals={} if without else {key: cell["interval"] for key, cell in cells.items()},
        rating_battles={
            key: cell["battles"] for key, cell in cells.items() if cell.get("battles") is not None
        },
        judged_over=row["judged_over"],
        highlights=row["highlights"],
        judge_pending=row["judge_pending"],
        rank=row["rank"],
        position=row["position"],
        category_ranks=row["category_ranks"],
        mean_rank=row["mean_rank"],
        wins=row["wins"],
        listed_at=_moment(row["date"]),
        rank_best=interval[0] if interval else None,
        rank_worst=interval[1] if interval else None,
        tier=row["tier"],
        model_facts=row["model_facts"],
    )
    return board_row(entry, metrics, category=category, facts=facts)  # type: ignore[arg-type]


def _moment(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


def snapshot_board_summary(
    rows: Sequence[dict[str, Any]], metrics: Sequence[Metric], taken_at: datetime
) -> BoardSummary:
    """What `selectors.board_summary` says of the live boards, said of a snapshot's rows: the
    counts, the intervals' state, each board's first rank, its filled metrics (by
    `boards.writer._filled_metrics`' rule) and whether some row names a team."""
    counts = dict.fromkeys(BoardKind.values, 0)
    first_ranks = dict.fromkeys(BoardKind.values, 1)
    filled: dict[str, list[str] | None] = dict.fromkeys(BoardKind.values, None)
    intervals = dict.fromkeys(BoardKind.values, NO_INTERVALS)
    teams = set()
    for board in BoardKind.values:
        on_board = [row for row in rows if row["board"] == board]
        if not on_board:
            continue
        counts[board] = len(on_board)
        first_ranks[board] = min(row["rank"] for row in on_board)
        if any(row["team"] for row in on_board):
            teams.add(board)
        pending = any(row["judge_pending"] for row in on_board)
        filled[board] = [
            metric.key
            for metric in metrics
            if metric.is_rating
            or any(
                (row["metrics"].get(metric.key) or {}).get("value") is not None for row in on_board
            )
            or (metric.is_judge_metric and pending)
        ]
        ready = all(row["rank_interval"] for row in on_board)
        with_intervals = any(
            row["interval_note"] not in (NOTE_IMPORTED, NOTE_NOT_COMPUTED) for row in on_board
        )
        intervals[board] = BoardIntervals(
            ready=ready,
            computing=False,  # a snapshot is written with its rank intervals
            has_tiers=ready and all(row["tier"] is not None for row in on_board),
            any_intervals=ready or with_intervals,
        )
    return BoardSummary(
        counts=counts,
        computed_at=taken_at,
        intervals=intervals,
        first_ranks=first_ranks,
        filled_metrics=filled,
        teams=teams,
    )


# --- kept per snapshot ------------------------------------------------------------------------
# What the pages and the rankings ask of a snapshot's rows, derived once per question and kept
# with its decoded rows (`snapshots.DecodedSnapshot`): a sealed snapshot never changes.


def _filter_key(board_filter: BoardFilter) -> tuple[Any, ...]:
    # What selects rows (not the columns shown, nor the notes of what was ignored).
    return (board_filter.text, board_filter.tag, board_filter.facts, board_filter.size)


def snapshot_selection(
    snapshot: DecodedSnapshot,
    boards: Sequence[str],
    board_filter: BoardFilter,
    sort: BoardSort,
    category: str = "",
) -> list[dict[str, Any]]:
    """The rows of `boards` the filter selects in the sort's order (`snapshot_filtered`, then
    `snapshot_sorted`), kept with the snapshot. Shared: not to be changed."""
    key = ("selection", tuple(boards), _filter_key(board_filter), sort, category)
    return snapshot.derived(
        key,
        lambda: snapshot_sorted(
            snapshot_filtered(snapshot.rows, boards, board_filter), sort, category
        ),
    )


def snapshot_chart_rows(
    snapshot: DecodedSnapshot, board: str, board_filter: BoardFilter, count: int
) -> list[dict[str, Any]]:
    """The first `count` rows of `board` the filter selects, in board order (the chart's,
    `board_chart_entries`), kept with the snapshot."""
    key = ("chart", board, _filter_key(board_filter), count)

    def first() -> list[dict[str, Any]]:
        found = snapshot_filtered(snapshot.rows, [board], board_filter)[:count]
        return sorted(found, key=lambda row: row["position"])

    return snapshot.derived(key, first)


def snapshot_summary_of(
    snapshot: DecodedSnapshot, metrics: Sequence[Metric], taken_at: datetime
) -> BoardSummary:
    """`snapshot_board_summary` of the snapshot's rows, kept with it (per the metrics' kinds)."""
    kinds = tuple((metric.key, metric.is_rating, metric.is_judge_metric) for metric in metrics)
    return snapshot.derived(
        ("summary", kinds, taken_at),
        lambda: snapshot_board_summary(snapshot.rows, metrics, taken_at),
    )
