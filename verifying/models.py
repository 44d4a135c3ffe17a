"""Re-running a model to verify its entry: the model's endpoint, the re-run jobs and their
items.

The entry's owner, a maintainer or a superuser registers the endpoint of its model
(`ModelEndpoint`, its API key encrypted); a `RerunJob` sends every test question with its
frames to it, and its `RerunItem`s (one per test sample, built when the job starts) are
persisted with their answers, so a job resumes where a dead worker left it. When every item is answered the job writes the predictions file,
scores it and keeps the discrepancy report beside the entry's self-reported values.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from benchmark.models import TestSet
from inference.answering import ENDPOINT_NAME as MODEL_ENDPOINT
from inference.models import EndpointKeyError, Item, Job, KeyedEndpoint
from submissions.models import Submission

from .enums import ItemState, RerunStatus


class ModelEndpoint(KeyedEndpoint):
    """The OpenAI-compatible chat endpoint of the model behind an entry (vLLM, a provider's
    API, the authors' own server). One endpoint per submission is active; the re-run uses it.

    Its API key is a credential the model's owner gives us (docs/verification.md): the engine's
    keyed endpoint (`inference.models.KeyedEndpoint`: stored Fernet-encrypted, never shown
    again, bound to the origin of the base URL it was entered for, `config()` refusing to hand
    it to any other), entered by the entry's owner or a superuser. The key fields are written
    only by `verifying.endpoints` (`register_endpoint`, `change_endpoint`, through
    `inference.keys`); no form or serializer includes them. `api_key_needed` without a key
    means one must be entered before a re-run (an endpoint whose address moved to another host,
    or one migrated from the old environment-variable reference)."""

    endpoint_name = MODEL_ENDPOINT
    key_holder = "the entry's owner or a superuser"

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="model_endpoints"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["submission", "-is_active", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission"],
                condition=models.Q(is_active=True),
                name="modelendpoint_one_active_per_submission",
            ),
        ]


# Found here too: a model endpoint's key error is the engine's.
__all__ = ["EndpointKeyError", "ModelEndpoint", "RerunItem", "RerunJob"]


class RerunJob(Job):
    """One re-run of an entry's model on a test set, an engine job (`inference.models.Job`).
    `status` is written only by
    `verifying.services.set_rerun_status`. The counters are progress for the admin; the items
    are the truth they are recomputed from. `metrics`, `result` and `report` are filled when the
    job is done; `predictions_file` is the re-run's answers' key in the private store
    (`core.private_files`: reruns/<slug>/rerun-<id>-<random>.json)."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="reruns")
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="jobs")
    test_set = models.ForeignKey(TestSet, on_delete=models.PROTECT, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    max_frames = models.PositiveSmallIntegerField(
        help_text="The benchmark's rerun_max_frames when the job started."
    )

    metrics = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    predictions_file = models.CharField(max_length=255, blank=True)

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


class RerunItem(Item):
    """One test question of a job (an engine item, `inference.models.Item`). An item that
    failed every attempt keeps "" as its answer (the predictions file has a row for every
    sample; the report counts them)."""

    job = models.ForeignKey(RerunJob, on_delete=models.CASCADE, related_name="items")
    sample_index = models.PositiveIntegerField()
    # The re-run's words for the engine's item states.
    state = models.CharField(max_length=10, choices=ItemState, default=ItemState.PENDING)
    answer = models.TextField(blank=True)

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
