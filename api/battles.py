"""Read endpoint, public: a rating category's battles as JSON Lines (issue 15, docs/ratings.md,
"The export").

    GET /api/v1/benchmarks/<slug>/battles.jsonl?category=KEY          battles

One battle per line, every battle between two entries on the boards (the battles the tab's
ratings are fitted on), in the order they were stored. Each line holds `model_a`, `model_b`
and `winner` exactly as `manage.py rate_battles` reads them, so the download rated with the
tab's rounds and seed gives the tab's ratings, then `category`, `question` (the question's
key), `round1_first` / `round2_first` (whose answer each round showed first),
`round1_verdict` / `round2_verdict` (the judge's verdict read as "first", "second" or "tie", by
position), `judge` (the judge model) and `judged_at`.

Never in it: a prompt or a reference answer (ground truth), and the judge's raw replies, which
an LLM judge asked to compare the answers with the reference routinely quotes or paraphrases
(the maintainers see them in the admin).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.http import StreamingHttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.selectors import export_rows, rating_categories

from .benchmarks import NotFoundSerializer, visible_benchmark
from .rankings_serializers import InvalidParametersSerializer

MEDIA_TYPE = "application/jsonl"


class JSONLinesRenderer(BaseRenderer):
    """Selects JSON Lines in content negotiation; the view streams the body itself."""

    media_type = MEDIA_TYPE
    format = "jsonl"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return json.dumps(data).encode()


class BattlesQuerySerializer(serializers.Serializer):
    # A key is taken as given: " " is no category of the benchmark (404), not a blank (400).
    category = serializers.CharField(
        trim_whitespace=False,
        help_text=(
            "The key of a rating category of the benchmark (its tab's ?category=); one it "
            "does not have is 404, naming those it has."
        ),
    )


def _lines(rows: Iterator[dict]) -> Iterator[bytes]:
    for row in rows:
        yield (json.dumps(row, ensure_ascii=False) + "\n").encode()


class BattlesView(APIView):
    renderer_classes = [JSONLinesRenderer, JSONRenderer]

    @extend_schema(
        operation_id="benchmarks_battles",
        summary="A rating category's battles, as JSON Lines",
        description=__doc__,
        parameters=[
            BattlesQuerySerializer,
            OpenApiParameter("format", str, enum=["jsonl"], description="jsonl (the default)"),
        ],
        responses={
            (200, MEDIA_TYPE): OpenApiTypes.STR,
            (400, "application/json"): OpenApiResponse(
                InvalidParametersSerializer, description="No category asked for"
            ),
            (404, "application/json"): OpenApiResponse(
                NotFoundSerializer,
                description="No such benchmark, or it has no such rating category",
            ),
        },
    )
    def get(self, request: Request, slug: str, format: str | None = None) -> StreamingHttpResponse:
        benchmark = visible_benchmark(request, slug)
        query = BattlesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        key = query.validated_data["category"]
        keys = [category.key for category in rating_categories(benchmark)]
        if key not in keys:
            known = ", ".join(keys) or "none"
            raise NotFound(
                f"{benchmark.name} has no rating category {key!r} (its rating categories: {known})."
            )
        response = StreamingHttpResponse(
            _lines(export_rows(benchmark, key)), content_type=f"{MEDIA_TYPE}; charset=utf-8"
        )
        response["Content-Disposition"] = (
            f'attachment; filename="{benchmark.slug}-{key}-battles.jsonl"'
        )
        return response

    def handle_exception(self, exc: Exception) -> Response:
        # Errors are JSON whatever format was asked for.
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)


urlpatterns = [
    path("benchmarks/<slug:slug>/battles.jsonl", BattlesView.as_view(), name="battles"),
]
