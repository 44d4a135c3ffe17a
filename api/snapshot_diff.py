"""Read endpoint, public: what changed between two snapshots of a benchmark's boards (issue 33,
point 3; docs/boards.md "Differences and trends", docs/api.md).

    GET /api/v1/benchmarks/<slug>/snapshots/diff/?from=<id>&to=<id>    snapshot-diff

The two ids in either order; the body says which is `older` and which `newer` and goes from
the one to the other. The difference is `submissions.snapshot_diff.diff_snapshots`'s, the one
the page `/b/<slug>/history/diff/` prints. Both snapshots never change, so neither does the
answer: it is served with both sha256s as its ETag and may be kept for a year.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.cache import get_conditional_response, patch_cache_control
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.models import Benchmark
from submissions.enums import BoardKind
from submissions.models import BoardSnapshot
from submissions.snapshot_diff import ChangedEntry, ListedEntry, Move, SnapshotDiff
from submissions.snapshot_trends import SnapshotNotFound, compare_snapshots, snapshot_pair
from submissions.snapshots import snapshot_summary

from .benchmarks import NotFoundSerializer, visible_benchmark
from .rankings_serializers import InvalidParametersSerializer
from .snapshots import IMMUTABLE_SECONDS, SnapshotSerializer, snapshot_links

# `from` is a Python keyword: the query's serializer is built from a dict of its fields.
SnapshotDiffQuerySerializer = type(
    "SnapshotDiffQuerySerializer",
    (serializers.Serializer,),
    {
        "from": serializers.IntegerField(min_value=1, help_text="A snapshot's id"),
        "to": serializers.IntegerField(
            min_value=1, help_text="Another snapshot's id (either order; may be the same)"
        ),
    },
)


class ListedEntrySerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    model = serializers.CharField()
    board = serializers.ChoiceField(choices=BoardKind.values)
    rank = serializers.IntegerField(help_text="The rank the board showed")
    position = serializers.IntegerField(help_text="Its place on its own board (1 at the top)")
    overall = serializers.IntegerField(help_text="Its place over both boards, by rank")


class MoveSerializer(serializers.Serializer):
    old = serializers.JSONField(help_text="In the older snapshot")
    new = serializers.JSONField(help_text="In the newer snapshot")


class ChangedEntrySerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    model = MoveSerializer()
    board = MoveSerializer(help_text="official or community: a verification moves it")
    rank = MoveSerializer(help_text="The rank the board showed")
    position = MoveSerializer(help_text="The place on its own board")
    overall = MoveSerializer(help_text="The place over both boards, by rank")
    values = serializers.DictField(
        child=MoveSerializer(), help_text="The metrics whose value changed, by key"
    )
    testset_version = MoveSerializer(help_text="The test set's version its numbers came from")
    scorer_version = MoveSerializer(help_text="The scorer's version")
    moved_rank = serializers.BooleanField()
    moved_board = serializers.BooleanField()
    rescored = serializers.BooleanField(help_text="Another test-set or scorer version")


class DiffCountsSerializer(serializers.Serializer):
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    changed = serializers.IntegerField(help_text="Entries in both that moved or changed")
    moved_rank = serializers.IntegerField()
    moved_board = serializers.IntegerField()
    changed_values = serializers.IntegerField()
    rescored = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class SnapshotDiffSerializer(serializers.Serializer):
    benchmark = serializers.CharField()
    older = SnapshotSerializer()
    newer = SnapshotSerializer()
    metrics = serializers.ListField(
        child=serializers.CharField(), help_text="The metric keys compared (both snapshots')"
    )
    counts = DiffCountsSerializer()
    added = ListedEntrySerializer(many=True, help_text="In the newer only, in its rank order")
    removed = ListedEntrySerializer(
        many=True, help_text="In the older only, where they stood, in its rank order"
    )
    changed = ChangedEntrySerializer(many=True, help_text="In both, in the newer's rank order")


def _pair(move: Move[Any]) -> dict[str, Any]:
    return {"old": move.old, "new": move.new}


def _listed(entry: ListedEntry) -> dict[str, Any]:
    place = entry.place
    return {
        "submission_id": entry.submission_id,
        "model": entry.model,
        "board": place.board,
        "rank": place.rank,
        "position": place.position,
        "overall": place.overall,
    }


def _changed(entry: ChangedEntry) -> dict[str, Any]:
    return {
        "submission_id": entry.submission_id,
        "model": _pair(entry.model),
        "board": _pair(entry.board),
        "rank": _pair(entry.rank),
        "position": _pair(entry.position),
        "overall": _pair(entry.overall),
        "values": {key: _pair(move) for key, move in entry.values.items()},
        "testset_version": _pair(entry.testset_version),
        "scorer_version": _pair(entry.scorer_version),
        "moved_rank": entry.moved_rank,
        "moved_board": entry.moved_board,
        "rescored": entry.rescored,
    }


def diff_as_dict(diff: SnapshotDiff) -> dict[str, Any]:
    return {
        "metrics": diff.metric_keys,
        "counts": {
            "added": len(diff.added),
            "removed": len(diff.removed),
            "changed": len(diff.changed),
            "moved_rank": diff.moved_rank,
            "moved_board": diff.moved_board,
            "changed_values": diff.changed_values,
            "rescored": diff.rescored,
            "unchanged": diff.unchanged,
        },
        "added": [_listed(entry) for entry in diff.added],
        "removed": [_listed(entry) for entry in diff.removed],
        "changed": [_changed(entry) for entry in diff.changed],
    }


DIFF_DESCRIPTION = """\
What changed from one snapshot of the benchmark's boards to another, matched by entry \
(`submission_id`): the entries `added` (in the newer only) and `removed` (in the older only, \
where they stood), and each entry in both that `changed`: its `board` (a verification moves it \
from community to official), its `rank` as the board showed it, its `position` on its own board \
and its `overall` place over both boards, the `values` of the metrics that changed, and the \
`testset_version` and `scorer_version` (a re-scoring on a corrected test set shows both). \
Every changed field is `{"old", "new"}`, older to newer.

`from` and `to` may be given in either order (and may be equal); `older` and `newer` say which \
is which. Both snapshots never change, so neither does this answer (ETag, cached for a year). \
An id the benchmark has no snapshot of is 404."""


class SnapshotDiffView(APIView):
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="benchmarks_snapshot_diff",
        summary="What changed between two board snapshots",
        description=DIFF_DESCRIPTION,
        parameters=[SnapshotDiffQuerySerializer],
        responses={
            200: SnapshotDiffSerializer,
            400: OpenApiResponse(
                InvalidParametersSerializer, description="from or to missing or not an id"
            ),
            404: OpenApiResponse(
                NotFoundSerializer,
                description="No such benchmark, or no such snapshot of it",
            ),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        query = SnapshotDiffQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            older, newer = snapshot_pair(
                benchmark, query.validated_data["from"], query.validated_data["to"]
            )
        except SnapshotNotFound as error:
            raise NotFound(str(error)) from None
        etag = f'"diff-{older.pk}-{newer.pk}-{older.sha256[:16]}-{newer.sha256[:16]}"'
        response = get_conditional_response(request, etag=etag)
        if response is None:
            response = Response(
                {
                    "benchmark": benchmark.slug,
                    "older": _summary(request, benchmark, older),
                    "newer": _summary(request, benchmark, newer),
                    **diff_as_dict(compare_snapshots(older, newer)),
                }
            )
        response["ETag"] = etag
        visibility = {"public": True} if benchmark.is_public else {"private": True}
        patch_cache_control(response, max_age=IMMUTABLE_SECONDS, **visibility)
        return response


def _summary(request: Request, benchmark: Benchmark, snapshot: BoardSnapshot) -> dict[str, Any]:
    return {**snapshot_summary(snapshot, benchmark), **snapshot_links(request, benchmark, snapshot)}


urlpatterns = [
    path(
        "benchmarks/<slug:slug>/snapshots/diff/",
        SnapshotDiffView.as_view(),
        name="snapshot-diff",
    ),
]
