"""The rankings `?as_of=<date or datetime>` (issue 33, docs/boards.md "As of"): the rows of the
latest board snapshot taken at or before that moment, with every parameter the live rankings
take (board, sort, filters, category, pages; JSON and CSV), the same shapes, and the snapshot
named in the JSON (`as_of`). A moment before the first snapshot is a 404 naming its date.

Called by `api.rankings.RankingsView` with the parameters it validated; imports nothing of it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import urlencode

from django.http import HttpResponse
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_cache_control
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request

from benchmark.models import Benchmark, Category
from submissions.board_csv import CSVExtras, csv_body
from submissions.board_json import JSON_OPTIONS, RankingRow, _iso
from submissions.enums import BoardKind
from submissions.models import BoardSnapshot
from submissions.selectors import BoardSort, parse_board_filter
from submissions.snapshot_board import parse_as_of, snapshot_selection
from submissions.snapshots import decoded_snapshot, first_snapshot, ranking_body, snapshot_as_of

from .rankings_page import page_bounds, page_json

ALL_BOARDS = "all"


def snapshot_for(benchmark: Benchmark, raw: str) -> BoardSnapshot:
    """The snapshot `?as_of=` names: 400 for a value that is no moment, 404 before the first."""
    try:
        moment = parse_as_of(raw)
    except ValueError as error:
        raise ValidationError({"as_of": [str(error)]}) from None
    snapshot = snapshot_as_of(benchmark, moment)
    if snapshot is None:
        first = first_snapshot(benchmark)
        if first is None:
            raise NotFound(f"{benchmark.name}'s boards have no snapshot yet.")
        raise NotFound(
            f"{benchmark.name}'s boards have no snapshot as of {raw.strip()}: the first was "
            f"taken on {first.taken_at.date().isoformat()} ({_iso(first.taken_at)})."
        )
    return snapshot


def as_of_selection(
    benchmark: Benchmark, snapshot: BoardSnapshot, query: dict[str, Any], category: Category | None
) -> list[dict[str, Any]]:
    """The snapshot's rows the parameters select, in their order (kept with the snapshot:
    a page of 100,000 rows filters and sorts none once asked). Shared: not to be changed."""
    board_filter = parse_board_filter(query["q"], query["tag"], query, asked=benchmark.fact_keys)
    boards = BoardKind.values if query["board"] == ALL_BOARDS else [query["board"]]
    sort = BoardSort(query["sort"], descending=query["direction"] == "desc")
    key = category.key if category else ""
    return snapshot_selection(decoded_snapshot(snapshot), boards, board_filter, sort, key)


def as_of_rows(
    selected: list[dict[str, Any]], category: Category | None, shown_keys: list[str]
) -> list[RankingRow]:
    """`selected` (snapshot rows) as rankings rows (a category's with its columns and
    `category_rank`)."""
    key = category.key if category else ""
    rows = []
    for row in selected:
        body = ranking_body(row)
        if category is not None:
            body["metrics"] = {
                name: cell for name, cell in body["metrics"].items() if name in shown_keys
            }
            body["category_rank"] = (row["category_ranks"] or {}).get(key)
            body["rank_interval"], body["tier"] = None, None
        rows.append(RankingRow(row["board"], body))
    return rows


def as_of_response(
    request: Request,
    benchmark: Benchmark,
    query: dict[str, Any],
    category: Category | None,
    shown_keys: list[str],
    kind: str,
    canonical: dict[str, Any],
) -> HttpResponse:
    """The rankings response for `?as_of=` (`kind`: "json", "json-whole" or "csv")."""
    snapshot = snapshot_for(benchmark, query["as_of"])
    keys = [key for key in snapshot.metric_keys if key in shown_keys]
    source = "|".join(["as_of", str(snapshot.pk), snapshot.sha256, kind, urlencode(canonical)])
    etag = f'"{hashlib.sha256(source.encode()).hexdigest()[:32]}"'
    not_modified = get_conditional_response(request, etag=etag)
    if not_modified is not None:
        response = not_modified
    else:
        selected = as_of_selection(benchmark, snapshot, query, category)
        if kind == "csv":
            rows = as_of_rows(selected, category, keys)
            extra = CSVExtras(
                category=category is not None,
                ratings=[key for key in keys if _is_rating(rows, key)],
                facts=list(benchmark.fact_keys),
            )
            response = HttpResponse(
                csv_body(rows, keys, extra), content_type="text/csv; charset=utf-8"
            )
        else:
            link_base = request.build_absolute_uri(request.path)
            body = _page(benchmark, snapshot, selected, category, keys, query, canonical,
                         link_base, request, whole=kind == "json-whole")  # fmt: skip
            response = HttpResponse(body, content_type="application/json")
        if kind != "json":
            extension = "csv" if kind == "csv" else "json"
            day = snapshot.taken_at.date().isoformat()
            name = f"{benchmark.slug}-{query['board']}-rankings-as-of-{day}.{extension}"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["ETag"] = etag
    visibility = {"public": True} if benchmark.is_public else {"private": True}
    patch_cache_control(response, no_cache=True, **visibility)
    return response


def _is_rating(rows: list[RankingRow], key: str) -> bool:
    return any("battles" in row.body["metrics"].get(key, {}) for row in rows)


def _page(
    benchmark: Benchmark,
    snapshot: BoardSnapshot,
    selected: list[dict[str, Any]],
    category: Category | None,
    keys: list[str],
    query: dict[str, Any],
    canonical: dict[str, Any],
    link_base: str,
    request: Request,
    *,
    whole: bool,
) -> bytes:
    count = len(selected)
    bounds = page_bounds(query, count, whole=whole)
    as_of = {
        "id": snapshot.pk,
        "taken_at": _iso(snapshot.taken_at),
        "sha256": snapshot.sha256,
        "url": request.build_absolute_uri(
            reverse("submissions:snapshot", args=[benchmark.slug, snapshot.pk])
        ),
    }
    shown = selected[bounds.start : bounds.start + bounds.size]
    if category is None:
        # The overview's rows as the snapshot holds them: each row's JSON encoded once per
        # process and kept with the decoded snapshot (a sealed snapshot never changes), as the
        # live page joins its rows' stored JSON.
        encoded = decoded_snapshot(snapshot).derived("row-json", dict)
        texts = []
        for row in shown:
            text = encoded.get(row["submission_id"])
            if text is None:
                text = encoded[row["submission_id"]] = json.dumps(ranking_body(row), **JSON_OPTIONS)
            texts.append(text)
    else:  # a tab's columns and ranks: only the page's rows made rankings rows
        texts = [json.dumps(row.body, **JSON_OPTIONS) for row in as_of_rows(shown, category, keys)]
    return page_json(benchmark.slug, query, canonical, link_base, bounds, count, keys,
                     snapshot.taken_at, texts, as_of=as_of).encode()  # fmt: skip
