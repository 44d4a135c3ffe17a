"""Admin for the re-run: a maintainer registers a model's endpoint and starts a re-run from it
(an action); a re-run is a read-only record whose page shows the discrepancy report and a
"Verify this entry" button. Every write goes through `verifying.services` and
`verifying.endpoints`; all of it needs `submissions.verify_submission`. The endpoint form picks
the entry by its name, team and benchmark among the entries on their way to the Official board;
a refused verify names the missing step and links to it (`submissions.next_step`).

An endpoint's API key is write-only: only a superuser's form has the key field (a password
input that never renders a value); everyone sees "set on <date>" or "not set". A maintainer
registers keyless endpoints and cannot move a keyed one to another address
(`verifying.permissions`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.debug import sensitive_post_parameters

from accounts.roles import can_view_all_entries
from core.exceptions import DomainError
from core.request_text import posted_text
from submissions.enums import VerificationStatus
from submissions.models import Submission
from submissions.next_step import next_step

from .endpoints import CHANGEABLE_FIELDS, change_endpoint, register_endpoint
from .enums import ACTIVE_RERUN_STATES, RerunStatus
from .models import ModelEndpoint, RerunJob
from .permissions import can_change_endpoint
from .services import cancel_rerun, start_rerun, verify_from_report

VERIFY_PERMISSION = "submissions.verify_submission"
ENDPOINT_FIELDS = ["base_url", "model", "concurrency", "max_attempts", "timeout_seconds"]


def may_verify(request: HttpRequest) -> bool:
    """Verification work on other people's entries: someone who may see them all (the one
    predicate the site and the API ask too) and holds the verify permission."""
    return can_view_all_entries(request.user) and request.user.has_perm(VERIFY_PERMISSION)


class MaintainersOnly:
    """Every permission of these pages is the maintainers' verification permission."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return may_verify(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return may_verify(request)


# The entries a model endpoint is registered for: those on their way to the Official board.
ENTRY_STATES = [
    VerificationStatus.NOMINATED,
    VerificationStatus.CONTACTED,
    VerificationStatus.ACCESS_GRANTED,
    VerificationStatus.VERIFYING,
]


def entry_label(submission: Submission) -> str:
    """ "SurgiDemo-7B — Demo fine-tuners · MedVidBench · Model access granted": the model, then
    its team (else its institution, else its owner), the benchmark and the state."""
    who = submission.team_name or submission.institution
    if not who and submission.owner_id:
        who = submission.owner.get_username()
    name = f"{submission.model_name} — {who}" if who else submission.model_name
    status = VerificationStatus(submission.verification_status).label
    return f"{name} · {submission.benchmark.name} · {status}"


class EntryChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Submission) -> str:
        return entry_label(obj)


class ModelEndpointForm(forms.ModelForm):
    """A maintainer's form: no key field at all."""

    class Meta:
        model = ModelEndpoint
        fields = ["submission", *ENDPOINT_FIELDS]

    def validate_constraints(self) -> None:
        # A new endpoint replaces the entry's active one in the same transaction
        # (`register_endpoint`), so "one active per entry" holds after the save.
        exclude = self._get_validation_exclusions() | {"is_active"}
        try:
            self.instance.validate_constraints(exclude=exclude)
        except ValidationError as error:
            self._update_errors(error)


class ModelEndpointKeyForm(ModelEndpointForm):
    """A superuser's form: the key too, write-only."""

    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        # render_value=False: the key never travels back to a browser, not even after an error.
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted and never shown again; sent only to this base URL's host. "
        "Blank keeps the current key (a new host drops it).",
    )
    forget_key = forms.BooleanField(
        label="Forget the key", required=False, help_text="The endpoint then wants none."
    )


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(MaintainersOnly, admin.ModelAdmin):
    form = ModelEndpointForm
    list_display = ["submission", "model", "base_url", "is_active", "key_status", "created_at"]
    list_filter = ["is_active", "submission__benchmark"]
    list_select_related = ["submission"]
    search_fields = ["submission__model_name", "model", "base_url"]
    actions = ["start_rerun_action"]

    @method_decorator(sensitive_post_parameters("api_key"))  # as UserAdmin does for passwords
    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return super().changeform_view(request, *args, **kwargs)

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        if request.user.is_superuser:
            kwargs["form"] = ModelEndpointKeyForm
        return super().get_form(request, obj, change=change, **kwargs)

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        if db_field.name == "submission":
            kwargs["queryset"] = (
                Submission.objects.filter(verification_status__in=ENTRY_STATES, publish=True)
                .select_related("benchmark", "owner")
                .order_by("benchmark__name", "model_name", "id")
            )
            kwargs["form_class"] = EntryChoiceField
            kwargs["label"] = "Entry"
            kwargs["help_text"] = (
                "An entry that was nominated and not yet verified, by model name, team and "
                "benchmark."
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if (
            db_field.name == "base_url"
            and field is not None
            and settings.PODIUM_DEMO_STANDIN_MODEL_URL
        ):
            # The demo's stand-in, where the form is (issue 32: docs named a fixed port).
            field.help_text = format_html(
                "{} In this demo the stand-in model (it plays back the demo's predictions "
                "files; not a real model) answers at <code>{}</code>: for MedVidBench, model "
                "<code>standin-new</code> (the file no demo entry has), <code>standin-prose</code>"
                " or <code>standin-perfect</code>.",
                field.help_text,
                settings.PODIUM_DEMO_STANDIN_MODEL_URL,
            )
        return field

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        fixed = ["key_status", "is_active", "created_by", "created_at"]
        if obj is None:
            return fixed
        if not can_change_endpoint(request.user, obj, base_url=True):
            # A maintainer never points an entered key at another address.
            return [*fixed, "submission", "base_url"]
        return [*fixed, "submission"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return may_verify(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return may_verify(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # jobs keep their endpoint; a new one replaces it as the active one

    @admin.display(description="API key")
    def key_status(self, endpoint: ModelEndpoint) -> str:
        """ "set on <date>" or "not set"; never the key nor a part of it."""
        return endpoint.key_status

    def save_model(
        self, request: HttpRequest, obj: ModelEndpoint, form: ModelForm, change: bool
    ) -> None:
        data = form.cleaned_data
        fields = {name: data[name] for name in ENDPOINT_FIELDS if name in data}
        if not change:
            endpoint = register_endpoint(
                obj.submission, actor=request.user, api_key=data.get("api_key", ""), **fields
            )
            obj.pk = endpoint.pk
            return
        change_endpoint(
            obj,
            actor=request.user,
            api_key=data.get("api_key", ""),
            forget_key=bool(data.get("forget_key")),
            **{name: value for name, value in fields.items() if name in CHANGEABLE_FIELDS},
        )

    @admin.action(description="Start a re-run with this endpoint")
    def start_rerun_action(self, request: HttpRequest, queryset: QuerySet[ModelEndpoint]) -> None:
        for endpoint in queryset.select_related("submission"):
            try:
                job = start_rerun(endpoint.submission, endpoint, actor=request.user)
            except DomainError as error:
                self.message_user(request, f"{endpoint.submission}: {error}", messages.ERROR)
                continue
            self.message_user(
                request,
                format_html(
                    '<a href="{}">Re-run #{} of {}</a> queued: {} questions; its page follows it.',
                    reverse("admin:verifying_rerunjob_change", args=[job.pk]),
                    job.pk,
                    endpoint.submission,
                    job.items_total,
                ),
                messages.SUCCESS,
            )


# How often a running re-run's page reloads itself.
REFRESH_SECONDS = 5


@admin.register(RerunJob)
class RerunJobAdmin(MaintainersOnly, admin.ModelAdmin):
    change_form_template = "admin/verifying/rerunjob/change_form.html"
    list_display = [
        "id",
        "submission",
        "status",
        "progress",
        "calls",
        "within_tolerance",
        "created_at",
        "heartbeat_at",
    ]
    list_filter = ["status", "submission__benchmark"]
    list_select_related = ["submission", "endpoint"]
    search_fields = ["submission__model_name", "endpoint__model"]
    fields = [
        "submission_link",
        "endpoint",
        "test_set",
        "requested_by",
        "status",
        "message",
        "progress",
        "max_frames",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "metrics",
        "runs",
        "worker",
        "created_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
    ]
    readonly_fields = fields
    actions = ["cancel"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Entry")
    def submission_link(self, job: RerunJob) -> str:
        url = reverse("submissions:detail", args=[job.submission_id])
        return format_html('<a href="{}">{}</a>', url, job.submission)

    @admin.display(description="Progress")
    def progress(self, job: RerunJob) -> str:
        """Items finished (answered + failed) of all the job's items."""
        return f"{job.items_done}+{job.items_failed}/{job.items_total} ({job.percent}%)"

    @admin.display(description="Within tolerance", boolean=True)
    def within_tolerance(self, job: RerunJob) -> bool | None:
        return job.report.get("all_within") if job.report else None

    @admin.action(description="Cancel the selected re-runs")
    def cancel(self, request: HttpRequest, queryset: QuerySet[RerunJob]) -> None:
        for job in queryset:
            cancel_rerun(job, actor=request.user)
        self.message_user(request, f"{queryset.count()} re-runs cancelled.", messages.SUCCESS)

    def get_urls(self) -> list:
        own = [
            path(
                "<int:job_id>/verify/",
                self.admin_site.admin_view(self.verify_view),
                name="verifying_rerunjob_verify",
            )
        ]
        return own + super().get_urls()

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        job = self.get_object(request, object_id)
        context = dict(extra_context or {})
        if job is not None:
            context["report"] = job.report
            context["can_verify"] = (
                may_verify(request)
                and job.state == RerunStatus.DONE
                and job.submission.verification_status == VerificationStatus.VERIFYING
            )
            context["verify_url"] = reverse("admin:verifying_rerunjob_verify", args=[job.pk])
            # While it runs, the page follows it as the submitter's status page does (the page
            # is read-only: a reload loses nothing).
            context["refresh_seconds"] = (
                REFRESH_SECONDS if job.state in ACTIVE_RERUN_STATES else None
            )
        return super().change_view(request, object_id, form_url, extra_context=context)

    def verify_view(self, request: HttpRequest, job_id: int) -> HttpResponse:
        """POST: verify the entry from this re-run's report (`verify_from_report`)."""
        if not may_verify(request):
            raise PermissionDenied
        job = get_object_or_404(RerunJob, pk=job_id)
        back = reverse("admin:verifying_rerunjob_change", args=[job.pk])
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        try:
            verify_from_report(
                job,
                actor=request.user,
                force=request.POST.get("force") == "on",
                note=posted_text(request, "note"),
            )
        except DomainError as error:
            job.submission.refresh_from_db()
            step = next_step(job.submission)
            text = format_html("{} {}", error, step.html()) if step is not None else str(error)
            self.message_user(request, text, messages.ERROR)
        else:
            self.message_user(
                request,
                f"{job.submission} is verified: it is on the Official board.",
                messages.SUCCESS,
            )
        return HttpResponseRedirect(back)
