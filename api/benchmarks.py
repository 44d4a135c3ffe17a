"""Read endpoints, public: the benchmarks (their rankings are in api/rankings.py).

    GET /api/v1/benchmarks/                          benchmark-list
    GET /api/v1/benchmarks/<slug>/                   benchmark-detail

Nothing here reads a test set's file or a run's result: no reference answer, per-sample score
or private path can be serialised.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import path, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.models import Benchmark, Metric, TestSet
from benchmark.selectors import (
    active_testset,
    benchmark_by_slug,
    benchmark_categories,
    benchmarks_for,
)
from submissions.selectors import board_summary

# The ranking rules in words (spec 6; docs/ranking.md), as the About tab states them.
RANKING_ORDER = "Mean rank over the metrics, lower is better."
LEXICOGRAPHIC_ORDER = (
    "By {keys}: the first metric decides, a tie on it is broken by the next, each compared "
    "after rounding and in its metric's direction."
)
RANKING_MISSING = (
    "A missing value, or a judge metric still pending, ranks last on its metric; all missing "
    "values of a metric share that rank."
)
TIEBREAKERS = [
    "More metrics won (rank 1 with a value).",
    "Lower sum of per-metric ranks.",
    "Higher sum of normalised scores (each value as a ratio to its metric's best value).",
    "Model name, case-insensitively.",
]
LEXICOGRAPHIC_TIEBREAKERS = TIEBREAKERS[-1:]


# --- serializers ----------------------------------------------------------------------------------


class MetricSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The column's name on the board and in results")
    label = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    task = serializers.CharField()
    direction = serializers.CharField(help_text="higher or lower (is better)")
    is_judge_metric = serializers.BooleanField(help_text="Scored by the LLM judge (step 2)")
    display_decimals = serializers.IntegerField(help_text="Decimals the board shows")
    position = serializers.IntegerField(help_text="Column order")


class RankingPolicySerializer(serializers.Serializer):
    method = serializers.CharField(
        help_text="mean_rank (mean rank over all metrics, then the tiebreakers) or "
        "lexicographic (by the metrics of metric_order, first key first)"
    )
    method_label = serializers.CharField()
    metric_order = serializers.ListField(
        child=serializers.CharField(),
        help_text="Metric keys by priority under lexicographic; empty under mean_rank",
    )
    tie_method = serializers.CharField(help_text="min (1, 1, 3) or dense (1, 1, 2)")
    tie_method_label = serializers.CharField()
    scope = serializers.CharField(
        help_text="global (ranks against both boards together) or per_board"
    )
    scope_label = serializers.CharField()
    decimals = serializers.IntegerField(
        allow_null=True, help_text="Values are rounded to this many decimals before ranking"
    )
    order = serializers.CharField(help_text="What orders the board, in a sentence")
    missing = serializers.CharField()
    tiebreakers = serializers.ListField(child=serializers.CharField(), help_text="In order")


class TestSetSerializer(serializers.Serializer):
    """Statistics of the active test set; never its file or contents."""

    __test__ = False  # not a pytest test class, despite the name

    version = serializers.IntegerField()
    checksum = serializers.CharField(help_text="sha256 of the file")
    record_count = serializers.IntegerField()
    qa_type_counts = serializers.DictField(child=serializers.IntegerField())
    task_counts = serializers.DictField(child=serializers.IntegerField())
    dataset_counts = serializers.DictField(child=serializers.IntegerField())
    scorer_version = serializers.CharField()
    imported_at = serializers.DateTimeField()


class BoardCountsSerializer(serializers.Serializer):
    official = serializers.IntegerField()
    community = serializers.IntegerField()


class BenchmarkSummarySerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    is_public = serializers.BooleanField(help_text="False: hidden, listed to maintainers only")
    url = serializers.CharField()
    rankings_url = serializers.CharField()


class CategorySerializer(serializers.Serializer):
    key = serializers.CharField(help_text="What `category=` of the rankings takes")
    label = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    judge_note = serializers.CharField(allow_blank=True, help_text="Who judges it, if anyone")
    ranking = serializers.ChoiceField(
        choices=["metrics", "rating"],
        help_text="metrics: over its metrics under the ranking policy; rating: by its rating, "
        "highest first",
    )
    metrics = serializers.ListField(child=serializers.CharField(), help_text="Its columns")


class BenchmarkDetailSerializer(BenchmarkSummarySerializer):
    citation = serializers.CharField(allow_blank=True)
    licence = serializers.CharField(allow_blank=True)
    metrics = MetricSerializer(many=True, help_text="In column order")
    tasks = serializers.ListField(child=serializers.CharField(), help_text="The metrics' tasks")
    ranking_policy = RankingPolicySerializer()
    test_set = TestSetSerializer(allow_null=True, help_text="The active one; null if none")
    boards = BoardCountsSerializer(help_text="Entries per board")
    computed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the board was last recomputed"
    )
    categories = CategorySerializer(
        many=True, help_text="The board's tabs beside the overview (issue 15); [] for none"
    )
    model_facts = serializers.ListField(
        child=serializers.CharField(),
        help_text="The model facts its submitters give and the rankings filter on (type, "
        "parameters, licence, precision, domain_specific); [] for none",
    )


class NotFoundSerializer(serializers.Serializer):
    detail = serializers.CharField()


# --- views ----------------------------------------------------------------------------------------


def visible_benchmark(request: Request, slug: str) -> Benchmark:
    """The benchmark the viewer may see (maintainers also hidden ones), else 404; api/rankings.py
    uses it too."""
    try:
        return benchmark_by_slug(slug, viewer=request.user)
    except Benchmark.DoesNotExist:
        raise Http404("No such benchmark.") from None


def _benchmark_links(request: Request, benchmark: Benchmark) -> dict[str, Any]:
    return {
        "slug": benchmark.slug,
        "name": benchmark.name,
        "description": benchmark.description,
        "is_public": benchmark.is_public,
        "url": request.build_absolute_uri(reverse("api:benchmark-detail", args=[benchmark.slug])),
        "rankings_url": request.build_absolute_uri(reverse("api:rankings", args=[benchmark.slug])),
    }


class BenchmarkListView(APIView):
    @extend_schema(
        operation_id="benchmarks_list",
        summary="The benchmarks",
        description="Public benchmarks by name (maintainers also see hidden ones).",
        responses={200: BenchmarkSummarySerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        # The same rule as opening one (benchmark_by_slug): hidden ones for maintainers only.
        benchmarks = benchmarks_for(request.user)
        rows = [_benchmark_links(request, benchmark) for benchmark in benchmarks]
        return Response(BenchmarkSummarySerializer(rows, many=True).data)


class BenchmarkDetailView(APIView):
    @extend_schema(
        operation_id="benchmarks_retrieve",
        summary="A benchmark: metrics, tasks, ranking policy, test set statistics",
        responses={
            200: BenchmarkDetailSerializer,
            404: OpenApiResponse(NotFoundSerializer, description="No such benchmark"),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        metrics = list(benchmark.metrics.all())
        summary = board_summary(benchmark)
        body = {
            **_benchmark_links(request, benchmark),
            "citation": benchmark.citation,
            "licence": benchmark.licence,
            "metrics": [_metric(metric) for metric in metrics],
            "tasks": list(dict.fromkeys(metric.task for metric in metrics)),
            "ranking_policy": _ranking_policy(benchmark),
            "test_set": _test_set(active_testset(benchmark)),
            "boards": summary.counts,
            "computed_at": summary.computed_at,
            "categories": [
                {
                    "key": category.key,
                    "label": category.label,
                    "description": category.description,
                    "judge_note": category.judge_note,
                    "ranking": category.ranking,
                    "metrics": list(category.metric_keys),
                }
                for category in benchmark_categories(benchmark)
            ],
            "model_facts": benchmark.fact_keys,
        }
        return Response(BenchmarkDetailSerializer(body).data)


def _metric(metric: Metric) -> dict[str, Any]:
    return {
        "key": metric.key,
        "label": metric.label,
        "description": metric.description,
        "task": metric.task,
        "direction": metric.direction,
        "is_judge_metric": metric.is_judge_metric,
        "display_decimals": metric.display_decimals,
        "position": metric.position,
    }


def _ranking_policy(benchmark: Benchmark) -> dict[str, Any]:
    lexicographic = benchmark.is_lexicographic
    return {
        "method": benchmark.ranking_method,
        "method_label": benchmark.get_ranking_method_display(),
        "metric_order": list(benchmark.ranking_order) if lexicographic else [],
        "tie_method": benchmark.tie_method,
        "tie_method_label": benchmark.get_tie_method_display(),
        "scope": benchmark.ranking_scope,
        "scope_label": benchmark.get_ranking_scope_display(),
        "decimals": benchmark.ranking_decimals,
        "order": (
            LEXICOGRAPHIC_ORDER.format(keys=benchmark.ranking_order_text)
            if lexicographic
            else RANKING_ORDER
        ),
        "missing": RANKING_MISSING,
        "tiebreakers": LEXICOGRAPHIC_TIEBREAKERS if lexicographic else TIEBREAKERS,
    }


def _test_set(test_set: TestSet | None) -> dict[str, Any] | None:
    """The active test set's statistics. Deliberately field by field: `file_name` (where the
    private ground truth lives) must never be serialised."""
    if test_set is None:
        return None
    return {
        "version": test_set.version,
        "checksum": test_set.checksum,
        "record_count": test_set.record_count,
        "qa_type_counts": test_set.qa_type_counts,
        "task_counts": test_set.task_counts,
        "dataset_counts": test_set.dataset_counts,
        "scorer_version": test_set.scorer_version,
        "imported_at": test_set.created_at,
    }


urlpatterns = [
    path("benchmarks/", BenchmarkListView.as_view(), name="benchmark-list"),
    path("benchmarks/<slug:slug>/", BenchmarkDetailView.as_view(), name="benchmark-detail"),
]
