"""Read endpoints, public: a benchmark's board snapshots (issue 33, docs/boards.md "Snapshots").

    GET /api/v1/benchmarks/<slug>/snapshots/            snapshots       newest first
    GET /api/v1/benchmarks/<slug>/snapshots/<id>.csv    snapshot-csv    the CSV its sha256 names
    GET /api/v1/benchmarks/<slug>/snapshots/<id>.json   snapshot-json   the same rows as JSON

A snapshot never changes once written (`submissions.snapshots`), so its bodies are served
with its sha256 as their ETag and may be kept by any cache for a year. A snapshot still being
written (its build's rank intervals not in yet) is not listed and is 404.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path, reverse
from django.utils.cache import get_conditional_response, patch_cache_control
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.models import Benchmark
from submissions.enums import SnapshotReason
from submissions.models import BoardSnapshot
from submissions.snapshots import (
    sealed_snapshots,
    snapshot_csv,
    snapshot_json,
    snapshot_summary,
)

from .benchmarks import NotFoundSerializer, visible_benchmark
from .rankings_csv import CSVRenderer

# A written snapshot's bodies never change: a year, as immutable assets are kept.
IMMUTABLE_SECONDS = 365 * 24 * 3600


class SnapshotSerializer(serializers.Serializer):
    """The schema of a listed snapshot (the view builds plain dicts)."""

    id = serializers.IntegerField()
    benchmark = serializers.CharField()
    taken_at = serializers.DateTimeField(help_text="The moment the boards are as of (UTC).")
    reason = serializers.ChoiceField(choices=SnapshotReason.choices)
    description = serializers.CharField(help_text="What changed, in words.")
    note = serializers.CharField(help_text="A maintainer's note, or empty.")
    sha256 = serializers.CharField(help_text="The sha256 of the CSV's bytes (hex).")
    entries = serializers.IntegerField(help_text="Rows on both boards.")
    url = serializers.URLField(help_text="The snapshot's board page (a permanent link).")
    csv = serializers.URLField()
    json = serializers.URLField()


def snapshot_links(request: Request, benchmark: Benchmark, snapshot: BoardSnapshot) -> dict:
    def absolute(name: str, *args: object) -> str:
        return request.build_absolute_uri(reverse(name, args=args))

    return {
        "url": absolute("submissions:snapshot", benchmark.slug, snapshot.pk),
        "csv": absolute("api:snapshot-csv", benchmark.slug, snapshot.pk),
        "json": absolute("api:snapshot-json", benchmark.slug, snapshot.pk),
    }


class SnapshotListView(APIView):
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="benchmarks_snapshots",
        summary="A benchmark's board snapshots, newest first",
        description=(
            "Every written snapshot of the benchmark's boards: when it was taken, why, how "
            "many rows both boards had and the sha256 of its CSV, with the links to its page, "
            "CSV and JSON. A snapshot is taken with every change of the Official board, at "
            "most daily when the Community board changed, and when a maintainer asks."
        ),
        responses={
            200: SnapshotSerializer(many=True),
            (404, "application/json"): OpenApiResponse(NotFoundSerializer),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        body = [
            {
                **snapshot_summary(snapshot, benchmark),
                **snapshot_links(request, benchmark, snapshot),
            }
            for snapshot in sealed_snapshots(benchmark)
        ]
        response = Response(body)
        patch_cache_control(response, no_cache=True, **_visibility(benchmark))
        return response


def _visibility(benchmark: Benchmark) -> dict[str, bool]:
    return {"public": True} if benchmark.is_public else {"private": True}


def found_snapshot(benchmark: Benchmark, pk: int) -> BoardSnapshot:
    snapshot = BoardSnapshot.objects.filter(
        benchmark=benchmark, pk=pk, sealed_at__isnull=False
    ).first()
    if snapshot is None:
        raise NotFound(f"{benchmark.name} has no snapshot {pk}.")
    return snapshot


class SnapshotFileView(APIView):
    """A snapshot's CSV or JSON, as written."""

    renderer_classes = [JSONRenderer, CSVRenderer]
    kind = "csv"

    def handle_exception(self, exc: Exception) -> Response:
        # Errors are JSON whatever was asked for (as the rankings').
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)

    def file(self, request: Request, slug: str, pk: int) -> HttpResponse:
        benchmark = visible_benchmark(request, slug)
        snapshot = found_snapshot(benchmark, pk)
        etag = f'"{snapshot.sha256}-{self.kind}"'
        not_modified = get_conditional_response(request, etag=etag)
        if not_modified is None:
            if self.kind == "csv":
                response = HttpResponse(
                    snapshot_csv(snapshot), content_type="text/csv; charset=utf-8"
                )
            else:
                response = HttpResponse(
                    snapshot_json(snapshot, benchmark), content_type="application/json"
                )
            day = snapshot.taken_at.date().isoformat()
            name = f"{benchmark.slug}-snapshot-{snapshot.pk}-{day}.{self.kind}"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
        else:
            response = not_modified
        response["ETag"] = etag
        patch_cache_control(
            response, max_age=IMMUTABLE_SECONDS, immutable=True, **_visibility(benchmark)
        )
        return response


class SnapshotCSVView(SnapshotFileView):
    renderer_classes = [CSVRenderer]
    kind = "csv"

    @extend_schema(
        operation_id="benchmarks_snapshot_csv",
        summary="A board snapshot as CSV",
        description=(
            "Both boards' rows as they were, in the rankings' CSV columns (`board=all`) with "
            "each row's `testset_version` and `scorer_version` last. The sha256 of the body "
            "is the snapshot's `sha256`; the body never changes."
        ),
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (404, "application/json"): OpenApiResponse(NotFoundSerializer),
        },
    )
    def get(self, request: Request, slug: str, pk: int, format: str | None = None) -> HttpResponse:
        return self.file(request, slug, pk)


class SnapshotJSONView(SnapshotFileView):
    renderer_classes = [JSONRenderer]
    kind = "json"

    @extend_schema(
        operation_id="benchmarks_snapshot_json",
        summary="A board snapshot as JSON",
        description=(
            "The snapshot's listing fields, `metrics` (the metric keys) and `rows`: both "
            "boards' rows as the rankings' JSON rows were, by rank, each with its `position` "
            "on its board, its `highlights`, and its `testset_version` and `scorer_version`. "
            "The body never changes."
        ),
        responses={
            (200, "application/json"): OpenApiTypes.OBJECT,
            (404, "application/json"): OpenApiResponse(NotFoundSerializer),
        },
    )
    def get(self, request: Request, slug: str, pk: int, format: str | None = None) -> HttpResponse:
        return self.file(request, slug, pk)


urlpatterns = [
    path("benchmarks/<slug:slug>/snapshots/", SnapshotListView.as_view(), name="snapshots"),
    path(
        "benchmarks/<slug:slug>/snapshots/<int:pk>.csv",
        SnapshotCSVView.as_view(),
        {"format": "csv"},
        name="snapshot-csv",
    ),
    path(
        "benchmarks/<slug:slug>/snapshots/<int:pk>.json",
        SnapshotJSONView.as_view(),
        {"format": "json"},
        name="snapshot-json",
    ),
]
