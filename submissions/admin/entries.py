"""The entries' admin: the list, its filters and bulk actions, and an entry's page."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import OuterRef, QuerySet, Subquery
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from accounts.roles import can_rerun_scoring, can_verify_entries
from core.admin_access import EntryViewersOnly
from core.exceptions import DomainError

from .. import maintenance
from ..enums import BoardKind, EvaluationStatus, VerificationStatus
from ..maintenance import PRESENTATION_FIELDS
from ..models import Evaluation, Submission
from ..next_step import next_step
from ..selectors import (
    SubmissionStatus,
    declared_options,
    group_order,
    latest_evaluation,
    submission_status,
)
from ..services import set_verification_status
from . import judge
from .filters import BoardFilter, LatestRunFilter, TopUnverifiedFilter
from .forms import REASON_PAGE, MaintainerActionForm, ReasonForm, SubmissionAdminForm
from .rendering import (
    action_note,
    audit_details,
    entry_audit_trail,
    from_to,
    full_precision,
    html_table,
)

AUDIT_ROWS_SHOWN = 200


# --- the submission admin -----------------------------------------------------------------------


@admin.register(Submission)
class SubmissionAdmin(EntryViewersOnly, admin.ModelAdmin):
    form = SubmissionAdminForm

    class Media:
        css = {"all": ["css/admin.css"]}

    list_display = [
        "model_name",
        "benchmark",
        "owner",
        "board",
        "latest_run",
        "verification",
        "standing",
        "created",
    ]
    list_filter = [
        "benchmark",
        "verification_status",
        BoardFilter,
        LatestRunFilter,
        "is_challenge_entry",
        TopUnverifiedFilter,
    ]
    list_select_related = ["benchmark", "owner", "board_entry"]
    search_fields = [
        "model_name",
        "team_name",
        "institution",
        "owner__username",
        "owner__email",
        "contact_email",
    ]
    date_hierarchy = "created_at"
    action_form = MaintainerActionForm
    actions = [
        "nominate",
        "record_contact",
        "grant_access",
        "verify",
        "reject",
        "withdraw",
        "rerun_scoring",
        "rerun_judge",
    ]
    fieldsets = [
        (
            "Entry",
            {
                "fields": [
                    "model_name",
                    "benchmark",
                    "owner",
                    "source",
                    "contact_email",
                    "visibility",
                    "is_baseline",
                    "is_challenge_entry",
                    "created_at",
                ]
            },
        ),
        ("Shown on the board", {"fields": list(PRESENTATION_FIELDS)}),
        (
            "Predictions",
            {
                "fields": [
                    "predictions_file",
                    "predictions_sha256",
                    "predictions_size",
                    "declared_options",
                ]
            },
        ),
        (
            "Verification",
            {
                "fields": [
                    "verification_status",
                    "verification_changed_at",
                    "verified_at",
                    "verified_by",
                    "verification_reason",
                    "published_at",
                    "board_standing",
                    "next_verification_step",
                ],
                "description": "Changed only with the actions on the list of entries.",
            },
        ),
        (
            "Latest run",
            {
                "fields": [
                    "run_summary",
                    "metrics_table",
                    "per_dataset_table",
                    "format_report",
                    "judge_progress",
                ]
            },
        ),
        ("Audit trail", {"fields": ["audit_trail"]}),
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Submission | None = None) -> list[str]:
        """Everything but the presentation details."""
        shown = [field for _, options in self.fieldsets for field in options["fields"]]
        return [field for field in shown if field not in PRESENTATION_FIELDS]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Submission]:
        newest_run = Evaluation.objects.filter(submission=OuterRef("pk")).order_by(
            "-created_at", "-id"
        )
        return (
            super()
            .get_queryset(request)
            .annotate(latest_status=Subquery(newest_run.values("status")[:1]))
        )

    # --- who may do what -------------------------------------------------------------------

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Entries are created by an upload or an import (create_submission,
        # import_published_result), never typed in.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Submission | None = None) -> bool:
        # Not even for superusers: deleting an entry destroys its provenance (runs, judge jobs,
        # whose admins refuse deletion too, so the admin could not cascade anyway). An entry
        # that must go is rejected or withdrawn, with a reason.
        return False

    def has_verify_permission(self, request: HttpRequest) -> bool:
        return can_verify_entries(request.user)

    def has_rerun_scoring_permission(self, request: HttpRequest) -> bool:
        return can_rerun_scoring(request.user)

    def has_rerun_judge_permission(self, request: HttpRequest) -> bool:
        return judge.can_rerun_judge(request.user)

    def save_model(
        self, request: HttpRequest, obj: Submission, form: ModelForm, change: bool
    ) -> None:
        changes = {
            field: form.cleaned_data[field]
            for field in form.changed_data
            if field in PRESENTATION_FIELDS
        }
        maintenance.update_entry_details(obj, actor=request.user, **changes)

    # --- list columns ----------------------------------------------------------------------

    @admin.display(description="Board", ordering="board_entry__board")
    def board(self, submission: Submission) -> str:
        entry = getattr(submission, "board_entry", None)
        if entry is None:
            return "—"  # evaluate only: the Verification column says so
        return BoardKind(entry.board).label

    @admin.display(description="Verification", ordering="verification_status")
    def verification(self, submission: Submission) -> str:
        """An evaluate-only entry is on no board, so it has no verification to show."""
        if not submission.publish:
            return "Evaluate only"
        return submission.get_verification_status_display()

    @admin.display(description="Shown")
    def visibility(self, submission: Submission) -> str:
        # Not the boolean field: its tick beside "Off: evaluate only" read as the opposite.
        if submission.publish:
            return "Published: on the boards (the owner may take it off)"
        return "Evaluate only: never on a board, its owner alone sees its rank"

    @admin.display(description="Latest run", ordering="latest_status")
    def latest_run(self, submission: Submission) -> str:
        status = getattr(submission, "latest_status", None)
        return EvaluationStatus(status).label if status else "—"

    @admin.display(description="Created", ordering="created_at")
    def created(self, submission: Submission) -> str:
        """The date and the minute, broken only between the two (issue 32: Django's long form
        was cut off at the list's edge)."""
        moment = timezone.localtime(submission.created_at)
        return format_html(
            '<span class="nowrap">{}</span> {}',
            moment.strftime("%Y-%m-%d"),
            moment.strftime("%H:%M"),
        )

    @admin.display(description="Rank (mean)", ordering="board_entry__rank")
    def standing(self, submission: Submission) -> str:
        """Short, so the list fits beside the admin's two sidebars at 1,400 px (issue 32: its
        last column was cut); the change page has the wins."""
        entry = getattr(submission, "board_entry", None)
        if entry is None:
            return "—"
        return format_html(
            '<span class="nowrap">#{}</span> <span class="nowrap">({})</span>',
            entry.rank,
            f"{entry.mean_rank:.2f}",
        )

    # --- the change page's read-only sections ----------------------------------------------

    def _status(self, submission: Submission) -> SubmissionStatus:
        """The status page's reading of the entry (its newest run, per-dataset values and
        format report), computed once per page: each section below asks for it."""
        cached = getattr(submission, "_admin_status", None)
        if cached is None:
            cached = submission_status(submission, viewer=None)
            submission._admin_status = cached
        return cached

    @admin.display(description="Board")
    def board_standing(self, submission: Submission) -> str:
        entry = self._status(submission).board_entry
        if entry is None:
            return "Not on a board" if submission.publish else "Evaluate only: never on a board"
        return (
            f"{BoardKind(entry.board).label} board, #{entry.rank} "
            f"(mean rank {entry.mean_rank!r}, {entry.wins} wins)"
        )

    @admin.display(description="Next step")
    def next_verification_step(self, submission: Submission) -> str:
        """What is missing for the Official board, linked to where it is done."""
        step = next_step(submission)
        return step.link() if step is not None else "Nothing to do"

    @admin.display(description="Run")
    def run_summary(self, submission: Submission) -> str:
        evaluation = self._status(submission).evaluation
        if evaluation is None:
            return "No run."
        test_set = (
            f"test set v{evaluation.test_set.version}"
            if evaluation.test_set_id
            else "no test set (imported result)"
        )
        summary = format_html(
            "Run {}: <strong>{}</strong>, {}, scorer {}, requested by {}, created {}.",
            evaluation.pk,
            evaluation.state.label,
            test_set,
            evaluation.scorer_version or "—",
            evaluation.requested_by or "—",
            evaluation.created_at.strftime("%Y-%m-%d %H:%M UTC"),
        )
        if evaluation.state == EvaluationStatus.FAILED:
            summary += format_html(
                " Failed ({}): {}", evaluation.error_code, evaluation.error_message
            )
        return summary

    @admin.display(description="Metrics (full precision)")
    def metrics_table(self, submission: Submission) -> str:
        evaluation = self._status(submission).evaluation
        if evaluation is None or not evaluation.state.has_scores:
            return "No scores yet."
        counts = (evaluation.result or {}).get("counts") or {}
        rows = []
        for metric in submission.benchmark.metrics.all():
            count = counts.get(metric.key) or {}
            scored = f"{count.get('scored')}/{count.get('total')}" if "total" in count else ""
            rows.append(
                (
                    metric.key,
                    metric.label,
                    full_precision(evaluation.metrics.get(metric.key)),
                    scored,
                )
            )
        return html_table(["Metric", "", "Value", "Scored"], rows)

    @admin.display(description="Per dataset or task (the benchmark's breakdown)")
    def per_dataset_table(self, submission: Submission) -> str:
        evaluation = self._status(submission).evaluation
        per_dataset = ((evaluation.result or {}).get("per_dataset") or {}) if evaluation else {}
        metrics = list(submission.benchmark.metrics.values_list("key", flat=True))
        shown = [key for key in metrics if per_dataset.get(key)]
        if not shown:
            return "None."
        datasets = group_order(
            {name for key in shown for name in per_dataset[key]}, submission.benchmark.metrics.all()
        )
        rows = [
            (dataset, *(full_precision(per_dataset[key].get(dataset)) for key in shown))
            for dataset in datasets
        ]
        return html_table([submission.benchmark.wording.breakdown.capitalize(), *shown], rows)

    @admin.display(description="Declared with the file")
    def declared_options(self, submission: Submission) -> str:
        """The benchmark plugin's options as the submission declared them (MedSG-Bench's box
        convention and zero-shot declaration)."""
        lines = declared_options(submission)
        if not lines:
            return "None (the benchmark asks for none)."
        return html_table(
            ["Option", "Value", "Meaning"], [(o.label, o.value, o.text) for o in lines]
        )

    @admin.display(description="Format report")
    def format_report(self, submission: Submission) -> str:
        formats = self._status(submission).formats
        if not formats:
            return "None."
        rows = []
        for task in formats:
            examples = format_html_join(
                "",
                "<li>row {} ({}): <code>{}</code></li>",
                ((e.row, e.sample_id, e.prediction) for e in task.examples),
            )
            percent = "—" if task.percent is None else f"{task.percent:.1f}%"
            rows.append(
                (
                    task.task,
                    f"{task.parsed}/{task.total}",
                    percent,
                    format_html("<ul>{}</ul>", examples) if task.examples else "",
                )
            )
        return html_table(["Task", "Parsed", "", "Unparsed answers (the submitter's own)"], rows)

    @admin.display(description="LLM judge")
    def judge_progress(self, submission: Submission) -> str:
        evaluation = self._status(submission).evaluation
        panel = judge.judge_panel(evaluation)
        if panel is not None and panel.before_scores:
            return panel.message
        if panel is None or not panel.shown:
            return "No judge step for this run."
        text = {
            "unavailable": "Waiting; the judge cannot run: {reason}",
            "can_start": "Waiting for the judge to be started.",
            "waiting": "Waiting for the judge to be started.",
            "running": "Running: {progress}.",
            "failed": "The last job failed: {message}",
            "done": "Done: {progress}.",
        }[panel.state]
        progress = panel.progress
        summary = text.format(
            reason=panel.reason,
            message=panel.message,
            progress=f"{progress.summary} ({progress.percent}%)" if progress else "no job",
        )
        job = evaluation.judge_jobs.order_by("-created_at", "-id").first()
        if job is None:
            return summary
        url = reverse("admin:judging_judgejob_change", args=[job.pk])
        return format_html('{} <a href="{}">Judge job {}</a>', summary, url, job.pk)

    @admin.display(description="Audit trail")
    def audit_trail(self, submission: Submission) -> str:
        events = list(entry_audit_trail(submission)[:AUDIT_ROWS_SHOWN])
        if not events:
            return "Nothing recorded."
        rows = [
            (
                event.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
                event.actor or "system",
                event.action,
                event.target_repr,
                from_to(event.data),
                audit_details(event.data),
            )
            for event in events
        ]
        return html_table(
            ["When", "Who", "Action", "On", "From → to", "Note, reason, details"], rows
        )

    # --- actions -----------------------------------------------------------------------------

    @admin.action(description="Nominate for the Official board", permissions=["verify"])
    def nominate(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        self._move(request, queryset, VerificationStatus.NOMINATED, note=action_note(request))

    @admin.action(description="Record that the authors were contacted", permissions=["verify"])
    def record_contact(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        self._move(request, queryset, VerificationStatus.CONTACTED, note=action_note(request))

    @admin.action(description="Record that model access was granted", permissions=["verify"])
    def grant_access(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        self._move(request, queryset, VerificationStatus.ACCESS_GRANTED, note=action_note(request))

    @admin.action(description="Verify (put on the Official board)", permissions=["verify"])
    def verify(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        self._move(request, queryset, VerificationStatus.VERIFIED, note=action_note(request))

    @admin.action(description="Reject, with a reason…", permissions=["verify"])
    def reject(self, request: HttpRequest, queryset: QuerySet[Submission]) -> HttpResponse | None:
        return self._move_with_reason(
            request,
            queryset,
            VerificationStatus.REJECTED,
            action="reject",
            title="Reject entries",
            explanation="Reject these entries: they stay on (or return to) the Community board.",
        )

    @admin.action(
        description="Withdraw from the Official board, with a reason…", permissions=["verify"]
    )
    def withdraw(self, request: HttpRequest, queryset: QuerySet[Submission]) -> HttpResponse | None:
        return self._move_with_reason(
            request,
            queryset,
            VerificationStatus.WITHDRAWN,
            action="withdraw",
            title="Withdraw entries",
            explanation="Withdraw these verified entries: they move to the Community board.",
        )

    @admin.action(
        description="Rerun scoring (against the active test set)", permissions=["rerun_scoring"]
    )
    def rerun_scoring(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        done, refused = [], []
        for submission in queryset:
            try:
                evaluation = maintenance.rerun_scoring(
                    submission, actor=request.user, note=action_note(request)
                )
            except DomainError as error:
                refused.append(f"{submission.model_name}: {error}")
            else:
                done.append(f"{submission.model_name} (run {evaluation.pk})")
        self._report(request, "Scoring queued again: {}.", done, refused)

    @admin.action(description="Rerun the LLM judge", permissions=["rerun_judge"])
    def rerun_judge(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        done, refused = [], []
        for submission in queryset:
            evaluation = latest_evaluation(submission)
            if evaluation is None:
                refused.append(f"{submission.model_name}: it has no run")
                continue
            try:
                job = judge.rerun_judge(evaluation, actor=request.user)
            except DomainError as error:
                refused.append(f"{submission.model_name}: {error}")
            else:
                done.append(f"{submission.model_name} (job {job.pk})")
        self._report(request, "Judge queued: {}.", done, refused)

    def _move(
        self,
        request: HttpRequest,
        queryset: QuerySet[Submission],
        new: VerificationStatus,
        *,
        note: str = "",
        reason: str = "",
    ) -> None:
        """Move each entry through the one writer; report the moves and the refusals, each
        refusal with the entry's next step (`next_step`), linked."""
        done, refused = [], []
        for submission in queryset:
            try:
                set_verification_status(
                    submission, new, actor=request.user, note=note, reason=reason
                )
            except DomainError as error:
                step = next_step(submission)
                refused.append(
                    format_html(
                        "{}: {}{}",
                        submission.model_name,
                        error,
                        format_html(" {}", step.html()) if step is not None else "",
                    )
                )
            else:
                done.append(submission.model_name)
        self._report(request, f"{new.label}: {{}}.", done, refused)

    def _move_with_reason(
        self,
        request: HttpRequest,
        queryset: QuerySet[Submission],
        new: VerificationStatus,
        *,
        action: str,
        title: str,
        explanation: str,
    ) -> HttpResponse | None:
        """Ask for the reason the authors are shown, then move; the confirmation page posts
        back to the change list with `apply`. None returns to the list."""
        if "apply" in request.POST:
            form = ReasonForm(request.POST)
            if form.is_valid():
                self._move(
                    request,
                    queryset,
                    new,
                    note=form.cleaned_data["note"],
                    reason=form.cleaned_data["reason"],
                )
                return None
        else:
            form = ReasonForm(initial={"note": action_note(request)})
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": title,
            "explanation": explanation,
            "queryset": queryset.select_related("benchmark"),
            "form": form,
            "action": action,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, REASON_PAGE, context)

    def _report(
        self, request: HttpRequest, success: str, done: list[str], refused: list[str]
    ) -> None:
        """Plain texts are escaped; a refusal built with `format_html` keeps its link."""
        if done:
            self.message_user(request, success.format(", ".join(done)), messages.SUCCESS)
        if refused:
            joined = format_html_join("; ", "{}", ((text,) for text in refused))
            self.message_user(request, format_html("Not done: {}", joined), messages.ERROR)
