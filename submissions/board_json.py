"""A board row's public representation: the rankings API's JSON row (docs/api.md), built
from the stored `BoardEntry` and its submission, and kept on the row as text (issue 16).

`ranking_rows` builds rows as plain dicts (what the API's overview, a category's tab and the
CSV show). `write_board_json`, queued on commit by every `recompute_board`, stores each row's
overview JSON, as `json.dumps` encodes it, in two parts (`BoardEntry.api_head` and
`api_tail`) around the three fields `compute_rank_intervals` fills in later (the rank
interval and tier, and `category_rank`, null on the overview): the API's page then joins
stored text (`spliced`) instead of building and encoding 1,000 rows of dicts (~80 ms of a
~95 ms page at 10,000 entries, docs/boards.md). A row without its parts (the writer has not
run since the recompute: empty) is built here as before, so a page's bytes never depend on whether
the writer ran (tests/api/test_board_json.py holds the two equal).
"""

from __future__ import annotations

import json
import logging
import math
from datetime import UTC, datetime
from typing import Any, NamedTuple

import psycopg
from django.db import connection, transaction
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from benchmark.models import Benchmark, Category, Metric

from .board_lock import hold_board
from .enums import SubmissionSource, VerificationStatus
from .models import BoardEntry, BoardPlacement
from .selectors import category_metrics, metric_value

logger = logging.getLogger(__name__)

# What `interval_note` says when a row has no interval (docs/api.md, "Intervals").
NOTE_IMPORTED = "no interval (imported)"
NOTE_NOT_COMPUTED = "no interval (not computed yet)"
NOTE_JUDGE_PENDING = "pending"
INTERVAL_NOTES = (NOTE_IMPORTED, NOTE_NOT_COMPUTED, NOTE_JUDGE_PENDING)


class RankingRow(NamedTuple):
    """One board row: the board it is on and its representation."""

    board: str
    body: dict[str, Any]


ENTRY_FIELDS = (
    "submission_id",
    "board",
    "rank",
    "mean_rank",
    "wins",
    "judge_pending",
    "rank_best",
    "rank_worst",
    "tier",
    "listed_at",
    "submission__model_name",
    "submission__team_name",
    "submission__institution",
    "submission__model_url",
    "submission__paper_url",
    "submission__code_url",
    "submission__is_baseline",
    "submission__source",
    "submission__verification_status",
    "submission__verified_at",
    "submission__created_at",
    "rank_sum",
    "normalized_sum",
)
# Read as the database's JSON text and decoded here (`_decoded`): most are `{}`, which needs
# no decoding, and Django's JSON field converter costs as much again as the decoding.
ENTRY_JSON = (
    "values",
    "judged_over",
    "intervals",
    "category_ranks",
    "rating_battles",
    "model_facts",
    "metric_ranks",
    "metric_keys",
)


class _Record(NamedTuple):
    """A row as `ranking_rows` reads it: `ENTRY_FIELDS`, then `ENTRY_JSON` decoded."""

    submission_id: int
    board: str
    rank: int
    mean_rank: float
    wins: int
    judge_pending: bool
    rank_best: int | None
    rank_worst: int | None
    tier: int | None
    listed_at: datetime
    submission__model_name: str
    submission__team_name: str
    submission__institution: str
    submission__model_url: str
    submission__paper_url: str
    submission__code_url: str
    submission__is_baseline: bool
    submission__source: str
    submission__verification_status: str
    submission__verified_at: datetime | None
    submission__created_at: datetime
    rank_sum: int
    normalized_sum: float
    values: dict[str, Any]
    judged_over: dict[str, Any]
    intervals: dict[str, Any]
    category_ranks: dict[str, int]
    rating_battles: dict[str, int]
    model_facts: dict[str, Any]
    metric_ranks: list[int]
    metric_keys: list[str]  # the metric of each of `metric_ranks`


def _decoded(text: str | None) -> Any:
    return {} if text is None or text == "{}" else json.loads(text)


def ranking_rows(
    benchmark: Benchmark,
    metrics: list[Metric],
    entries: QuerySet[BoardEntry],
    category: Category | None = None,
) -> list[RankingRow]:
    """The rows of `entries` (a board's rows, filtered, ordered and sliced) in one query; for
    a category (issue 15) with its columns only.

    Tuples rather than model instances: building 1,000 `BoardEntry` and `Submission`
    objects costs more than everything else here.
    """
    texts = {f"{name}_json": Cast(name, TextField()) for name in ENTRY_JSON}
    plain = len(ENTRY_FIELDS)
    records = [
        _Record(*row[:plain], *map(_decoded, row[plain:]))
        for row in entries.annotate(**texts).values_list(*ENTRY_FIELDS, *texts)
    ]
    return _bodies(benchmark, metrics, records, category)


def _bodies(
    benchmark: Benchmark,
    metrics: list[Metric],
    records: list[_Record],
    category: Category | None,
) -> list[RankingRow]:
    keys = [metric.key for metric in metrics]
    decimals = benchmark.ranking_decimals
    shown = [metric.key for metric in category_metrics(category, metrics)] if category else keys
    ratings = {metric.key for metric in metrics if metric.is_rating}
    rows = []
    for record in records:
        ranks = dict(zip(record.metric_keys, record.metric_ranks, strict=True))
        name = record.submission__model_name
        team = record.submission__team_name or record.submission__institution
        intervals = record.intervals
        cells = {}
        for key in shown:
            value = _metric_value(record.values.get(key))
            cell = {
                "value": value,
                # Python's round, as rank_entries rounds (round_like_python matches it).
                "ranked_value": (
                    value if value is None or decimals is None else round(value, decimals)
                ),
                "rank": ranks.get(key),
                "interval": intervals.get(key),
            }
            if key in ratings:  # a rating's battles (issue 15); only rating metrics have them
                cell["battles"] = record.rating_battles.get(key)
            cells[key] = cell
        # The keys' order is the representation's: `_HEAD_LAST` ends the stored head, the
        # three after it are `spliced` in, `_TAIL_FIRST` starts the stored tail.
        body = {
            "rank": record.rank,
            "board": record.board,
            "model": name,
            "team": team,
            "model_url": record.submission__model_url,
            "paper_url": record.submission__paper_url,
            "code_url": record.submission__code_url,
            "is_baseline": record.submission__is_baseline,
            "imported": record.submission__source == SubmissionSource.IMPORTED,
            "evaluated_by_podium": record.submission__source == SubmissionSource.HOSTED,
            "verified": record.submission__verification_status == VerificationStatus.VERIFIED,
            "verified_at": _iso(record.submission__verified_at),
            "submitted_at": _iso(record.submission__created_at),
            "date": _iso(record.listed_at),
            "judge_pending": record.judge_pending,
            "judged_over": record.judged_over,
            "mean_rank": record.mean_rank,
            "wins": record.wins,
            "tiebreakers": {
                "wins": record.wins,
                "rank_sum": record.rank_sum,
                "normalized_sum": record.normalized_sum,
            },
            "metrics": cells,
            "submission_id": record.submission_id,
            "rank_interval": (
                None if record.rank_best is None else [record.rank_best, record.rank_worst]
            ),
            "tier": record.tier,
            "category_rank": record.category_ranks.get(category.key) if category else None,
            "category_ranks": record.category_ranks,
            "model_facts": record.model_facts,
            "interval_note": _interval_note(record, intervals),
        }
        rows.append(RankingRow(record.board, body))
    return rows


def _interval_note(record: Any, intervals: dict[str, Any]) -> str | None:
    """Why the row's metrics lack intervals, or None. Per row, not per metric: the reasons
    are the row's (its run has no per-sample data; its judge step is pending), and a
    metric's own `interval` is null wherever it has none."""
    if record.submission__source == SubmissionSource.IMPORTED:
        return NOTE_IMPORTED
    if not intervals:
        return NOTE_NOT_COMPUTED  # scored before issue 12, until `compute_intervals` runs
    if record.judge_pending:
        return NOTE_JUDGE_PENDING
    return None


def _metric_value(value: Any) -> float | None:
    """`metric_value` (what the ranking compared), with a shortcut for the usual finite
    float: 10,000 calls add up."""
    return value if type(value) is float and math.isfinite(value) else metric_value(value)


def _iso(moment: datetime | None) -> str | None:
    """A time in UTC as DRF's DateTimeField prints it under TIME_ZONE = "UTC" (ISO 8601, Z).
    Not `timezone.localtime`: its lookup of the active zone cost ~5 ms per 1,000 rows."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().removesuffix("+00:00") + "Z"


# --- the stored text ------------------------------------------------------------------------------

# The JSON of a page, and so of each row in it: compact, UTF-8 as it is.
JSON_OPTIONS: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}

_HEAD_LAST = "submission_id"
_SPLICED = ("rank_interval", "tier", "category_rank")
_TAIL_FIRST = "category_ranks"


def row_parts(body: dict[str, Any]) -> tuple[str, str]:
    """An overview row's JSON without `_SPLICED`: the text before them (ending in a comma)
    and after them. `json.dumps` of a dict is its items' encodings in order between braces,
    so `spliced` of the parts is `json.dumps(body)`."""
    keys = list(body)
    cut, resume = keys.index(_HEAD_LAST) + 1, keys.index(_TAIL_FIRST)
    assert tuple(keys[cut:resume]) == _SPLICED, keys  # the representation's order (`_bodies`)
    head = json.dumps({key: body[key] for key in keys[:cut]}, **JSON_OPTIONS)
    tail = json.dumps({key: body[key] for key in keys[resume:]}, **JSON_OPTIONS)
    return head[:-1] + ",", tail[1:]


def spliced(head: str, tail: str, rank_best: int | None, rank_worst: int | None, tier: Any) -> str:
    """An overview row's JSON from its stored parts and its rank interval and tier (positive
    integers or None, as `json.dumps` writes them)."""
    interval = "null" if rank_best is None else f"[{rank_best:d},{rank_worst:d}]"
    tier_text = "null" if tier is None else f"{tier:d}"
    return f'{head}"rank_interval":{interval},"tier":{tier_text},"category_rank":null,{tail}'


_PAGE_FIELDS = ("api_head", "api_tail", "rank_best", "rank_worst", "tier")


def overview_rows_json(entries: QuerySet[BoardEntry]) -> list[str] | None:
    """The JSON of each row of `entries` (a page, in its order) on the overview, from the
    stored parts in one query of five columns; None if a row lacks them (the writer has not
    run since the recompute): `ranking_rows` then builds the page."""
    rows = list(entries.values_list(*_PAGE_FIELDS))
    if any(not row[0] for row in rows):
        return None
    return [spliced(*row) for row in rows]


def write_board_json(benchmark: Benchmark, *, batch: int = 2000) -> int:
    """Store every board row's overview JSON (`api_head`, `api_tail`): the one writer of the
    two, queued on commit by every `recompute_board` (which writes the rows without them).

    Reads the rows as the API does (`ranking_rows`), `batch` at a time in the order of both
    boards (`overall_position`, 1 to the rows), each batch a range of that index, and
    updates them by primary key (`_write_parts`). A range, not a list of keys: the planner
    knows a freshly rewritten table only from stale statistics, and took a batch of 2,000
    keys for a scan of the whole board (0.4 s a batch, 20 of the 43 s a 100,000-row board
    took). A recompute meanwhile replaced the rows with new ones (new keys), so what was
    read of an older board lands nowhere, and the newer board's rows are read as they are.
    Rows that have their parts already are skipped. Idempotent. Returns the rows written.
    """
    metrics = list(benchmark.metrics.all())
    rows = BoardEntry.objects.filter(benchmark=benchmark)
    last = rows.order_by("-overall_position").values_list("overall_position", flat=True).first()
    written = 0
    for start in range(0, last or 0, batch):
        entries = rows.filter(
            overall_position__gt=start, overall_position__lte=start + batch, api_head=""
        ).order_by("overall_position")
        row_of = dict(entries.values_list("submission_id", "pk"))  # the rows still there
        parts = [
            (*row_parts(row.body), row_of[row.body["submission_id"]])
            for row in ranking_rows(benchmark, metrics, entries.filter(pk__in=row_of.values()))
        ]
        if parts:
            _write_parts(benchmark.pk, parts)
        written += len(parts)
    logger.info("board JSON of %s: %d rows", benchmark.slug, written)
    return written


def _write_parts(benchmark_id: int, parts: list[tuple[str, str, int]]) -> None:
    """(head, tail, primary key) written: on PostgreSQL one UPDATE joined to the arrays of
    them (`unnest`), ~3x faster than an UPDATE per row; elsewhere an UPDATE per row.

    On PostgreSQL the arrays go as parameters in binary, through a cursor of psycopg's that
    binds them on the server: Django's cursor binds on the client, which escapes every text
    into one literal (a regular expression per text: 6 of the 15 s a 100,000-row board's
    writes took) that the server then parses back."""
    meta = BoardPlacement._meta
    quote = connection.ops.quote_name
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    head, tail = quote("api_head"), quote("api_tail")
    with transaction.atomic(), connection.cursor() as cursor:
        # A recompute deletes the rows this updates, in an order of its own: the benchmark's
        # lock first (`board_lock`), so neither waits for a row the other holds.
        hold_board(benchmark_id)
        if connection.vendor == "postgresql":
            heads, tails, keys = (list(column) for column in zip(*parts, strict=True))
            with psycopg.Cursor(connection.connection) as binding:
                binding.execute(
                    f"UPDATE {table} SET {head} = new.head, {tail} = new.tail FROM "
                    "unnest(%s::text[], %s::text[], %s::bigint[]) AS new(head, tail, id) "
                    f"WHERE {table}.{pk} = new.id",
                    [heads, tails, keys],
                    binary=True,
                )
        else:
            cursor.executemany(
                f"UPDATE {table} SET {head} = %s, {tail} = %s WHERE {pk} = %s", parts
            )


def enqueue_board_json(benchmark_id: int) -> None:
    # Imported here, as in enqueue_scoring: django_q reads its settings at import.
    from django_q.tasks import async_task

    async_task(
        "submissions.tasks.task_write_board_json", benchmark_id, q_options={"group": "boards"}
    )
