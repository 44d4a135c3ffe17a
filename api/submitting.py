"""Submitting by API token: upload a predictions file, read a submission's status and results,
start the judge step, list one's own submissions. The same services and checks as the web form:
the same validation, quota and errors, the errors as JSON with the offending rows.

A submission is visible to its owner and to those who may see every entry (maintainers and
superusers, `accounts.roles.can_view_all_entries`); anyone else, staff included, gets 404, as on
the site.
Nothing here serialises a reference answer or a per-sample score: results are the run's
aggregates (metrics, per-dataset values, counts) and the format report, whose examples are the
submitter's own unparsed answers.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import path, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.facts import FACTS, FactsError, check_model_facts
from benchmark.models import Benchmark
from benchmark.plugins import plugin_for
from benchmark.selectors import benchmark_by_slug
from core.exceptions import InvalidName
from judging import selectors as judge_selectors
from judging import services as judge_services
from judging.models import JudgeJob
from submissions import names, selectors, services
from submissions.models import Evaluation, Submission
from submissions.services import SubmissionDetails
from submissions.verification import verification_summary

# --- serializers -------------------------------------------------------------------------------


class ProblemSerializer(serializers.Serializer):
    row = serializers.IntegerField(allow_null=True, help_text="0-based position in the file")
    field = serializers.CharField(help_text='The key at fault ("" for the row itself)')
    message = serializers.CharField()


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField()
    problems = ProblemSerializer(many=True, required=False)
    total = serializers.IntegerField(required=False)
    errors = serializers.DictField(required=False)


class NameField(serializers.CharField):
    """A display name (`submissions.names`), as the web form's `NameField`: normalised as the
    writer stores it and refused with the same messages; the limit counted once normalised."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.field_name_checked = name
        kwargs.setdefault(
            "help_text",
            f"At most {names.max_length(name)} characters once normalised (NFKC); no "
            "invisible, control or bidi characters (docs/names.md).",
        )
        # Its validator runs after `to_internal_value`, on a value already within it: it is
        # here for the schema's maxLength.
        super().__init__(max_length=names.max_length(name), **kwargs)

    def to_internal_value(self, data: Any) -> str:
        text = super().to_internal_value(data)
        try:
            return names.clean_name(self.field_name_checked, text)
        except InvalidName as error:
            raise serializers.ValidationError(str(error), code="invalid_name") from None


class SubmitSerializer(serializers.Serializer):
    """The web form's fields; `publish=false` is "evaluate only, don't publish"."""

    predictions = serializers.FileField(
        help_text="JSON: one {id, qa_type, prediction} object per test sample, in test-set order."
    )
    model_name = NameField("model_name")
    institution = NameField("institution")
    # The columns' lengths (Submission): a longer value would fail in the database.
    contact_email = serializers.EmailField(max_length=254, help_text="Never shown publicly.")
    model_url = serializers.URLField(max_length=200)
    paper_url = serializers.URLField(max_length=200, required=False, allow_blank=True, default="")
    code_url = serializers.URLField(max_length=200, required=False, allow_blank=True, default="")
    is_challenge_entry = serializers.BooleanField(required=False, default=False)
    team_name = NameField("team_name", required=False, allow_blank=True, default="")
    authors = NameField(
        "authors",
        required=False,
        allow_blank=True,
        default="",
        help_text="One line, separated by commas; at most 500 characters once normalised.",
    )
    publish = serializers.BooleanField(required=False, default=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The benchmark plugin's options, as on the web form (docs/api.md): MedSG-Bench's
        # box_format (one of its conventions) and zero_shot (true: the declaration).
        benchmark = self.context.get("benchmark")
        self.plugin_options = plugin_for(benchmark).submission_options if benchmark else ()
        # The model facts the benchmark asks for (issue 15), by their keys. Checked together
        # in `validate` by `benchmark.facts`, so a missing or refused one says what it takes.
        self.fact_keys = benchmark.fact_keys if benchmark else []
        for key in self.fact_keys:
            definition = FACTS[key]
            self.fields[key] = serializers.CharField(
                required=False,
                allow_blank=True,
                help_text=f"{definition.label} ({'required' if definition.required else 'optional'}"
                f"): {definition.allowed}. {definition.help_text}",
            )
        for option in self.plugin_options:
            if option.kind == "declaration":
                self.fields[option.key] = serializers.BooleanField(
                    required=option.required, help_text=option.statement
                )
            else:
                self.fields[option.key] = serializers.ChoiceField(
                    choices=list(option.values),
                    required=option.required,
                    help_text=option.help_text,
                )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if self.fact_keys:
            given = {key: data[key] for key in self.fact_keys if key in data}
            try:
                data["model_facts"] = check_model_facts(self.fact_keys, given)
            except FactsError as error:
                raise serializers.ValidationError(
                    {key: [message] for key, message in error.problems.items()}
                ) from None
        for option in self.plugin_options:
            if option.kind == "declaration" and option.required and not data.get(option.key):
                raise serializers.ValidationError(
                    {option.key: [f"Declare it to submit here: {option.statement}"]}
                )
        if data["is_challenge_entry"]:
            missing = {
                name: "A challenge entry needs its team name and authors."
                for name in ("team_name", "authors")
                if not data[name]
            }
            if missing:
                raise serializers.ValidationError(missing)
        if data["publish"]:  # the benchmark is the view's (context), as the form's
            try:
                names.refuse_published_lookalike(self.context["benchmark"], data["model_name"])
            except InvalidName as error:
                raise serializers.ValidationError({"model_name": [str(error)]}) from None
        return data

    def details(self) -> SubmissionDetails:
        data = self.validated_data
        challenge = data["is_challenge_entry"]
        return SubmissionDetails(
            model_name=data["model_name"],
            institution=data["institution"],
            contact_email=data["contact_email"],
            model_url=data["model_url"],
            paper_url=data["paper_url"],
            code_url=data["code_url"],
            is_challenge_entry=challenge,
            team_name=data["team_name"] if challenge else "",
            authors=data["authors"] if challenge else "",
            publish=data["publish"],
            options=self.options(),
            model_facts=data.get("model_facts", {}),
        )

    def options(self) -> dict[str, str]:
        data = self.validated_data
        chosen = {}
        for option in self.plugin_options:
            value = data.get(option.key)
            if option.kind == "declaration":
                value = option.values[0] if value else ""
            if value:
                chosen[option.key] = value
        return chosen


class JudgeSerializer(serializers.Serializer):
    """The judge step of the newest run."""

    state = serializers.CharField(
        help_text="not_applicable (the benchmark has no judge step, or the run failed), "
        "waiting (the judge metrics are pending and you cannot start the judge now: the run is "
        "not scored yet, or someone else starts it), unavailable, starting, can_start, running, "
        "held, failed or done (docs/api.md)"
    )
    message = serializers.CharField(allow_blank=True)
    job_status = serializers.CharField(allow_null=True)
    items_total = serializers.IntegerField()
    items_done = serializers.IntegerField()
    items_failed = serializers.IntegerField()
    calls = serializers.IntegerField()
    tokens = serializers.IntegerField()
    estimated_cost_usd = serializers.DecimalField(max_digits=12, decimal_places=4, allow_null=True)


class VerificationSerializer(serializers.Serializer):
    """Where the entry stands on its way to the Official board, as the entry page says it."""

    status = serializers.CharField(
        help_text="community, nominated, contacted, access_granted, verifying, verified, "
        "rejected, withdrawn; evaluate_only for an entry that is never published"
    )
    label = serializers.CharField()
    explanation = serializers.CharField()
    reason = serializers.CharField(
        allow_blank=True, help_text="Why it was rejected or withdrawn (else blank)"
    )
    changed_at = serializers.DateTimeField(allow_null=True)


class EvaluationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    status_label = serializers.CharField()
    error_code = serializers.CharField(allow_blank=True)
    error_message = serializers.CharField(allow_blank=True)
    scorer_version = serializers.CharField(allow_blank=True)
    test_set_version = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    scored_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    metrics = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="The benchmark's metrics at full precision; null while pending.",
    )
    per_dataset = serializers.DictField(child=serializers.DictField(child=serializers.FloatField()))
    counts = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()))
    parsed = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="Per task: how many of your answers parsed.",
    )
    unparsed_examples = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="A few of your own answers that did not parse, per task.",
    )


class DeclaredOptionSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    value = serializers.CharField()
    text = serializers.CharField()


class SubmissionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField(help_text="This resource")
    page_url = serializers.CharField(help_text="The status page on the site")
    benchmark = serializers.CharField(help_text="The benchmark's slug")
    model_name = serializers.CharField()
    institution = serializers.CharField(allow_blank=True)
    model_url = serializers.CharField(allow_blank=True)
    paper_url = serializers.CharField(allow_blank=True)
    code_url = serializers.CharField(allow_blank=True)
    is_challenge_entry = serializers.BooleanField()
    team_name = serializers.CharField(allow_blank=True)
    authors = serializers.CharField(allow_blank=True)
    publish = serializers.BooleanField()
    source = serializers.CharField(
        help_text="upload, imported, or hosted: evaluated by Podium (it asked the model's "
        "endpoint every question itself, docs/hosted.md)"
    )
    source_label = serializers.CharField(help_text='"Evaluated by Podium" for a hosted entry')
    verified = serializers.BooleanField(read_only=True)
    verified_at = serializers.DateTimeField(allow_null=True, read_only=True)
    verification = VerificationSerializer(read_only=True)
    created_at = serializers.DateTimeField()
    evaluation = EvaluationSerializer(allow_null=True)
    judge = JudgeSerializer(allow_null=True)
    options = serializers.DictField(
        child=serializers.CharField(),
        help_text="What the submission declared beside its file, by the benchmark's option "
        "keys (MedSG-Bench: `box_format`, `zero_shot`); {} where the benchmark asks for none.",
    )
    model_facts = serializers.DictField(
        help_text="What the submitter said about the model, by fact key (type, parameters in "
        "billions, licence, precision, domain_specific), where the benchmark asks; {} else.",
    )
    declared = DeclaredOptionSerializer(
        many=True,
        help_text="The same declarations in words, in the benchmark's order: each option's "
        "label, the stored value and the chosen choice's label (a declaration's statement).",
    )
    duplicate_of = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Your earlier entries on this benchmark with a byte-identical file (it "
        "scores the same); a copy of another account's published file is refused (409, "
        "`duplicate_predictions`).",
    )


class SubmissionSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    benchmark = serializers.CharField()
    model_name = serializers.CharField()
    publish = serializers.BooleanField()
    verified = serializers.BooleanField()
    status = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


# --- representations ---------------------------------------------------------------------------


def _evaluation(evaluation: Evaluation | None) -> dict[str, Any] | None:
    if evaluation is None:
        return None
    result = evaluation.result or {}
    # The benchmark's columns in order, then anything else the run stored.
    metric_keys = list(evaluation.submission.benchmark.metrics.values_list("key", flat=True))
    metric_keys += [key for key in evaluation.metrics if key not in metric_keys]
    return {
        "id": evaluation.pk,
        "status": evaluation.status,
        "status_label": evaluation.get_status_display(),
        "error_code": evaluation.error_code,
        "error_message": evaluation.error_message,
        "scorer_version": evaluation.scorer_version,
        "test_set_version": evaluation.test_set.version if evaluation.test_set else None,
        "created_at": evaluation.created_at,
        "scored_at": evaluation.scored_at,
        "completed_at": evaluation.completed_at,
        "metrics": {key: evaluation.metrics.get(key) for key in metric_keys},
        "per_dataset": result.get("per_dataset", {}),
        "counts": result.get("counts", {}),
        "parsed": result.get("parsed", {}),
        "unparsed_examples": result.get("unparsed_examples", {}),
    }


def _judge(evaluation: Evaluation | None, user: Any) -> dict[str, Any] | None:
    if evaluation is None:
        return None
    panel = judge_selectors.judge_panel(evaluation, user)
    if panel is None:
        return None
    job: JudgeJob | None = (
        evaluation.judge_jobs.select_related("endpoint").order_by("-created_at", "-id").first()
    )
    return {
        "state": panel.state,
        "message": panel.reason or panel.message,
        "job_status": job.status if job else None,
        "items_total": job.items_total if job else 0,
        "items_done": job.items_done if job else 0,
        "items_failed": job.items_failed if job else 0,
        "calls": job.calls if job else 0,
        "tokens": (job.prompt_tokens + job.completion_tokens) if job else 0,
        "estimated_cost_usd": job.cost if job else None,
    }


def _submission(request: Request, submission: Submission) -> dict[str, Any]:
    evaluation = selectors.latest_evaluation(submission)
    return {
        "id": submission.pk,
        "url": request.build_absolute_uri(reverse("api:submission-detail", args=[submission.pk])),
        "page_url": request.build_absolute_uri(submission.get_absolute_url()),
        "benchmark": submission.benchmark.slug,
        "model_name": submission.model_name,
        "institution": submission.institution,
        "model_url": submission.model_url,
        "paper_url": submission.paper_url,
        "code_url": submission.code_url,
        "is_challenge_entry": submission.is_challenge_entry,
        "team_name": submission.team_name,
        "authors": submission.authors,
        "publish": submission.publish,
        "source": submission.source,
        "source_label": submission.get_source_display(),
        "verified": submission.is_verified,
        "verified_at": submission.verified_at,
        "verification": _verification(submission),
        "created_at": submission.created_at,
        "evaluation": _evaluation(evaluation),
        "judge": _judge(evaluation, request.user),
        "options": dict(submission.options or {}),
        "model_facts": dict(submission.model_facts or {}),
        "declared": [
            {"key": line.key, "label": line.label, "value": line.value, "text": line.text}
            for line in selectors.declared_options(submission)
        ],
        "duplicate_of": [earlier.pk for earlier in selectors.own_duplicates(submission)],
    }


def _verification(submission: Submission) -> dict[str, Any]:
    summary = verification_summary(submission)
    return {
        "status": summary.status.value if submission.publish else "evaluate_only",
        "label": summary.label,
        "explanation": summary.explanation,
        "reason": summary.reason,
        "changed_at": summary.changed_at,
    }


def _own_submission(request: Request, pk: int) -> Submission:
    try:
        return selectors.submission_for_user(request.user, pk)
    except Submission.DoesNotExist:
        raise Http404("No such submission.") from None


def _benchmark(request: Request, slug: str) -> Benchmark:
    """The benchmark to submit to, found as the web form finds it (hidden ones for maintainers
    only, `benchmark_by_slug`)."""
    try:
        return benchmark_by_slug(slug, viewer=request.user)
    except Benchmark.DoesNotExist:
        raise Http404("No such benchmark.") from None


# --- views -------------------------------------------------------------------------------------


class SubmitView(APIView):
    permission_classes = [IsAuthenticated]
    # A file is sent as multipart only: a urlencoded body cannot carry it (415, not a 400 about
    # a missing file), and the schema offers no such body.
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="submissions_create",
        summary="Submit a predictions file",
        description=(
            "Multipart upload with the web form's fields. The file is checked against the test "
            "set before anything is stored (the same checks, quota and errors as the form); a "
            "valid one is queued for scoring. Poll the returned `url` for the status and results."
        ),
        request=SubmitSerializer,
        responses={
            201: SubmissionSerializer,
            400: OpenApiResponse(ErrorSerializer, description="Invalid fields or file"),
            401: OpenApiResponse(ErrorSerializer, description="No or invalid token"),
            404: OpenApiResponse(ErrorSerializer, description="No such benchmark"),
            429: OpenApiResponse(ErrorSerializer, description="Daily quota used up"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark = _benchmark(request, slug)
        serializer = SubmitSerializer(data=request.data, context={"benchmark": benchmark})
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["predictions"]
        services.check_upload_size(benchmark, upload.size or 0)
        upload.seek(0)
        predictions = upload.read()
        services.validate_predictions(benchmark, predictions, serializer.options())
        submission = services.create_submission(
            benchmark, owner=request.user, details=serializer.details(), predictions=predictions
        )
        body = _submission(request, submission)
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})


class SubmissionListView(generics.GenericAPIView):
    permission_classes = [IsAuthenticated]
    serializer_class = SubmissionSummarySerializer

    def get_queryset(self):
        return selectors.submissions_for_user(self.request.user)

    @extend_schema(
        operation_id="submissions_list",
        summary="Your own submissions, newest first",
        responses={200: SubmissionSummarySerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        rows = [
            {
                "id": submission.pk,
                "url": request.build_absolute_uri(
                    reverse("api:submission-detail", args=[submission.pk])
                ),
                "benchmark": submission.benchmark.slug,
                "model_name": submission.model_name,
                "publish": submission.publish,
                "verified": submission.is_verified,
                "status": submission.latest_status,
                "created_at": submission.created_at,
            }
            for submission in self.get_queryset()
        ]
        return Response(SubmissionSummarySerializer(rows, many=True).data)


class SubmissionDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="submissions_retrieve",
        summary="A submission's status and results",
        description=(
            "The newest run's state, its metrics at full precision (null while pending), "
            "per-dataset values, the format report and the judge step's progress. Yours only."
        ),
        responses={200: SubmissionSerializer, 404: OpenApiResponse(ErrorSerializer)},
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(
            SubmissionSerializer(_submission(request, _own_submission(request, pk))).data
        )


class JudgeStartView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="submissions_judge_start",
        summary="Start the LLM judge step on the newest run",
        request=None,
        responses={
            202: SubmissionSerializer,
            403: OpenApiResponse(ErrorSerializer, description="Not yours to start"),
            404: OpenApiResponse(ErrorSerializer),
            409: OpenApiResponse(ErrorSerializer, description="The run is not waiting for it"),
            503: OpenApiResponse(ErrorSerializer, description="No judge is configured"),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        submission = _own_submission(request, pk)
        if not judge_selectors.can_start_judge(request.user, submission):
            self.permission_denied(request, message="You cannot start the judge on this entry.")
        evaluation = selectors.latest_evaluation(submission)
        if evaluation is None:
            raise Http404("This submission has no run.")
        judge_services.start_judge(evaluation, actor=request.user)
        body = SubmissionSerializer(_submission(request, submission)).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("benchmarks/<slug:slug>/submissions/", SubmitView.as_view(), name="submit"),
    path("submissions/", SubmissionListView.as_view(), name="submission-list"),
    path("submissions/<int:pk>/", SubmissionDetailView.as_view(), name="submission-detail"),
    path("submissions/<int:pk>/judge/", JudgeStartView.as_view(), name="judge-start"),
]
