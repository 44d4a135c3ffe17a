"""Hosted evaluation (docs/hosted.md): a submitter gives Podium an OpenAI-compatible model
endpoint instead of a predictions file; Podium asks it every test question, stores the
answers, writes the predictions file and submits it exactly as an upload.

`HostedEndpoint` is the engine's keyed endpoint (its API key Fernet-encrypted, bound to the
origin of its base URL, never shown again). `HostedRequest` is the engine's job: the public
queue's row, with what the upload form would have said (the model's name, team, links, the
benchmark's options and model facts, publish or not), the token cap and pace it runs under,
and the entry it became. `HostedItem` is one test question with its answer, persisted as it
arrives, so a request resumes where a dead worker left it and an answered question is never
asked again.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.urls import reverse

from benchmark.models import Benchmark, TestSet
from inference.answering import ENDPOINT_NAME as MODEL_ENDPOINT
from inference.models import Item, Job, KeyedEndpoint
from submissions.models import Submission

from .enums import REQUEST_STATES, Failure, ItemState, RequestStatus


class HostedEndpoint(KeyedEndpoint):
    """The submitter's OpenAI-compatible chat endpoint for one request (vLLM, a provider's API,
    their own server). Its key fields are written only by `inference.keys` (through
    `hosting.services.submit_request`); no form or serializer reads them back. The prices are
    the submitter's own, optional, for the cost estimate their request page shows."""

    endpoint_name = MODEL_ENDPOINT
    key_holder = "the request's owner (submitting the request again)"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hosted_endpoints"
    )
    input_price_per_million = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="USD per million prompt tokens, for the cost estimate (blank: unknown).",
    )
    output_price_per_million = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="USD per million completion tokens, for the cost estimate (blank: unknown).",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """Estimated USD for that many tokens at the submitter's prices, None without them."""
        if self.input_price_per_million is None or self.output_price_per_million is None:
            return None
        total = (
            self.input_price_per_million * prompt_tokens
            + self.output_price_per_million * completion_tokens
        ) / Decimal(1_000_000)
        return total.quantize(Decimal("0.0001"))


class HostedRequest(Job):
    """One hosted evaluation of a model on a benchmark's test set, an engine job
    (`inference.models.Job`). `status` and `failure` are written only by
    `hosting.services.set_request_status`; `submission` by `hosting.runner.finish_request`.
    The counters are progress for the queue; the items are the truth they are recomputed from.
    `requested_by` is the person who asked (None for the demo or a command): only their
    requests count against the daily quota."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="+")
    test_set = models.ForeignKey(TestSet, on_delete=models.PROTECT, related_name="+")
    endpoint = models.OneToOneField(
        HostedEndpoint, on_delete=models.PROTECT, related_name="request"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hosted_requests"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    # What the upload form says, as `submissions.services.SubmissionDetails` takes it.
    model_name = models.CharField(max_length=100)
    institution = models.CharField(max_length=200, blank=True)
    contact_email = models.EmailField(blank=True)
    model_url = models.URLField(blank=True)
    paper_url = models.URLField(blank=True)
    code_url = models.URLField(blank=True)
    is_challenge_entry = models.BooleanField(default=False)
    team_name = models.CharField(max_length=200, blank=True)
    authors = models.CharField(max_length=500, blank=True)
    publish = models.BooleanField(default=True)
    options = models.JSONField(default=dict, blank=True)
    model_facts = models.JSONField(default=dict, blank=True)

    # The benchmark's caps when the request was submitted, and what a question may send.
    max_tokens = models.PositiveBigIntegerField(
        help_text="Prompt and completion tokens this request may spend."
    )
    requests_per_minute = models.PositiveIntegerField(
        help_text="Calls this request may make a minute."
    )
    max_frames = models.PositiveSmallIntegerField(
        help_text="The benchmark's rerun_max_frames when the request was submitted."
    )

    failure = models.CharField(max_length=20, choices=Failure, blank=True)
    # The endpoint's outage as the previous time slice left it (`inference.client.Outage`).
    unreachable_since = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    last_transient_error = models.TextField(blank=True)

    submission = models.OneToOneField(
        Submission,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="hosted_request",
    )

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"]),
            models.Index(fields=["benchmark", "status", "created_at"]),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=[state.value for state in REQUEST_STATES]),
                name="hostedrequest_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(failure="") | models.Q(failure__in=Failure.values),
                name="hostedrequest_failure_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(failure="") | models.Q(status=RequestStatus.FAILED),
                name="hostedrequest_failure_only_when_failed",
            ),
        ]

    def __str__(self) -> str:
        return f"Hosted request {self.pk} ({self.model_name}): {self.status}"

    def get_absolute_url(self) -> str:
        return reverse("hosting:request", args=[self.pk])

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> Decimal | None:
        return self.endpoint.cost(self.prompt_tokens, self.completion_tokens)


class HostedItem(Item):
    """One test question of a request (an engine item, `inference.models.Item`): its place in
    the test set, the board category it belongs to ("" on a benchmark without categories) and
    the model's answer. A question whose every attempt was unusable keeps "" as its answer."""

    request = models.ForeignKey(HostedRequest, on_delete=models.CASCADE, related_name="items")
    sample_index = models.PositiveIntegerField()
    category = models.CharField(max_length=50, blank=True)
    state = models.CharField(max_length=10, choices=ItemState, default=ItemState.PENDING)
    answer = models.TextField(blank=True)

    class Meta:
        ordering = ["request", "sample_index"]
        indexes = [models.Index(fields=["request", "state"])]
        constraints = [
            models.UniqueConstraint(
                fields=["request", "sample_index"], name="hosteditem_sample_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=ItemState.values), name="hosteditem_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"question {self.sample_index}: {self.state}"
