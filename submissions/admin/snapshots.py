"""Board snapshots in the console (issue 33): the list, read-only (a snapshot never changes),
and "Take a snapshot", a maintainer's own with a note (`maintenance.take_snapshot`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from accounts.roles import is_maintainer
from benchmark.models import Benchmark
from core.exceptions import DomainError

from ..maintenance import take_snapshot
from ..models import BoardSnapshot


class TakeSnapshotForm(forms.Form):
    benchmark = forms.ModelChoiceField(queryset=Benchmark.objects.order_by("name"))
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Why this snapshot: shown with it on the history page and in the API.",
    )


@admin.register(BoardSnapshot)
class BoardSnapshotAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark", "taken_at", "reason", "entries", "short_sha256", "written"]
    list_filter = ["benchmark", "reason"]
    ordering = ["-taken_at", "-pk"]
    fields = [
        "benchmark", "taken_at", "reason", "description", "note", "changes", "sealed_at",
        "entries", "sha256", "metric_keys",
    ]  # fmt: skip
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).defer("csv", "rows")

    @admin.display(description="sha256")
    def short_sha256(self, snapshot: BoardSnapshot) -> str:
        return snapshot.sha256[:16] + "…" if snapshot.sha256 else "—"

    @admin.display(description="Written", boolean=True)
    def written(self, snapshot: BoardSnapshot) -> bool:
        return snapshot.sealed_at is not None

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_maintainer(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_maintainer(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_urls(self) -> list[Any]:
        take = path(
            "take/",
            self.admin_site.admin_view(self.take_view),
            name="submissions_boardsnapshot_take",
        )
        return [take, *super().get_urls()]

    def take_view(self, request: HttpRequest) -> HttpResponse:
        """A maintainer's snapshot: the benchmark and a note; written once the board's
        rebuild has its rank intervals."""
        if not is_maintainer(request.user):
            raise PermissionDenied
        form = TakeSnapshotForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            benchmark = form.cleaned_data["benchmark"]
            try:
                take_snapshot(benchmark, actor=request.user, note=form.cleaned_data["note"])
            except DomainError as error:
                form.add_error("note", str(error))
            else:
                messages.success(
                    request,
                    f"A snapshot of {benchmark.name} is asked for: it is listed here once the "
                    "board's rank intervals are computed.",
                )
                return redirect(reverse("admin:submissions_boardsnapshot_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": "Take a snapshot of a benchmark's boards",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/submissions/boardsnapshot/take.html", context)
