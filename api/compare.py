"""Read endpoint: two entries of a benchmark compared, metric by metric (issue 12).

    GET /api/v1/benchmarks/<slug>/compare/?a=<submission_id>&b=<submission_id>    compare

Per metric the difference a - b with its paired 95% bootstrap interval and two-sided p-value
(`submissions.intervals.compare_runs`; docs/statistics.md), per dataset the point differences,
and one plain sentence. The rankings' privacy rules hold (`submissions.selectors.compared_run`):
a published entry on the board is anyone's, an evaluate-only entry its owner's (and the
maintainers'); any other id answers the 404 a nonexistent one does.

Only what the board already shows, or the owner already sees, is derived: the stored intervals'
source, `RunReplicates.values` and `contributions`, never leaves `compare_runs`.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import path
from django.utils.cache import patch_cache_control
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.models import Benchmark
from submissions.intervals import compare_runs, comparison_as_dict
from submissions.models import Evaluation, Submission
from submissions.selectors import compared_run

from .benchmarks import visible_benchmark
from .rankings_serializers import InvalidParametersSerializer

# --- serializers ----------------------------------------------------------------------------------


class CompareQuerySerializer(serializers.Serializer):
    a = serializers.IntegerField(min_value=1, help_text="Entry a: a submission id")
    b = serializers.IntegerField(min_value=1, help_text="Entry b: a submission id (may be a)")


def _interval_field(help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text=help_text,
    )


class CompareSideSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    model = serializers.CharField()


class CompareMetricSerializer(serializers.Serializer):
    value_a = serializers.FloatField(allow_null=True, help_text="a's value (null: none)")
    value_b = serializers.FloatField(allow_null=True, help_text="b's value (null: none)")
    difference = serializers.FloatField(
        allow_null=True, help_text="a - b (null when either has no value)"
    )
    interval = _interval_field(
        "The paired 95% bootstrap interval of a - b; null without one (see `unpaired_reason`, "
        "or a value missing on some replicate)"
    )
    p_value = serializers.FloatField(
        allow_null=True,
        help_text="Two-sided paired bootstrap p-value of a - b = 0 (1 when a is b; null "
        "without an interval); at least 2 / (B + 1)",
    )
    better = serializers.ChoiceField(
        choices=["a", "b", "tied"],
        allow_null=True,
        help_text="The entry the interval shows better (0 outside it, the metric's direction "
        "taken into account), tied when it holds 0, null without an interval",
    )


class ComparisonSerializer(serializers.Serializer):
    a = CompareSideSerializer()
    b = CompareSideSerializer()
    paired = serializers.BooleanField(
        help_text="Both runs were resampled with the same replicates (same test-set version, "
        "same B), so their differences have intervals"
    )
    unpaired_reason = serializers.CharField(
        allow_blank=True, help_text='Why not paired, in words ("" when paired)'
    )
    level = serializers.FloatField(help_text="The intervals' level (0.95)")
    metrics = serializers.DictField(child=CompareMetricSerializer(), help_text="By metric key")
    per_dataset = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField(allow_null=True)),
        help_text="metric key -> dataset -> a - b (aggregates; no intervals)",
    )
    summary = serializers.CharField(
        help_text='One sentence, e.g. "A is better on 4 metrics; the test set cannot tell '
        'them apart on 6."'
    )


class CompareErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField()


# --- the view -------------------------------------------------------------------------------------


class NoScores(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "no_scores"
    default_detail = "The entry has no scores yet."


COMPARE_DESCRIPTION = """\
Entry a against entry b on every metric of the benchmark: `value_a`, `value_b`, the \
`difference` a - b, its paired 95% clustered-bootstrap `interval`, the two-sided `p_value` and \
which entry is `better` (or `tied`); the per-dataset differences and a `summary` sentence.

Each entry is compared on the run the board shows; an evaluate-only entry (visible to its owner, \
maintainers and superusers only) on its newest run with scores. An entry of another benchmark, \
one you may not see, or none at all: 404, the same answer for each. a may equal b (difference \
0, p-value 1). Intervals need per-sample data: with an imported result, or runs of different \
test-set versions, the differences come without intervals and `unpaired_reason` says why."""


class CompareView(APIView):
    @extend_schema(
        operation_id="benchmarks_compare",
        summary="Two entries compared: paired differences with intervals and p-values",
        description=COMPARE_DESCRIPTION,
        parameters=[CompareQuerySerializer],
        responses={
            200: ComparisonSerializer,
            400: OpenApiResponse(
                InvalidParametersSerializer, description="a or b missing or not an id"
            ),
            404: OpenApiResponse(
                CompareErrorSerializer,
                description="No such benchmark, or no such entry on it that you may see",
            ),
            409: OpenApiResponse(
                CompareErrorSerializer,
                description="An entry you may see has no scores yet (code no_scores)",
            ),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        query = CompareQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        a = _run(benchmark, query.validated_data["a"], "a", request.user)
        b = _run(benchmark, query.validated_data["b"], "b", request.user)
        response = Response(comparison_as_dict(compare_runs(benchmark, a, b)))
        # Anyone's only when both entries are on a public board; an evaluate-only entry, or
        # a hidden benchmark, is the viewer's alone: no shared cache may keep it.
        shared = benchmark.is_public and a.submission.publish and b.submission.publish
        patch_cache_control(response, no_cache=True, **{"public" if shared else "private": True})
        return response


def _run(benchmark: Benchmark, submission_id: int, side: str, viewer: Any) -> Evaluation:
    try:
        run = compared_run(benchmark, submission_id, viewer=viewer)
    except Submission.DoesNotExist:
        raise Http404(f"No such entry for `{side}` on {benchmark.name}.") from None
    if run is None:
        raise NoScores(
            f"Entry {submission_id} (`{side}`) has no scores yet: it can be compared once its "
            "run is scored."
        )
    return run


urlpatterns = [
    path("benchmarks/<slug:slug>/compare/", CompareView.as_view(), name="compare"),
]
