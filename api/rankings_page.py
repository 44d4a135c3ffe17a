"""A rankings JSON page's frame, shared by the live rankings (`api.rankings`) and `?as_of=`
(`api.rankings_as_of`): which rows a page holds, and the page's JSON around its rows' own
encodings (joined, not decoded and encoded again)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from rest_framework.exceptions import NotFound

from submissions.board_json import JSON_OPTIONS, _iso


@dataclass(frozen=True)
class PageBounds:
    number: int
    size: int
    last: int
    start: int  # the first row's index


def page_bounds(query: dict[str, Any], count: int, *, whole: bool) -> PageBounds:
    """The page `query` asks for among `count` rows (every row when `whole`); 404 past the
    last."""
    number, size = query["page"], query["page_size"]
    if whole:
        number, size = 1, max(1, count)
    last = max(1, math.ceil(count / size))
    if number > last:
        raise NotFound("Invalid page.")
    return PageBounds(number=number, size=size, last=last, start=(number - 1) * size)


def page_json(
    slug: str,
    query: dict[str, Any],
    canonical: dict[str, Any],
    link_base: str,
    bounds: PageBounds,
    count: int,
    keys: list[str],
    computed_at: datetime | None,
    rows: list[str],
    **extra: Any,
) -> str:
    """The page: its links and counts, any `extra` fields, then its rows' JSON in `results`
    (`json.dumps` of the page is its rows' encodings, comma-separated, in `results`, last)."""

    def link(page: int) -> str:
        return f"{link_base}?{urlencode({**canonical, 'page': page})}"

    head = {
        "benchmark": slug,
        "board": query["board"],
        "computed_at": _iso(computed_at),
        "count": count,
        "next": link(bounds.number + 1) if bounds.number < bounds.last else None,
        "previous": link(bounds.number - 1) if bounds.number > 1 else None,
        "category": query["category"] or None,
        "metrics": keys,
        **extra,
        "results": [],
    }
    text = json.dumps(head, **JSON_OPTIONS)
    assert text.endswith('"results":[]}')
    return f"{text[:-2]}{','.join(rows)}]}}"
