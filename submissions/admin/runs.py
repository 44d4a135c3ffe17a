"""Runs, read-only."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from core.admin_access import EntryViewersOnly

from ..models import Evaluation


@admin.register(Evaluation)
class EvaluationAdmin(EntryViewersOnly, admin.ModelAdmin):
    """Runs, read-only: a run is a record of what was scored, against what, with what."""

    list_display = [
        "id",
        "submission",
        "status",
        "test_set_version",
        "scorer_version",
        "created_at",
    ]
    list_filter = ["status", "submission__benchmark"]
    list_select_related = ["submission__benchmark", "test_set"]
    search_fields = ["submission__model_name"]
    fields = [
        "submission",
        "status",
        "test_set",
        "scorer_version",
        "requested_by",
        "error_code",
        "error_message",
        "attempts",
        "worker",
        "heartbeat_at",
        "metrics",
        "created_at",
        "queued_at",
        "scoring_started_at",
        "scored_at",
        "judging_started_at",
        "completed_at",
        "finished_at",
    ]
    readonly_fields = fields

    @admin.display(description="Test set", ordering="test_set__version")
    def test_set_version(self, evaluation: Evaluation) -> str:
        return f"v{evaluation.test_set.version}" if evaluation.test_set_id else "—"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Evaluation | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Evaluation | None = None) -> bool:
        return False
