"""`{% load board_table %}`: a board row's metric cells (`_board_table.html`), rendered in
Python. Through the template language the cells were most of a cold board page (a page of 50
rows has 550 of them, five lookups and three conditions each: ~15 of the ~40 ms, issue 16);
the bytes are those the template wrote (tests/submissions/test_board_table_tag.py)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlencode

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from submissions.selectors import BoardCell

register = template.Library()


@register.simple_tag
def metric_cells(cells: Iterable[BoardCell], any_intervals: bool) -> SafeString:
    """`{% metric_cells row.cells intervals.any_intervals %}`: one `<td>` per cell, the value
    with its mark (`css`), its interval as the tooltip (a rating's always; a metric's when the
    board shows intervals at all), a rating's spread and a note."""
    return mark_safe("".join(_cell(cell, any_intervals) for cell in cells))


def _cell(cell: BoardCell, any_intervals: bool) -> str:
    css = f" {conditional_escape(cell.css)}" if cell.css else ""
    text = conditional_escape(cell.text)
    if cell.rating:
        title = f' title="{conditional_escape(cell.interval)}"' if cell.interval else ""
        spread = (
            f' <span class="rating-spread">{conditional_escape(cell.spread)}</span>'
            if cell.spread
            else ""
        )
        note = (
            f' <small class="battles">{conditional_escape(cell.note)}</small>' if cell.note else ""
        )
        return f'<td class="num rating{css}"{title}>{text}{spread}{note}</td>'
    title = (
        f' title="{conditional_escape(cell.interval)}"' if cell.interval and any_intervals else ""
    )
    note = (
        f' <small class="judged-over">{conditional_escape(cell.note)}</small>' if cell.note else ""
    )
    return f'<td class="num{css}"{title}>{text}{note}</td>'


@register.filter
def urlencode_dict(query: dict[str, str], extra: str = "") -> str:
    """`{{ query|urlencode_dict:'columns=all' }}`: a board's parameters as a query string,
    `extra` (already encoded) after them; escaped where it is printed."""
    return "&".join(part for part in (urlencode(query), extra) if part)
