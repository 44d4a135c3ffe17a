"""Models shared by every app: the audit trail."""

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models


class AuditEvent(models.Model):
    """One thing a person (or the system) did to one object, kept forever.

    Written only by ``core.audit.record``; never updated or deleted by the application. The
    target is generic (content type + primary key as text) so every app can audit its own
    objects without ``core`` importing them; ``target_repr`` keeps the row readable after the
    target is gone. ``data`` holds ``{"from": ..., "to": ..., "note": ...}`` for a state change,
    or whatever else describes the action.
    """

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who did it; empty for the system (a command, a task, a migration).",
    )
    # Namespaced: "<app>.<object>.<verb>", e.g. "benchmark.testset.imported".
    action = models.CharField(max_length=100)
    content_type = models.ForeignKey(
        ContentType, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Text, so any primary key type fits.
    object_id = models.CharField(max_length=64, blank=True)
    target = GenericForeignKey("content_type", "object_id")
    target_repr = models.CharField(max_length=200, blank=True)
    data = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["content_type", "object_id"], name="auditevent_target_idx"),
            models.Index(fields=["action"], name="auditevent_action_idx"),
        ]
        constraints = [
            # A target is either fully named (type and id) or absent.
            models.CheckConstraint(
                condition=(
                    models.Q(content_type__isnull=True, object_id="")
                    | (models.Q(content_type__isnull=False) & ~models.Q(object_id=""))
                ),
                name="auditevent_target_complete",
            ),
        ]

    def __str__(self) -> str:
        target = f" {self.target_repr}" if self.target_repr else ""
        return f"{self.action}{target}"
