"""The rankings as CSV in the API: the renderer that selects CSV in content negotiation and the
file's name. The columns and the rows are the board's (`submissions.board_csv`, shared with the
board snapshots)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from rest_framework.renderers import BaseRenderer, JSONRenderer

from benchmark.models import Benchmark
from submissions.board_csv import CSVExtras, csv_body

__all__ = ["CSVExtras", "CSVRenderer", "csv_body", "csv_filename"]


class CSVRenderer(BaseRenderer):
    """Selects CSV in content negotiation (`?format=csv`, `.csv`, `Accept: text/csv`). The
    rankings views build the body themselves; errors are always rendered as JSON."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None):
        return JSONRenderer().render(data)


def csv_filename(
    benchmark: Benchmark, board: str, computed_at: datetime | None, *, extension: str = "csv"
) -> str:
    """The download's name: the benchmark, the board and the day it was computed."""
    day = timezone.localdate(computed_at) if computed_at else timezone.localdate()
    return f"{benchmark.slug}-{board}-rankings-{day.isoformat()}.{extension}"
