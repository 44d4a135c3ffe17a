"""The LLM judge's data: endpoints (configuration as data), jobs, their items, and the verdict
cache.

A `JudgeJob` judges the caption answers of one evaluation run. Its `JudgeItem`s are built once
when the job starts (spec 5: one per non-empty VS / RC prediction, one per IoU-matched DVC pair
and threshold) and each is persisted with its state, so a job resumes where a dead worker left
it. A `Verdict` is the cache: one row per (model, rubric version, prompt), so the same prompt is
never paid for twice, across submissions and reruns.
"""

from __future__ import annotations

import os
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models

from benchmark.models import Benchmark
from inference.client import EndpointConfig
from inference.models import Endpoint, Item, Job
from submissions.models import Evaluation

from .enums import ItemState, JobStatus


def allowed_key_envs() -> list[str]:
    """The environment variables a judge endpoint may read its key from, minus the server's
    own secrets, whatever the setting says."""
    never = getattr(settings, "PODIUM_NEVER_A_JUDGE_KEY_ENV", frozenset())
    return [
        name
        for name in getattr(settings, "PODIUM_JUDGE_KEY_ENV_ALLOWLIST", ["OPENAI_API_KEY"])
        if name not in never
    ]


def key_env_allowed(name: str) -> bool:
    return name in allowed_key_envs()


class JudgeEndpoint(Endpoint):
    """An OpenAI-compatible chat endpoint that judges a benchmark's captions: OpenAI itself,
    Gemini's OpenAI-compatible endpoint, a local vLLM or Ollama server. The API key is never
    stored: `api_key_env` names the environment variable that holds it (blank for a local
    server that wants none), and only a variable on `PODIUM_JUDGE_KEY_ENV_ALLOWLIST` is ever
    named (`clean`) or read (`api_key`): no endpoint can send SECRET_KEY, DATABASE_URL or any
    other server secret to its base URL. Judge endpoints are superusers' configuration
    (docs/judge.md). One endpoint per benchmark is active. The engine's endpoint
    (`inference.models.Endpoint`) with the judge's defaults: 10 requests in flight, 30 s."""

    endpoint_name = "judge endpoint"

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="judge_endpoints"
    )
    name = models.CharField(max_length=100)
    # The judge's own take on the engine's fields: a provider's URL as the example, a provider's
    # short model name, more requests in flight and a shorter timeout than a model's.
    base_url = models.CharField(
        max_length=300,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1",
    )
    model = models.CharField(max_length=100, help_text="e.g. gpt-4.1")
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        default="OPENAI_API_KEY",
        help_text="The environment variable holding the API key; blank if none is needed.",
    )
    temperature = models.FloatField(
        default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)]
    )
    concurrency = models.PositiveSmallIntegerField(
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(256)],
        help_text="Requests in flight at once.",
    )
    timeout_seconds = models.FloatField(
        default=30.0, validators=[MinValueValidator(0.1), MaxValueValidator(600.0)]
    )
    input_price_per_million = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="USD per million prompt tokens, for the cost estimate (blank: unknown).",
    )
    output_price_per_million = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="USD per million completion tokens.",
    )
    notes = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark", "-is_active", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark"],
                condition=models.Q(is_active=True),
                name="judgeendpoint_one_active_per_benchmark",
            ),
            models.UniqueConstraint(fields=["benchmark", "name"], name="judgeendpoint_name_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    def clean(self) -> None:
        if self.api_key_env and not key_env_allowed(self.api_key_env):
            allowed = ", ".join(allowed_key_envs()) or "none"
            raise ValidationError(
                {
                    "api_key_env": f"{self.api_key_env} is not a variable a judge key may be read "
                    f"from. Allowed (PODIUM_JUDGE_KEY_ENV_ALLOWLIST): {allowed}; or leave it "
                    "blank for a server that needs no key."
                }
            )

    @property
    def key_env_allowed(self) -> bool:
        return not self.api_key_env or key_env_allowed(self.api_key_env)

    @property
    def api_key(self) -> str:
        # Checked again at use: a row written around `clean` (a shell, raw SQL, an allow-list
        # shortened since) still never reads a variable that is not allowed.
        if not self.api_key_env or not key_env_allowed(self.api_key_env):
            return ""
        return os.environ.get(self.api_key_env, "")

    @property
    def missing_key(self) -> bool:
        return bool(self.api_key_env) and not self.api_key

    def allows_private_addresses(self) -> bool:
        # A judge is configured by a superuser (its own allow-list: the key variables it may
        # read), often on the deployment's own network (a local model server).
        return True

    def config(self) -> EndpointConfig:
        return self.endpoint_config(api_key=self.api_key, temperature=self.temperature)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """Estimated USD for that many tokens, or None without prices."""
        if self.input_price_per_million is None or self.output_price_per_million is None:
            return None
        million = Decimal(1_000_000)
        return (
            self.input_price_per_million * prompt_tokens
            + self.output_price_per_million * completion_tokens
        ) / million


class Verdict(models.Model):
    """One judged prompt: the cache entry every item with the same prompt reuses."""

    model = models.CharField(max_length=100)
    rubric_version = models.CharField(max_length=32)
    prompt_sha256 = models.CharField(max_length=64)
    scores = models.JSONField()
    answer = models.TextField()
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    endpoint = models.ForeignKey(
        JudgeEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["model", "rubric_version", "prompt_sha256"], name="verdict_cache_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.model} {self.prompt_sha256[:12]}: {self.scores}"


class JudgeJob(Job):
    """The judge step of one evaluation run, an engine job (`inference.models.Job`). `status`
    is written only by `judging.services.set_job_status`. The counters are progress for the
    status page; the items are the truth they are recomputed from."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="judge_jobs")
    endpoint = models.ForeignKey(JudgeEndpoint, on_delete=models.PROTECT, related_name="jobs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Snapshots: the verdicts must be read with the rubric the prompts were built from.
    model = models.CharField(max_length=100)
    rubric_version = models.CharField(max_length=32)
    rubric_template = models.TextField()
    rubric_settings = models.JSONField(default=dict)

    items_cached = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    outcome = models.JSONField(default=dict, blank=True)
    # The endpoint's outage, written by the runner at each heartbeat (None: reachable): since
    # when every call failed transiently, when the next probe goes, the last transient error.
    unreachable_since = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    last_transient_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=JobStatus.values), name="judgejob_status_valid"
            ),
        ]
        permissions = [("rerun_judgejob", "Can rerun the LLM judge on any submission")]

    def __str__(self) -> str:
        return f"Judge job {self.pk} of evaluation {self.evaluation_id}: {self.status}"


class JudgeItem(Item):
    """One prompt of a job (an engine item, `inference.models.Item`); `key` is
    `plugins.medvidbench.scoring.judge.JudgeItem.key`."""

    job = models.ForeignKey(JudgeJob, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=100)
    metric = models.CharField(max_length=50)
    dataset = models.CharField(max_length=100)
    sample_index = models.PositiveIntegerField()
    threshold = models.FloatField(null=True, blank=True)
    prompt = models.TextField()
    prompt_sha256 = models.CharField(max_length=64)
    # The judge's words for the engine's item states.
    state = models.CharField(max_length=10, choices=ItemState, default=ItemState.PENDING)
    from_cache = models.BooleanField(default=False)
    verdict = models.ForeignKey(
        Verdict, null=True, blank=True, on_delete=models.PROTECT, related_name="items"
    )

    class Meta:
        ordering = ["job", "id"]
        indexes = [models.Index(fields=["job", "state"])]
        constraints = [
            models.UniqueConstraint(fields=["job", "key"], name="judgeitem_key_unique"),
            models.CheckConstraint(
                condition=models.Q(state__in=ItemState.values), name="judgeitem_state_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(state=ItemState.DONE) | models.Q(verdict__isnull=False),
                name="judgeitem_done_has_verdict",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.state}"


class VerdictClaim(models.Model):
    """A verdict cache key (model, rubric version, prompt) a job is judging right now, so that a
    concurrent job waits for the verdict instead of paying for the same prompt. Created just
    before the call (insert-or-skip on the unique key), deleted when the verdict is written or
    the job's time slice ends; a claim whose job stopped beating (`JudgeJob.heartbeat_at`) has
    expired and may be taken over."""

    model = models.CharField(max_length=100)
    rubric_version = models.CharField(max_length=32)
    prompt_sha256 = models.CharField(max_length=64)
    job = models.ForeignKey(JudgeJob, on_delete=models.CASCADE, related_name="claims")
    claimed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["model", "rubric_version", "prompt_sha256"], name="verdictclaim_cache_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.prompt_sha256[:12]} claimed by judge job {self.job_id}"
