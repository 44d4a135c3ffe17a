from django.contrib import admin
from django.http import HttpRequest

from core.admin_access import EntryViewersOnly
from core.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(EntryViewersOnly, admin.ModelAdmin):
    """The audit trail, read-only: rows are written by services and never edited. It names
    entries (evaluate-only ones too) and what was done to them, so it is the entry viewers'."""

    list_display = ["created_at", "action", "target_repr", "actor"]
    list_filter = ["action", "content_type"]
    search_fields = ["action", "target_repr", "object_id", "actor__username"]
    date_hierarchy = "created_at"
    list_select_related = ["actor", "content_type"]
    fields = ["created_at", "action", "actor", "content_type", "object_id", "target_repr", "data"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False
