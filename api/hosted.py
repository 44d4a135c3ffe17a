"""Hosted evaluation by API (docs/hosted.md, docs/api.md): submit a model endpoint, read the
public request queue, read one request, cancel it. The same services, checks and errors as
the web form.

    POST /api/v1/benchmarks/<slug>/hosted/                 hosted-list (token auth)
    GET  /api/v1/benchmarks/<slug>/hosted/                 hosted-list (public)
    GET  /api/v1/benchmarks/<slug>/hosted/<id>/            hosted-detail
    POST /api/v1/benchmarks/<slug>/hosted/<id>/cancel/     hosted-cancel

The queue is public (published requests; an evaluate-only one to its owner and the
maintainers), without any endpoint's address or key. A request's details (its progress,
tokens, the failure's whole message, its base URL) are its owner's and the maintainers'; to
anyone else a published request reads as its queue row. The API key is write-only: no
response carries it, only whether one was entered.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import path, reverse
from django.views.decorators.debug import sensitive_variables
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.models import Benchmark
from benchmark.selectors import benchmark_by_slug
from hosting import selectors, services
from hosting.config import endpoint_address_problem
from hosting.models import HostedRequest
from hosting.permissions import can_view_request
from hosting.selectors import QueueRow

from .submitting import ErrorSerializer, SubmitSerializer

# --- serializers -------------------------------------------------------------------------------


class HostedSubmitSerializer(SubmitSerializer):
    """The upload's fields without the file, and the endpoint."""

    predictions = None  # no file: Podium asks the endpoint (DRF drops an inherited field)
    base_url = serializers.URLField(
        max_length=300,
        help_text="The OpenAI-compatible API's base, e.g. https://api.example.org/v1; a public "
        "address, without a user name, password or query.",
    )
    model = serializers.CharField(max_length=200, help_text="The model name the endpoint expects")
    api_key = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=True,
        style={"input_type": "password"},
        help_text="Optional. Stored encrypted, sent only to the base URL's host, never returned.",
    )
    input_price_per_million = serializers.DecimalField(
        max_digits=10,
        decimal_places=4,
        min_value=0,
        required=False,
        allow_null=True,
        default=None,
        help_text="USD per million prompt tokens, for your cost estimate (optional)",
    )
    output_price_per_million = serializers.DecimalField(
        max_digits=10,
        decimal_places=4,
        min_value=0,
        required=False,
        allow_null=True,
        default=None,
        help_text="USD per million completion tokens, for your cost estimate (optional)",
    )

    def validate_base_url(self, value: str) -> str:
        problem = endpoint_address_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value.strip()

    def endpoint(self) -> dict[str, Any]:
        data = self.validated_data
        names = ("base_url", "model", "api_key", "input_price_per_million")
        return {name: data[name] for name in (*names, "output_price_per_million")}


class QueueCellSerializer(serializers.Serializer):
    category = serializers.CharField(allow_blank=True, help_text='"" without categories')
    label = serializers.CharField()
    state = serializers.CharField(help_text="pending, running, finished, failed or cancelled")
    answered = serializers.IntegerField()
    total = serializers.IntegerField()
    text = serializers.CharField(help_text='As the queue page says it: "running 12/40"')


class QueueRowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField(help_text="This request")
    model_name = serializers.CharField()
    submitted_at = serializers.DateTimeField()
    status = serializers.CharField(help_text="queued, running, done, failed or cancelled")
    position = serializers.IntegerField(
        allow_null=True, help_text="Its place in the queue while it waits for its first run"
    )
    categories = QueueCellSerializer(many=True)
    entry_url = serializers.CharField(
        allow_blank=True, help_text="The entry's page once it is scored"
    )
    publish = serializers.BooleanField()


class HostedRequestSerializer(QueueRowSerializer):
    """A request as its owner and the maintainers see it."""

    page_url = serializers.CharField(help_text="Its page on the site")
    message = serializers.CharField(allow_blank=True)
    failure = serializers.CharField(allow_blank=True, help_text="Why it failed, as a code")
    failure_label = serializers.CharField(allow_blank=True)
    items_total = serializers.IntegerField()
    items_done = serializers.IntegerField()
    items_failed = serializers.IntegerField()
    calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    max_tokens = serializers.IntegerField(help_text="The token cap it runs under")
    requests_per_minute = serializers.IntegerField(help_text="The pace it runs at")
    estimated_cost_usd = serializers.DecimalField(
        max_digits=12, decimal_places=4, allow_null=True, help_text="At your prices, if given"
    )
    base_url = serializers.CharField()
    model = serializers.CharField()
    api_key_set = serializers.BooleanField(help_text="Whether a key was entered (never the key)")
    submission = serializers.IntegerField(allow_null=True, help_text="The entry it became")
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


# --- representations ---------------------------------------------------------------------------


def _row(request: Request, benchmark: Benchmark, row: QueueRow) -> dict[str, Any]:
    cells = selectors.queue_categories(benchmark)
    return {
        "id": row.request_id,
        "url": request.build_absolute_uri(
            reverse("api:hosted-detail", args=[benchmark.slug, row.request_id])
        ),
        "model_name": row.model_name,
        "submitted_at": row.submitted_at,
        "status": row.status.value,
        "position": row.position,
        "categories": [
            {
                "category": category.key,
                "label": cell.label,
                "state": cell.state.value,
                "answered": cell.answered,
                "total": cell.total,
                "text": cell.text,
            }
            for category, cell in zip(cells, row.cells, strict=True)
        ],
        "entry_url": request.build_absolute_uri(row.entry_url) if row.entry_url else "",
        "publish": row.publish,
    }


def _details(request: Request, hosted: HostedRequest) -> dict[str, Any]:
    page = selectors.request_page(hosted, viewer=request.user)
    endpoint = hosted.endpoint
    return {
        **_row(request, hosted.benchmark, page.row),
        "page_url": request.build_absolute_uri(hosted.get_absolute_url()),
        "message": hosted.message,
        "failure": hosted.failure,
        "failure_label": hosted.get_failure_display() if hosted.failure else "",
        "items_total": hosted.items_total,
        "items_done": hosted.items_done,
        "items_failed": hosted.items_failed,
        "calls": hosted.calls,
        "prompt_tokens": hosted.prompt_tokens,
        "completion_tokens": hosted.completion_tokens,
        "max_tokens": hosted.max_tokens,
        "requests_per_minute": hosted.requests_per_minute,
        "estimated_cost_usd": page.cost,
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "api_key_set": endpoint.has_api_key,
        "submission": hosted.submission_id,
        "started_at": hosted.started_at,
        "finished_at": hosted.finished_at,
    }


def _benchmark(request: Request, slug: str) -> Benchmark:
    """A benchmark the viewer may see that evaluates model endpoints (else 404)."""
    try:
        benchmark = benchmark_by_slug(slug, viewer=request.user)
    except Benchmark.DoesNotExist:
        raise Http404("No such benchmark.") from None
    if not selectors.takes_endpoints(benchmark):
        raise Http404(f"{benchmark.name} does not evaluate model endpoints.")
    return benchmark


def _request(request: Request, benchmark: Benchmark, pk: int) -> HostedRequest:
    """The request `pk` of this benchmark, if the viewer may read it (its page, or its queue
    row when it is published); 404 otherwise."""
    try:
        return selectors.readable_request(benchmark, pk, viewer=request.user)
    except HostedRequest.DoesNotExist:
        raise Http404("No such hosted evaluation.") from None


# --- views -------------------------------------------------------------------------------------


class HostedListView(APIView):
    @extend_schema(
        operation_id="hosted_list",
        summary="The benchmark's public request queue",
        description=(
            "Running requests, then the queued ones in their order (with their position), "
            "then the newest that ended: each with its status per category. No endpoint's "
            "address or key."
        ),
        responses={200: QueueRowSerializer(many=True), 404: OpenApiResponse(ErrorSerializer)},
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = _benchmark(request, slug)
        rows = selectors.queue_rows(benchmark, viewer=request.user)
        return Response(
            QueueRowSerializer([_row(request, benchmark, row) for row in rows], many=True).data
        )

    @extend_schema(
        operation_id="hosted_create",
        summary="Submit a model endpoint for hosted evaluation",
        description=(
            "The upload's fields without the file, and the endpoint (base URL, model, an "
            "optional API key). Checked before anything is stored (the same checks, quota and "
            "errors as the web form); a valid request is queued: Podium asks the endpoint "
            "every question and submits the answers as an upload. Poll the returned `url`."
        ),
        request=HostedSubmitSerializer,
        responses={
            201: HostedRequestSerializer,
            400: OpenApiResponse(ErrorSerializer, description="Invalid fields or endpoint"),
            401: OpenApiResponse(ErrorSerializer, description="No or invalid token"),
            404: OpenApiResponse(
                ErrorSerializer,
                description="No such benchmark, or one that does not evaluate model endpoints",
            ),
            429: OpenApiResponse(ErrorSerializer, description="Daily quota used up"),
        },
    )
    @sensitive_variables("serializer")
    def post(self, request: Request, slug: str) -> Response:
        benchmark = _benchmark(request, slug)
        serializer = HostedSubmitSerializer(data=request.data, context={"benchmark": benchmark})
        serializer.is_valid(raise_exception=True)
        hosted = services.submit_request(
            benchmark,
            owner=request.user,
            actor=request.user,
            details=serializer.details(),
            **serializer.endpoint(),
        )
        body = HostedRequestSerializer(_details(request, hosted)).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})


class HostedDetailView(APIView):
    @extend_schema(
        operation_id="hosted_retrieve",
        summary="One hosted evaluation request",
        description=(
            "Its owner and the maintainers get its progress, tokens, failure and endpoint "
            "(never the key); anyone else gets a published request's queue row."
        ),
        responses={
            # The owner's view or the queue row: anyOf, for the owner's has every field of
            # the row (oneOf would match both).
            200: OpenApiResponse(
                response={
                    "anyOf": [
                        {"$ref": "#/components/schemas/HostedRequest"},
                        {"$ref": "#/components/schemas/QueueRow"},
                    ]
                },
                description=(
                    "HostedRequest for its owner and the maintainers; QueueRow for anyone "
                    "else (a published request's row of the public queue)."
                ),
            ),
            404: OpenApiResponse(ErrorSerializer, description="No such request you may see"),
        },
    )
    def get(self, request: Request, slug: str, pk: int) -> Response:
        benchmark = _benchmark(request, slug)
        hosted = _request(request, benchmark, pk)
        if can_view_request(request.user, hosted):
            return Response(HostedRequestSerializer(_details(request, hosted)).data)
        row = selectors.request_page(hosted, viewer=request.user).row
        return Response(QueueRowSerializer(_row(request, benchmark, row)).data)


class HostedCancelView(APIView):
    @extend_schema(
        operation_id="hosted_cancel",
        summary="Cancel a queued or running request",
        description="Its owner or a maintainer; nothing is published.",
        request=None,
        responses={
            200: HostedRequestSerializer,
            403: OpenApiResponse(ErrorSerializer, description="Not yours to cancel"),
            404: OpenApiResponse(ErrorSerializer),
            409: OpenApiResponse(ErrorSerializer, description="The request has ended"),
        },
    )
    def post(self, request: Request, slug: str, pk: int) -> Response:
        benchmark = _benchmark(request, slug)
        hosted = _request(request, benchmark, pk)
        if not can_view_request(request.user, hosted):
            self.permission_denied(request, message="Only its owner or a maintainer may cancel it.")
        services.cancel_request(hosted, actor=request.user)
        hosted = _request(request, benchmark, pk)
        return Response(HostedRequestSerializer(_details(request, hosted)).data)


urlpatterns = [
    path("benchmarks/<slug:slug>/hosted/", HostedListView.as_view(), name="hosted-list"),
    path(
        "benchmarks/<slug:slug>/hosted/<int:pk>/",
        HostedDetailView.as_view(),
        name="hosted-detail",
    ),
    path(
        "benchmarks/<slug:slug>/hosted/<int:pk>/cancel/",
        HostedCancelView.as_view(),
        name="hosted-cancel",
    ),
]
