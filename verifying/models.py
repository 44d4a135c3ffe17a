"""Re-running a model to verify its entry: the model's endpoint, the re-run jobs and their
items.

The entry's owner, a maintainer or a superuser registers the endpoint of its model
(`ModelEndpoint`, its API key encrypted); a `RerunJob` sends every test question with its
frames to it, and its `RerunItem`s (one per test sample, built when the job starts) are
persisted with their answers, so a job resumes where a dead worker left it. When every item is answered the job writes the predictions file,
scores it and keeps the discrepancy report beside the entry's self-reported values.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
from django.views.decorators.debug import sensitive_variables

from benchmark.models import TestSet
from core import encryption
from inference.client import EndpointConfig, EndpointError
from submissions.models import Submission

from .enums import ItemState, RerunStatus


def url_origin(url: str) -> str:
    """ "scheme://host:port" of a URL, lower-cased, the port explicit (80/443 when omitted): what
    a model endpoint's API key is bound to. "" for a URL without a host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return ""
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not host:
        return ""
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}:{port}"


class EndpointKeyError(EndpointError):
    """The endpoint's API key cannot be used: its address no longer matches the host the key
    was entered for, or no configured encryption key opens it. Nothing is sent
    (`ModelEndpoint.config`); the key has to be entered again."""


class ModelEndpoint(models.Model):
    """The OpenAI-compatible chat endpoint of the model behind an entry (vLLM, a provider's
    API, the authors' own server). One endpoint per submission is active; the re-run uses it.

    Its API key is a credential the model's owner gives us (docs/verification.md): entered by
    the entry's owner or a superuser, stored Fernet-encrypted (`core.encryption`), never shown
    again, and bound to the origin (scheme, host, port) of the base URL it was entered for:
    `config()` refuses to hand it to any other. The key fields are written only by
    `verifying.endpoints` (`register_endpoint`, `change_endpoint`); no form or serializer
    includes them. `api_key_needed` without a key means one must be entered before a re-run
    (an endpoint whose address moved to another host, or one migrated from the old
    environment-variable reference)."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="model_endpoints"
    )
    base_url = models.CharField(
        max_length=300,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="e.g. https://models.example.org/v1 or http://127.0.0.1:8000/v1",
    )
    model = models.CharField(max_length=200, help_text="The model name the endpoint expects.")
    api_key_encrypted = models.TextField(
        blank=True, editable=False, help_text="The API key as a Fernet token; never the key."
    )
    api_key_origin = models.CharField(
        max_length=300,
        blank=True,
        editable=False,
        help_text="scheme://host:port the key was entered for; it is sent nowhere else.",
    )
    api_key_set_at = models.DateTimeField(null=True, blank=True, editable=False)
    api_key_needed = models.BooleanField(
        default=False,
        editable=False,
        help_text="The endpoint wants an API key (set when one is entered).",
    )
    concurrency = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(256)],
        help_text="Requests in flight at once.",
    )
    max_attempts = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    timeout_seconds = models.FloatField(
        default=120.0, validators=[MinValueValidator(0.1), MaxValueValidator(1800.0)]
    )
    is_active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["submission", "-is_active", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission"],
                condition=models.Q(is_active=True),
                name="modelendpoint_one_active_per_submission",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model} at {self.base_url}"

    def clean(self) -> None:
        # A key belongs in the key field, where it is encrypted; a URL is shown and logged.
        parts = urlsplit(self.base_url.strip())
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValidationError(
                {
                    "base_url": "Give the base URL without a user name, password, query or "
                    "fragment; an API key goes in the key field, where it is stored encrypted."
                }
            )

    @property
    def origin(self) -> str:
        return url_origin(self.base_url)

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)

    @property
    def missing_key(self) -> bool:
        """It wants a key and has none (enter one before a re-run)."""
        return self.api_key_needed and not self.has_api_key

    @property
    def key_status(self) -> str:
        """What anyone may see about the key: never the key, nor a part of it."""
        if self.has_api_key:
            assert self.api_key_set_at is not None
            return f"set on {self.api_key_set_at:%Y-%m-%d %H:%M} UTC"
        return "needed, not entered" if self.api_key_needed else "not set"

    @sensitive_variables("api_key")  # error reports never show the decrypted key
    def config(self) -> EndpointConfig:
        """What the client needs to call the endpoint, the key decrypted. Refuses
        (`EndpointKeyError`) when the base URL's origin is not the one the key was
        entered for, so however the row was changed the key reaches only its own host."""
        api_key = ""
        if self.has_api_key:
            if not self.api_key_origin or self.origin != self.api_key_origin:
                raise EndpointKeyError(
                    f"the model endpoint's API key was entered for {self.api_key_origin or 'another address'} "
                    f"and is never sent to {self.origin or self.base_url}; the entry's owner or a "
                    "superuser has to enter the key again for the new address"
                )
            try:
                api_key = encryption.decrypt(self.api_key_encrypted)
            except encryption.DecryptionError as error:
                raise EndpointKeyError(f"the model endpoint's API key: {error}") from None
        # temperature 0: the re-run should be as reproducible as the model allows.
        return EndpointConfig(
            base_url=self.base_url,
            model=self.model,
            api_key=api_key,
            temperature=0.0,
            timeout_seconds=self.timeout_seconds,
            concurrency=self.concurrency,
            max_attempts=self.max_attempts,
        )


class RerunJob(models.Model):
    """One re-run of an entry's model on a test set. `status` is written only by
    `verifying.services.set_rerun_status`. The counters are progress for the admin; the items
    are the truth they are recomputed from. `metrics`, `result` and `report` are filled when the
    job is done; `predictions_file` is relative to PODIUM_PRIVATE_DIR."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="reruns")
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="jobs")
    test_set = models.ForeignKey(TestSet, on_delete=models.PROTECT, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    max_frames = models.PositiveSmallIntegerField(
        help_text="The benchmark's rerun_max_frames when the job started."
    )

    status = models.CharField(max_length=10, choices=RerunStatus, default=RerunStatus.QUEUED)
    message = models.TextField(blank=True)
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    items_failed = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)

    metrics = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    predictions_file = models.CharField(max_length=255, blank=True)

    runs = models.PositiveSmallIntegerField(default=0, help_text="Times a worker picked it up.")
    interruptions = models.PositiveSmallIntegerField(
        default=0, help_text="Times its worker died while running it (it fails at the limit)."
    )
    worker = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=RerunStatus.values), name="rerunjob_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"Re-run {self.pk} of {self.submission}: {self.status}"

    @property
    def state(self) -> RerunStatus:
        return RerunStatus(self.status)

    @property
    def items_finished(self) -> int:
        return self.items_done + self.items_failed

    @property
    def percent(self) -> int:
        if not self.items_total:
            return 100 if self.state == RerunStatus.DONE else 0
        return int(100 * self.items_finished / self.items_total)

    @property
    def predictions_path(self) -> Path | None:
        if not self.predictions_file:
            return None
        return Path(settings.PODIUM_PRIVATE_DIR) / self.predictions_file


class RerunItem(models.Model):
    """One test question of a job. An item that failed every attempt keeps "" as its answer
    (the predictions file has a row for every sample; the report counts them)."""

    job = models.ForeignKey(RerunJob, on_delete=models.CASCADE, related_name="items")
    sample_index = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=ItemState, default=ItemState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    calls = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    answer = models.TextField(blank=True)
    last_error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["job", "sample_index"]
        indexes = [models.Index(fields=["job", "state"])]
        constraints = [
            models.UniqueConstraint(fields=["job", "sample_index"], name="rerunitem_sample_unique"),
            models.CheckConstraint(
                condition=models.Q(state__in=ItemState.values), name="rerunitem_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"sample {self.sample_index}: {self.state}"
