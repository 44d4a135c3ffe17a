"""Admin for hosted evaluation: a request is a read-only record (its endpoint without its key,
its progress per category, its failure, the entry it became and the evidence that entry's
verification rests on), with two actions that call the services: "Cancel" and "Verify its
entry" (the hosted evaluation as the evidence, through the verification's one writer). All of
it needs the maintainers' verification permission, as the re-runs' pages do.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from accounts.roles import can_view_all_entries
from core.exceptions import DomainError
from submissions.enums import VerificationStatus
from submissions.services import set_verification_status

from .models import HostedRequest
from .selectors import request_page
from .services import cancel_request

VERIFY_PERMISSION = "submissions.verify_submission"


def may_verify(request: HttpRequest) -> bool:
    return can_view_all_entries(request.user) and request.user.has_perm(VERIFY_PERMISSION)


@admin.register(HostedRequest)
class HostedRequestAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "model_name",
        "benchmark",
        "owner",
        "status",
        "failure",
        "progress",
        "tokens",
        "created_at",
        "entry",
    ]
    list_filter = ["status", "failure", "benchmark", "publish"]
    search_fields = ["model_name", "owner__username", "endpoint__model"]
    list_select_related = ["benchmark", "owner", "submission"]
    actions = ["cancel", "verify_entry"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "benchmark",
                    "owner",
                    "requested_by",
                    "model_name",
                    "publish",
                    "status",
                    "failure",
                    "message",
                    "entry",
                    "evidence",
                ]
            },
        ),
        ("Endpoint", {"fields": ["endpoint_summary"]}),
        (
            "Progress",
            {
                "fields": [
                    "categories",
                    "items_total",
                    "items_done",
                    "items_failed",
                    "calls",
                    "prompt_tokens",
                    "completion_tokens",
                    "max_tokens",
                    "requests_per_minute",
                    "runs",
                    "interruptions",
                    "worker",
                    "created_at",
                    "started_at",
                    "heartbeat_at",
                    "finished_at",
                    "unreachable_since",
                    "last_transient_error",
                ]
            },
        ),
        (
            "What the form said",
            {
                "fields": [
                    "institution",
                    "contact_email",
                    "model_url",
                    "paper_url",
                    "code_url",
                    "is_challenge_entry",
                    "team_name",
                    "authors",
                    "options",
                    "model_facts",
                ]
            },
        ),
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Every field: a request's state has one writer (`set_request_status`), and what it
        # says is the submitter's.
        names = [name for _, options in self.fieldsets for name in options["fields"]]
        return names

    def has_module_permission(self, request: HttpRequest) -> bool:
        return may_verify(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return may_verify(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_verify_permission(self, request: HttpRequest) -> bool:
        return may_verify(request)

    @admin.display(description="Answered")
    def progress(self, hosted: HostedRequest) -> str:
        return f"{hosted.items_finished:,} / {hosted.items_total:,}"

    @admin.display(description="Tokens")
    def tokens(self, hosted: HostedRequest) -> str:
        return f"{hosted.tokens:,}"

    @admin.display(description="Entry")
    def entry(self, hosted: HostedRequest) -> str:
        if hosted.submission_id is None:
            return "—"
        url = reverse("admin:submissions_submission_change", args=[hosted.submission_id])
        return format_html('<a href="{}">entry {}</a>', url, hosted.submission_id)

    @admin.display(description="Endpoint")
    def endpoint_summary(self, hosted: HostedRequest) -> str:
        endpoint = hosted.endpoint
        return format_html(
            "<code>{}</code>, model <code>{}</code>, {} in flight, {} attempts, {} s timeout; "
            "API key {}",
            endpoint.base_url,
            endpoint.model,
            endpoint.concurrency,
            endpoint.max_attempts,
            endpoint.timeout_seconds,
            endpoint.key_status,
        )

    @admin.display(description="Categories")
    def categories(self, hosted: HostedRequest) -> str:
        page = request_page(hosted, viewer=None)
        return format_html_join(
            "; ", "{}: {}", ((cell.label, cell.text) for cell in page.row.cells)
        )

    @admin.display(description="Evidence for verification")
    def evidence(self, hosted: HostedRequest) -> str:
        """What verifying its entry rests on: the hosted evaluation itself (no re-run)."""
        if hosted.submission_id is None:
            return "No entry yet: the request has not finished."
        return format_html(
            "Podium asked <code>{}</code> at {} every one of the {} questions itself ({} "
            "answered, {} without a usable answer) and submitted the answers as entry {}: "
            "verifying it needs no re-run (the action “Verify its entry”).",
            hosted.endpoint.model,
            hosted.endpoint.origin,
            hosted.items_total,
            hosted.items_done,
            hosted.items_failed,
            hosted.submission_id,
        )

    @admin.action(description="Cancel (nothing is published)", permissions=["verify"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[HostedRequest]) -> None:
        for hosted in queryset:
            try:
                cancel_request(hosted, actor=request.user)
            except DomainError as error:
                messages.error(request, f"{hosted.model_name}: {error}")
            else:
                messages.success(request, f"{hosted.model_name}: cancelled.")

    @admin.action(
        description="Verify its entry (the hosted evaluation is the evidence)",
        permissions=["verify"],
    )
    def verify_entry(self, request: HttpRequest, queryset: QuerySet[HostedRequest]) -> None:
        for hosted in queryset.select_related("submission"):
            if hosted.submission is None:
                messages.error(request, f"{hosted.model_name}: no entry yet.")
                continue
            try:
                set_verification_status(
                    hosted.submission, VerificationStatus.VERIFIED, actor=request.user
                )
            except DomainError as error:
                messages.error(request, f"{hosted.model_name}: {error}")
            else:
                messages.success(request, f"{hosted.model_name}: verified.")
