"""Admin for the battles: battle jobs and battles are read-only records; the two things a
maintainer does to a job (cancel it, run its battles again) are actions that call
`arena.services`, with the judge's permission (`judging.rerun_judgejob`). A job's page lists
its failed judge calls (which dropped their battles); prompts are never shown (each holds a
question's reference answer), nor are the fits, which only `rate_category` writes."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.admin_access import EntryViewersOnly
from core.exceptions import DomainError

from .enums import ACTIVE_JOB_STATES, ItemState
from .models import Battle, BattleJob
from .services import RERUN_PERMISSION, cancel_job, rerun_battles

FAILED_ITEMS_SHOWN = 50


class ReadOnly:
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(BattleJob)
class BattleJobAdmin(EntryViewersOnly, ReadOnly, admin.ModelAdmin):
    list_display = [
        "id",
        "entry_link",
        "category",
        "status",
        "opponent_names",
        "progress",
        "battles_judged",
        "battles_dropped",
        "created_at",
        "heartbeat_at",
    ]
    list_filter = ["status", "category", "benchmark"]
    list_select_related = ["submission", "benchmark"]
    search_fields = ["submission__model_name", "model", "category"]
    fields = [
        "entry_link",
        "benchmark",
        "category",
        "status",
        "message",
        "opponent_names",
        "endpoint",
        "model",
        "requested_by",
        "rerun_of",
        "unreachable_since",
        "next_try_at",
        "last_transient_error",
        "progress",
        "battles_total",
        "battles_judged",
        "battles_dropped",
        "items_total",
        "items_done",
        "items_failed",
        "items_cached",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "runs",
        "interruptions",
        "worker",
        "created_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "failed_items",
    ]
    readonly_fields = fields
    actions = ["rerun", "cancel"]

    @admin.display(description="Entry", ordering="submission__model_name")
    def entry_link(self, job: BattleJob) -> str:
        url = reverse("submissions:detail", args=[job.submission_id])
        return format_html('<a href="{}">{}</a>', url, job.submission.model_name)

    @admin.display(description="Opponents")
    def opponent_names(self, job: BattleJob) -> str:
        return ", ".join(opponent["model_name"] for opponent in job.opponents) or "none yet"

    @admin.display(description="Judge calls")
    def progress(self, job: BattleJob) -> str:
        """Calls finished (judged + failed) of all the job's calls."""
        return f"{job.items_done}+{job.items_failed}/{job.items_total}"

    @admin.display(description="Failed judge calls")
    def failed_items(self, job: BattleJob) -> str:
        rows = list(
            job.items.filter(state=ItemState.FAILED)
            .order_by("id")
            .values_list("question", "opponent__model_name", "round", "attempts", "last_error")[
                :FAILED_ITEMS_SHOWN
            ]
        )
        if not rows:
            return "None"
        body = format_html_join(
            "",
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            rows,
        )
        return format_html(
            '<table class="failed-items"><thead><tr><th>Question</th><th>Opponent</th>'
            "<th>Round</th><th>Attempts</th><th>Last error</th></tr></thead><tbody>{}</tbody>"
            "</table>",
            body,
        )

    def has_rerun_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(RERUN_PERMISSION)

    @admin.action(description="Run the battles again", permissions=["rerun"])
    def rerun(self, request: HttpRequest, queryset: QuerySet[BattleJob]) -> None:
        started, refused = [], []
        for job in queryset.select_related("submission__benchmark"):
            try:
                new = rerun_battles(job, actor=request.user)
            except DomainError as error:
                refused.append(f"job {job.pk}: {error}")
            else:
                started.append(str(new.pk))
        self._report(request, "Battle job(s) queued: {}.", started, refused)

    @admin.action(description="Cancel", permissions=["rerun"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[BattleJob]) -> None:
        cancelled, refused = [], []
        for job in queryset:
            if job.status not in ACTIVE_JOB_STATES:
                refused.append(f"job {job.pk} is already {job.get_status_display().lower()}")
                continue
            try:
                cancel_job(job, actor=request.user)
            except DomainError as error:
                refused.append(f"job {job.pk}: {error}")
            else:
                cancelled.append(str(job.pk))
        self._report(request, "Cancelled battle job(s): {}.", cancelled, refused)

    def _report(
        self, request: HttpRequest, success: str, done: list[str], refused: list[str]
    ) -> None:
        if done:
            self.message_user(request, success.format(", ".join(done)), messages.SUCCESS)
        if refused:
            self.message_user(request, "Not done: " + "; ".join(refused), messages.ERROR)


@admin.register(Battle)
class BattleAdmin(EntryViewersOnly, ReadOnly, admin.ModelAdmin):
    """The stored battles, read-only: a battle is never rewritten."""

    list_display = [
        "id",
        "category",
        "question",
        "model_a",
        "model_b",
        "round1_first",
        "round1_reading",
        "round2_reading",
        "winner",
        "judge_model",
        "created_at",
    ]
    list_filter = ["benchmark", "category", "winner", "judge_model"]
    list_select_related = ["model_a", "model_b"]
    search_fields = ["model_a__model_name", "model_b__model_name", "question"]
    fields = [
        "benchmark",
        "category",
        "question",
        "model_a",
        "model_b",
        "job",
        "winner",
        "round1_first",
        "round1_reading",
        "round1_verdict",
        "round1_prompt_sha256",
        "round2_reading",
        "round2_verdict",
        "round2_prompt_sha256",
        "judge_model",
        "created_at",
    ]
    readonly_fields = fields
