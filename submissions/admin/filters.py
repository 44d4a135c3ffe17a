"""The console's list filters: board, latest run state, top entries not yet verified."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from ..enums import BoardKind, EvaluationStatus

# "Top entries not yet verified": the default depth, and the choices offered.
TOP_ENTRIES_DEFAULT = 10
TOP_ENTRIES_CHOICES = (3, 10, 20)

# --- list filters -------------------------------------------------------------------------------


class BoardFilter(admin.SimpleListFilter):
    title = "board"
    parameter_name = "board"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [*BoardKind.choices, ("none", "Not on a board")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() in BoardKind.values:
            return queryset.filter(board_entry__board=self.value())
        if self.value() == "none":
            return queryset.filter(board_entry__isnull=True)
        return queryset


class LatestRunFilter(admin.SimpleListFilter):
    """By the state of the entry's newest run (the `latest_status` annotation)."""

    title = "latest run"
    parameter_name = "run"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [*EvaluationStatus.choices, ("none", "No run")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() in EvaluationStatus.values:
            return queryset.filter(latest_status=self.value())
        if self.value() == "none":
            return queryset.filter(latest_status__isnull=True)
        return queryset


class TopUnverifiedFilter(admin.SimpleListFilter):
    """The candidates for nomination (spec 8: "Top performers will be contacted"): published
    entries on the Community board ranked in the top N, whatever step they are at."""

    title = "top entries not yet verified"
    parameter_name = "top"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(str(depth), f"Top {depth}") for depth in TOP_ENTRIES_CHOICES]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() is None:
            return queryset
        try:
            depth = int(self.value())
        except ValueError:
            depth = TOP_ENTRIES_DEFAULT
        return queryset.filter(
            publish=True, board_entry__board=BoardKind.COMMUNITY, board_entry__rank__lte=depth
        )
