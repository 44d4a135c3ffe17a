"""Admin for benchmarks and test sets: every write goes through ``benchmark.services``.

Benchmarks are created by ``setup_benchmarks`` from their definitions and test sets by
``import_testset``, so neither can be added here. A maintainer edits a benchmark's texts,
ranking policy and submission rules and its metrics' labels (each edit audited), and picks the
active test set with the "Make active" action. A test set's file, checksum, version, counts and
active flag are never edited by hand.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from benchmark.models import Benchmark, Metric, TestSet
from benchmark.services import (
    DEFINITION_SETTINGS,
    EDITABLE_BENCHMARK_FIELDS,
    set_active_testset,
    update_benchmark,
    update_metric,
)


class VerbatimTextField(forms.CharField):
    """A textarea's text as written: browsers send CRLF line ends and Django strips surrounding
    whitespace, either of which would change a stored judge prompt (and its checksum) or a
    BibTeX entry on a save that edited something else. Line ends become LF; nothing is stripped.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**kwargs, "strip": False})

    def to_python(self, value: Any) -> str:
        text = super().to_python(value)
        return text.replace("\r\n", "\n").replace("\r", "\n")


VERBATIM_TEXT = {models.TextField: {"form_class": VerbatimTextField}}


class MetricKeyListField(forms.JSONField):
    """The ranking order as JSON, an emptied box meaning no order (`[]`), not JSON null: the
    model refuses anything but a list, and mean rank needs no order."""

    def to_python(self, value: Any) -> Any:
        converted = super().to_python(value)
        return [] if converted is None else converted


class MetricInline(admin.TabularInline):
    model = Metric
    fields = [
        "position",
        "key",
        "label",
        "task",
        "direction",
        "display_decimals",
        "is_judge_metric",
        "is_rating",
        "description",
    ]
    # The scorer's side of a metric comes from the definition (setup_benchmarks).
    readonly_fields = ["position", "key", "task", "direction", "is_judge_metric", "is_rating"]
    extra = 0
    can_delete = False
    formfield_overrides = VERBATIM_TEXT

    def has_add_permission(self, request: HttpRequest, obj: Benchmark | None = None) -> bool:
        return False


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "is_public",
        "ranking_method",
        "tie_method",
        "ranking_scope",
        "updated_at",
    ]
    list_filter = ["is_public"]
    search_fields = ["name", "slug"]
    # The definition's issue-15 settings are shown, not edited (`DEFINITION_SETTINGS`).
    readonly_fields = ["slug", "category_tabs", *DEFINITION_SETTINGS, "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["slug", "name", "description", "is_public"]}),
        ("Texts", {"fields": ["about", "citation", "licence"]}),
        (
            "Ranking",
            {
                "fields": [
                    "ranking_method",
                    "ranking_order",
                    "tie_method",
                    "ranking_scope",
                    "ranking_decimals",
                ]
            },
        ),
        (
            "Submissions",
            {"fields": ["daily_submission_limit", "max_upload_mb", "max_prediction_chars"]},
        ),
        ("Statistics", {"fields": ["bootstrap_replicates"]}),
        ("LLM judge", {"fields": ["judge_rubric", "judge_settings", "judge_auto_start"]}),
        (
            "Verification",
            {"fields": ["verification_tolerance", "rerun_max_frames", "contact_url"]},
        ),
        ("Categories and model facts", {"fields": ["category_tabs", "model_facts"]}),
        (
            "Hosted evaluation",
            {"fields": ["hosted_evaluation", "hosted_max_tokens", "hosted_requests_per_minute"]},
        ),
        (
            "Pairwise ratings",
            {
                "fields": [
                    "pairwise_opponents",
                    "pairwise_questions",
                    "rating_anchor",
                    "rating_bootstrap_rounds",
                    "rating_seed",
                ]
            },
        ),
        (None, {"fields": ["created_at", "updated_at"]}),
    ]
    inlines = [MetricInline]
    formfield_overrides = VERBATIM_TEXT

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Benchmark | None = None) -> bool:
        return False

    @admin.display(description="Categories (tabs)")
    def category_tabs(self, benchmark: Benchmark) -> str:
        # A read-only list rather than an inline: an inline's management form would be one
        # more thing every change form must post, for rows nobody edits here.
        categories = list(benchmark.categories.all())
        if not categories:
            return "None: one board over every metric."
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                "<li><strong>{}</strong> ({}): {}, ranked {}{}</li>",
                (
                    (
                        category.label,
                        category.key,
                        ", ".join(category.metric_keys),
                        category.get_ranking_display().lower(),
                        f"; {category.judge_note}" if category.judge_note else "",
                    )
                    for category in categories
                ),
            ),
        )

    def formfield_for_dbfield(
        self, db_field: models.Field, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        # The keys themselves are checked by `Benchmark.clean`, which the form runs.
        if db_field.name == "ranking_order":
            kwargs["form_class"] = MetricKeyListField
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def save_model(
        self, request: HttpRequest, obj: Benchmark, form: ModelForm, change: bool
    ) -> None:
        # `obj` already carries the form's values; the service needs the stored ones to audit
        # {from, to}, so it gets a fresh copy.
        changes = {
            name: form.cleaned_data[name]
            for name in form.changed_data
            if name in EDITABLE_BENCHMARK_FIELDS
        }
        stored = Benchmark.objects.get(pk=obj.pk)
        update_benchmark(stored, actor=request.user, **changes)

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: BaseInlineFormSet, change: bool
    ) -> None:
        # Instead of formset.save(): only existing metrics' presentation changes (the inline
        # neither adds nor deletes), through the service. The admin's change message reads the
        # three lists formset.save() would have set.
        formset.new_objects, formset.deleted_objects, formset.changed_objects = [], [], []
        for metric_form in formset.forms:
            if not metric_form.has_changed() or metric_form.instance.pk is None:
                continue
            stored = Metric.objects.get(pk=metric_form.instance.pk)
            changed = metric_form.changed_data
            update_metric(
                stored,
                actor=request.user,
                **{name: metric_form.cleaned_data[name] for name in changed},
            )
            formset.changed_objects.append((stored, changed))


@admin.register(TestSet)
class TestSetAdmin(admin.ModelAdmin):
    list_display = [
        "benchmark",
        "version",
        "is_active",
        "record_count",
        "short_checksum",
        "scorer_version",
        "imported_by",
        "created_at",
    ]
    list_filter = ["benchmark", "is_active"]
    list_select_related = ["benchmark", "imported_by"]
    fields = [
        "benchmark",
        "version",
        "is_active",
        "checksum",
        "file_name",
        "record_count",
        "task_counts",
        "qa_type_counts",
        "dataset_counts",
        "scorer_version",
        "imported_by",
        "notes",
        "created_at",
    ]
    readonly_fields = fields
    actions = ["make_active"]

    @admin.display(description="sha256")
    def short_checksum(self, test_set: TestSet) -> str:
        return test_set.checksum[:12]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: TestSet | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: TestSet | None = None) -> bool:
        return False

    def has_activate_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("benchmark.change_testset")

    @admin.action(
        description="Make active (new submissions are scored against it)",
        permissions=["activate"],
    )
    def make_active(self, request: HttpRequest, queryset: QuerySet[TestSet]) -> None:
        chosen = list(queryset.select_related("benchmark")[:2])
        if len(chosen) != 1:
            self.message_user(request, "Select exactly one test set.", messages.ERROR)
            return
        test_set = set_active_testset(chosen[0], actor=request.user, note="admin action")
        self.message_user(request, f"{test_set} is now active.", messages.SUCCESS)
