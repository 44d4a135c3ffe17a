"""Admin for the LLM judge: endpoints are configuration only superusers see and edit (an
endpoint names the environment variable its key is read from, limited to
`PODIUM_JUDGE_KEY_ENV_ALLOWLIST`); jobs and verdicts are read-only records, and the two things a
maintainer does to a job (rerun the judge, cancel it) are actions that call `judging.services`.

Items are not listed on their own (a job has thousands): a job's page shows its failed items,
which are what a maintainer needs to see. An API key is never shown, only whether the
environment variable that holds it is set.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core import audit
from core.admin_access import EntryViewersOnly
from core.exceptions import DomainError
from core.request_text import posted_text

from .enums import ACTIVE_JOB_STATES, ItemState, JobStatus
from .models import JudgeEndpoint, JudgeJob, Verdict
from .selectors import RERUN_PERMISSION
from .services import accept_partial_judgement, cancel_job, configure_endpoint, rerun_judge

FAILED_ITEMS_SHOWN = 50


def _superuser(request: HttpRequest) -> bool:
    return request.user.is_active and request.user.is_superuser


class JudgeEndpointForm(forms.ModelForm):
    class Meta:
        model = JudgeEndpoint
        fields = [
            "benchmark",
            "name",
            "is_active",
            "notes",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "concurrency",
            "max_attempts",
            "timeout_seconds",
            "input_price_per_million",
            "output_price_per_million",
        ]

    def validate_constraints(self) -> None:
        # Making this endpoint active deactivates the benchmark's other one in the same
        # transaction (`configure_endpoint`), so "one active endpoint per benchmark" holds after
        # the save and is not checked against the rows as they are before it.
        exclude = self._get_validation_exclusions() | {"is_active"}
        try:
            self.instance.validate_constraints(exclude=exclude)
        except ValidationError as error:
            self._update_errors(error)


@admin.register(JudgeEndpoint)
class JudgeEndpointAdmin(admin.ModelAdmin):
    form = JudgeEndpointForm
    list_display = [
        "benchmark",
        "name",
        "model",
        "base_url",
        "is_active",
        "concurrency",
        "api_key_status",
    ]
    list_filter = ["benchmark", "is_active"]
    list_select_related = ["benchmark"]
    search_fields = ["name", "model", "base_url"]
    fieldsets = [
        (None, {"fields": ["benchmark", "name", "is_active", "notes"]}),
        ("Endpoint", {"fields": ["base_url", "model", "api_key_env", "api_key_status"]}),
        (
            "Requests",
            {"fields": ["temperature", "concurrency", "max_attempts", "timeout_seconds"]},
        ),
        ("Cost estimate", {"fields": ["input_price_per_million", "output_price_per_million"]}),
        (None, {"fields": ["created_at", "updated_at"]}),
    ]

    # Superusers only: an endpoint decides where a server secret (the judge's key) is sent, and
    # its page says which variables are set. No model permission opens it to anyone else.
    def has_module_permission(self, request: HttpRequest) -> bool:
        return _superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: JudgeEndpoint | None = None) -> bool:
        return _superuser(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return _superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: JudgeEndpoint | None = None) -> bool:
        return _superuser(request)

    def get_readonly_fields(
        self, request: HttpRequest, obj: JudgeEndpoint | None = None
    ) -> list[str]:
        fixed = ["api_key_status", "created_at", "updated_at"]
        # Jobs point at an endpoint by its row; its name is how `configure_endpoint` finds it.
        return [*fixed, "benchmark", "name"] if obj is not None else fixed

    @admin.display(description="API key")
    def api_key_status(self, endpoint: JudgeEndpoint) -> str:
        """Whether the key's environment variable is set; never the key itself."""
        if not endpoint.api_key_env:
            return "not needed"
        if not endpoint.key_env_allowed:
            return f"refused: {endpoint.api_key_env} is not on PODIUM_JUDGE_KEY_ENV_ALLOWLIST"
        if endpoint.missing_key:
            return f"missing: {endpoint.api_key_env} is not set"
        return f"set ({endpoint.api_key_env})"

    def has_delete_permission(self, request: HttpRequest, obj: JudgeEndpoint | None = None) -> bool:
        # Jobs keep their endpoint; one no longer wanted is made inactive.
        return False

    def save_model(
        self, request: HttpRequest, obj: JudgeEndpoint, form: ModelForm, change: bool
    ) -> None:
        fields = {
            name: form.cleaned_data[name]
            for name in form.cleaned_data
            if name not in ("benchmark", "name", "is_active")
        }
        if obj.is_active:
            endpoint = configure_endpoint(
                obj.benchmark, name=obj.name, actor=request.user, **fields
            )
            obj.pk = endpoint.pk
            return
        # No service switches an endpoint off; this is the one write the admin does itself,
        # audited like the service's.
        with transaction.atomic():
            obj.save()
            audit.record(
                "judging.endpoint.updated" if change else "judging.endpoint.created",
                actor=request.user,
                target=obj,
                base_url=obj.base_url,
                model=obj.model,
                is_active=False,
            )


@admin.register(JudgeJob)
class JudgeJobAdmin(EntryViewersOnly, admin.ModelAdmin):
    list_display = [
        "id",
        "evaluation_link",
        "submission_model_name",
        "status",
        "progress",
        "calls",
        "tokens",
        "cost",
        "created_at",
        "heartbeat_at",
    ]
    list_filter = ["status", "endpoint"]
    list_select_related = ["evaluation__submission", "endpoint"]
    search_fields = ["evaluation__submission__model_name", "model"]
    fields = [
        "evaluation_link",
        "submission_model_name",
        "endpoint",
        "requested_by",
        "status",
        "message",
        "unreachable_since",
        "next_try_at",
        "last_transient_error",
        "progress",
        "items_total",
        "items_done",
        "items_failed",
        "items_cached",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "model",
        "rubric_version",
        "outcome",
        "runs",
        "worker",
        "created_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "failed_items",
    ]
    readonly_fields = fields
    actions = ["rerun", "cancel", "accept_partial"]

    @admin.display(description="Run", ordering="evaluation")
    def evaluation_link(self, job: JudgeJob) -> str:
        url = reverse("submissions:detail", args=[job.evaluation.submission_id])
        return format_html('<a href="{}">run {}</a>', url, job.evaluation_id)

    @admin.display(description="Model", ordering="evaluation__submission__model_name")
    def submission_model_name(self, job: JudgeJob) -> str:
        return job.evaluation.submission.model_name

    @admin.display(description="Progress")
    def progress(self, job: JudgeJob) -> str:
        """Items finished (judged + failed) of all the job's items."""
        return f"{job.items_done}+{job.items_failed}/{job.items_total}"

    @admin.display(description="Tokens")
    def tokens(self, job: JudgeJob) -> int:
        return job.prompt_tokens + job.completion_tokens

    @admin.display(description="Failed items")
    def failed_items(self, job: JudgeJob) -> str:
        rows = list(
            job.items.filter(state=ItemState.FAILED)
            .order_by("id")
            .values_list("key", "attempts", "last_error")[:FAILED_ITEMS_SHOWN]
        )
        if not rows:
            return "None"
        body = format_html_join("", "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>", rows)
        shown = (
            f"The first {FAILED_ITEMS_SHOWN} of {job.items_failed}."
            if job.items_failed > len(rows)
            else ""
        )
        return format_html(
            '<table class="failed-items"><thead><tr><th>Key</th><th>Attempts</th>'
            "<th>Last error</th></tr></thead><tbody>{}</tbody></table>{}",
            body,
            shown,
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: JudgeJob | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: JudgeJob | None = None) -> bool:
        return False

    def has_rerun_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(RERUN_PERMISSION)

    @admin.action(description="Rerun the judge", permissions=["rerun"])
    def rerun(self, request: HttpRequest, queryset: QuerySet[JudgeJob]) -> None:
        """Judge each selected job's run again (once per run, however many jobs it has)."""
        started, refused = [], []
        evaluations = {job.evaluation_id: job.evaluation for job in queryset}
        for evaluation in evaluations.values():
            try:
                job = rerun_judge(evaluation, actor=request.user)
            except DomainError as error:
                refused.append(f"run {evaluation.pk}: {error}")
            else:
                started.append(str(job.pk))
        self._report(request, "Judge job(s) queued: {}.", started, refused)

    @admin.action(description="Cancel", permissions=["rerun"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[JudgeJob]) -> None:
        cancelled, refused = [], []
        for job in queryset:
            if job.status not in {*ACTIVE_JOB_STATES, JobStatus.HELD}:
                refused.append(f"job {job.pk} is already {job.get_status_display().lower()}")
                continue
            try:
                cancel_job(job, actor=request.user)
            except DomainError as error:
                refused.append(f"job {job.pk}: {error}")
            else:
                cancelled.append(str(job.pk))
        self._report(request, "Cancelled judge job(s): {}.", cancelled, refused)

    @admin.action(
        description="Accept the judgement without its failed items", permissions=["rerun"]
    )
    def accept_partial(
        self, request: HttpRequest, queryset: QuerySet[JudgeJob]
    ) -> TemplateResponse | None:
        """Publish held jobs' metrics without the items that got no usable verdict
        (`accept_partial_judgement`); a first step asks for the note that says why."""
        note = posted_text(request, "note")
        if "apply" not in request.POST:
            return TemplateResponse(
                request,
                "admin/judging/judgejob/accept_partial.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Accept the judgement without its failed items",
                    "jobs": queryset,
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                    "opts": self.model._meta,
                },
            )
        accepted, refused = [], []
        for job in queryset:
            try:
                accept_partial_judgement(job, actor=request.user, note=note)
            except DomainError as error:
                refused.append(f"job {job.pk}: {error}")
            else:
                accepted.append(str(job.pk))
        self._report(request, "Accepted and published judge job(s): {}.", accepted, refused)
        return None

    def _report(
        self, request: HttpRequest, success: str, done: list[str], refused: list[str]
    ) -> None:
        if done:
            self.message_user(request, success.format(", ".join(done)), messages.SUCCESS)
        if refused:
            self.message_user(request, "Not done: " + "; ".join(refused), messages.ERROR)


@admin.register(Verdict)
class VerdictAdmin(EntryViewersOnly, admin.ModelAdmin):
    """The verdict cache, read-only: a verdict is the judge's answer, never edited."""

    list_display = [
        "short_sha256",
        "model",
        "rubric_version",
        "scores",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "created_at",
    ]
    list_filter = ["model", "rubric_version"]
    search_fields = ["prompt_sha256", "model"]
    fields = [
        "model",
        "rubric_version",
        "prompt_sha256",
        "scores",
        "answer",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "endpoint",
        "created_at",
    ]
    readonly_fields = fields

    @admin.display(description="sha256", ordering="prompt_sha256")
    def short_sha256(self, verdict: Verdict) -> str:
        return verdict.prompt_sha256[:12]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Verdict | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Verdict | None = None) -> bool:
        return False
