"""Submissions to a benchmark and their evaluation runs.

A `Submission` is what a researcher uploaded (or what maintainers imported from a published
board): the model's details and the predictions file. An `Evaluation` is one scoring run of it
against one test set version with one scorer version; a rerun is a new `Evaluation`. The board
reads the newest run that has scores.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Lower
from django.urls import reverse

from benchmark.models import Benchmark, TestSet

from .enums import (
    BoardKind,
    EvaluationStatus,
    FailureCode,
    SubmissionSource,
    VerificationStatus,
)


class Submission(models.Model):
    """One entry: a model's predictions on a benchmark's test set, with the official form fields.

    `publish=False` is the official "evaluate only, don't publish": the entry never appears on
    a board, and its would-be rank is shown to its owner only. Published model names are unique
    per benchmark (case-insensitive), as on the official board, and may not even look the same:
    `model_name_skeleton` is the name's `core.text.confusable_key` (Unicode TR39), unique among
    a benchmark's published entries. The writers (`services.create_submission`,
    `services.import_published_result`) normalise the names and set it (`submissions.names`).
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="submissions")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="submissions",
    )
    source = models.CharField(
        max_length=10, choices=SubmissionSource, default=SubmissionSource.UPLOAD
    )

    model_name = models.CharField(max_length=100)
    # What the name looks like (`core.text.confusable_key`), set with the name by its writers.
    model_name_skeleton = models.TextField(blank=True, editable=False)
    institution = models.CharField(max_length=200, blank=True)
    contact_email = models.EmailField(blank=True)
    model_url = models.URLField(blank=True)
    paper_url = models.URLField(blank=True)
    code_url = models.URLField(blank=True)
    is_challenge_entry = models.BooleanField(default=False)
    team_name = models.CharField(max_length=200, blank=True)
    authors = models.CharField(max_length=500, blank=True)
    # The choices the benchmark's plugin asks for beside the file (MedSG-Bench's box_format),
    # checked against its `submission_options` when the submission is created.
    options = models.JSONField(default=dict, blank=True)
    # What the submitter says about the model where the benchmark asks (issue 15:
    # `Benchmark.model_facts`, checked by `benchmark.facts.check_model_facts`): fact key ->
    # value. Set by `services.create_submission`, edited through `update_entry_details`.
    model_facts = models.JSONField(default=dict, blank=True)
    publish = models.BooleanField(
        default=True, help_text="Off: evaluate only, never shown on a board."
    )
    is_baseline = models.BooleanField(
        default=False, help_text="An off-the-shelf model evaluated by the maintainers (*)."
    )

    # The predictions file's key in the private store (never served; docs/storage.md):
    # predictions/<slug>/<uuid>.json. Read it with `selectors.predictions_bytes`.
    predictions_file = models.CharField(max_length=255, blank=True)
    predictions_sha256 = models.CharField(max_length=64, blank=True)
    predictions_size = models.PositiveIntegerField(default=0)

    verification_status = models.CharField(
        max_length=20, choices=VerificationStatus, default=VerificationStatus.COMMUNITY
    )
    # When the entry was (last) verified: by the maintainers here, or, for a result imported
    # from a published board, the date that board verified it. Shown in the "verified" tag.
    verified_at = models.DateTimeField(null=True, blank=True)
    # When a result produced elsewhere was first published (an imported official row): the
    # board's date column. Blank for uploads, which are dated by their own runs. Never changed
    # by the workflow, so withdrawing and re-verifying an imported row keeps its date.
    published_at = models.DateTimeField(null=True, blank=True)
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # Shown to the submitter when the entry is rejected or withdrawn.
    verification_reason = models.TextField(blank=True)
    verification_changed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        # Duplicate files are found by checksum per benchmark (`services.create_submission`).
        indexes = [models.Index(fields=["benchmark", "predictions_sha256"])]
        permissions = [
            ("verify_submission", "Can move entries through verification (maintainers)"),
            ("rerun_evaluation", "Can rerun the scoring of any submission (maintainers)"),
        ]
        constraints = [
            models.UniqueConstraint(
                "benchmark",
                Lower("model_name"),
                condition=models.Q(publish=True),
                name="submission_published_model_name_unique",
            ),
            models.UniqueConstraint(
                fields=["benchmark", "model_name_skeleton"],
                condition=models.Q(publish=True),
                name="submission_published_name_skeleton_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(source__in=SubmissionSource.values),
                name="submission_source_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(verification_status__in=VerificationStatus.values),
                name="submission_verification_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model_name} ({self.benchmark.slug})"

    def get_absolute_url(self) -> str:
        return reverse("submissions:detail", args=[self.pk])

    @property
    def is_verified(self) -> bool:
        return self.verification_status == VerificationStatus.VERIFIED

    @property
    def is_maintainer_result(self) -> bool:
        """A result the maintainers produced themselves (imported from a published board, or a
        baseline they evaluated): verified without the re-run workflow."""
        return self.source == SubmissionSource.IMPORTED or self.is_baseline

    @property
    def board(self) -> BoardKind:
        """The table a published entry appears in: Official once verified, else Community."""
        return BoardKind.OFFICIAL if self.is_verified else BoardKind.COMMUNITY


class Evaluation(models.Model):
    """One scoring run of a submission against one test set version.

    `status` is written only by `submissions.services.set_evaluation_status`, which checks the
    move against `EVALUATION_TRANSITIONS` and stamps the state's time field. `metrics` maps the
    benchmark's metric keys to values (None while pending); `result` is the scorer's full
    `ScoreResult` (per-dataset values, the format report). Imported published results have no
    test set and no predictions, only metrics.
    """

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="evaluations")
    test_set = models.ForeignKey(
        TestSet, null=True, blank=True, on_delete=models.PROTECT, related_name="evaluations"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    scorer_version = models.CharField(max_length=50, blank=True)
    status = models.CharField(
        max_length=10, choices=EvaluationStatus, default=EvaluationStatus.RECEIVED
    )
    error_code = models.CharField(max_length=30, choices=FailureCode, blank=True)
    error_message = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The worker scoring the run (`core.workers.worker_id()`, host:pid) and its last heartbeat,
    # stamped when the run enters `scoring`; the reaper hands out again a run whose heartbeat
    # is stale or whose worker process is gone (docs/workers.md).
    worker = models.CharField(max_length=255, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    # The result's item counts per metric (`result["counts"]`), kept by the database beside it
    # (a stored generated column: no writer of its own). Issue 16: the board's recompute reads
    # every run's counts, and `result -> 'counts'` decompressed each run's whole result (a
    # few kilobytes, the per-dataset breakdown): +1 s at 100,000 runs of the demo's size.
    item_counts = models.GeneratedField(
        expression=KeyTransform("counts", "result"),
        output_field=models.JSONField(),
        db_persist=True,
    )

    created_at = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    # When the run's task last reached the broker (`enqueue_scoring`, its one writer, after
    # the broker took it): a run queued after this was never handed to the broker, and the
    # backstop sends it (`reap_stale_evaluations`); one sent since is the broker's to deliver.
    sent_at = models.DateTimeField(null=True, blank=True)
    scoring_started_at = models.DateTimeField(null=True, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)
    judging_started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "scoring_started_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=EvaluationStatus.values),
                name="evaluation_status_valid",
            ),
            models.CheckConstraint(
                condition=~models.Q(status=EvaluationStatus.FAILED) | ~models.Q(error_code=""),
                name="evaluation_failed_has_code",
            ),
        ]

    def __str__(self) -> str:
        return f"Evaluation {self.pk} of {self.submission.model_name}: {self.status}"

    @property
    def state(self) -> EvaluationStatus:
        return EvaluationStatus(self.status)


class RunReplicates(models.Model):
    """Private (issue 12): what one run's metrics aggregate, and each metric on every bootstrap
    replicate. Never served: no view, serializer, admin page or export reads `contributions` or
    `values` (per-sample correctness would let a submitter probe the ground truth; a test walks
    every response for them). What is public is derived from them: `intervals` (copied to the
    board), the rank intervals and the paired comparisons (`submissions.intervals`).

    `contributions` is `plugins.medvidbench.scoring.contributions.to_bytes` (an .npz of plain arrays);
    `values` is a C-ordered little-endian float64 array of shape (len(metric_keys),
    replicates), NaN where a metric has no value on a replicate (a pending judge metric, a task
    not in the test set). The replicate weights are `replicate_weights` seeded with
    `test_set_checksum`, so two rows with the same checksum and `replicates` are paired.
    Written only by `submissions.intervals` (at scoring, when the judge publishes, and by
    `compute_intervals`).
    """

    evaluation = models.OneToOneField(
        Evaluation, on_delete=models.CASCADE, primary_key=True, related_name="replicates"
    )
    test_set_checksum = models.CharField(max_length=64)
    replicates = models.PositiveIntegerField()
    contributions = models.BinaryField()
    values = models.BinaryField()
    metric_keys = models.JSONField(default=list)
    # metric key -> [low, high] (the 95% percentile interval) or None: public, on the board.
    intervals = models.JSONField(default=dict)
    computed_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "run replicates"

    def __str__(self) -> str:
        return f"Replicates of evaluation {self.evaluation_id} (B={self.replicates})"


class CategoryRating(models.Model):
    """An entry's pairwise rating in one rating category (issue 15): a Bradley-Terry rating on
    the Elo scale, its 95% bootstrap interval (None when not computed) and the battles behind
    it. The board shows it as the category's rating metric (`recompute_board` overlays it).

    Written only by `submissions.ratings.store_ratings`, which replaces a category's rows
    together: every rating of a category comes from one fit over the same battles.
    `category` is the category's key (not a foreign key: a rating outlives an edit of the
    definition's tabs, and the key is what the battles name).
    """

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="category_ratings"
    )
    category = models.CharField(max_length=50)
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="category_ratings"
    )
    rating = models.FloatField()
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    battles = models.PositiveIntegerField()
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["benchmark", "category", "-rating"]
        indexes = [models.Index(fields=["benchmark", "category"])]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "category"], name="categoryrating_one_per_category"
            ),
            models.CheckConstraint(
                condition=(models.Q(ci_low__isnull=True) & models.Q(ci_high__isnull=True))
                | (
                    models.Q(ci_low__isnull=False)
                    & models.Q(ci_high__isnull=False)
                    & models.Q(ci_low__lte=models.F("ci_high"))
                ),
                name="categoryrating_interval_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.category} rating {self.rating:.0f} of {self.submission_id}"


# Here rather than in enums.py only because this change was limited to appending to models.py.
class NotificationKind(models.TextChoices):
    """What a notification reports: a verification move the submitter must hear about (spec 8)
    or a run that failed."""

    NOMINATED = "nominated", "Nominated for the Official board"
    ACCESS_REQUESTED = "access_requested", "Model access requested"
    VERIFIED = "verified", "Verified"
    REJECTED = "rejected", "Not verified"
    WITHDRAWN = "withdrawn", "Withdrawn from the Official board"
    SCORING_FAILED = "scoring_failed", "Scoring failed"
    JUDGE_FAILED = "judge_failed", "LLM judge failed"
    JUDGE_HELD = "judge_held", "LLM judge waiting for a maintainer"
    # Issue 13: the submitter hears when the numbers are in, not only when something failed.
    SCORED = "scored", "Scored"
    COMPLETE = "complete", "Results complete"


class Notification(models.Model):
    """Something the submitter is told about one of their entries (issue 6): shown on their
    pages until marked read, and emailed once.

    Written only by `submissions.notifications.notify` (created, emailed) and
    `mark_notifications_read` (`read_at`), after the state change it reports has committed.
    `email_error` keeps why the email could not be sent; the notification stands regardless.
    """

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    submission = models.ForeignKey(
        Submission,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="notifications",
    )
    kind = models.CharField(max_length=20, choices=NotificationKind)
    subject = models.CharField(max_length=200)
    message = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)
    email_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["recipient", "read_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=NotificationKind.values),
                name="notification_kind_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id}: {self.subject}"


# The boards' models (issue 16: placements and the rows' view), in a module of their own.
from .board_models import (  # noqa: E402
    BoardBuild,
    BoardChanges,
    BoardEntry,
    BoardOrder,
    BoardPlacement,
    BoardRow,
    BoardSnapshot,
    BoardTotals,
)

__all__ = [
    "BoardBuild",
    "BoardChanges",
    "BoardEntry",
    "BoardOrder",
    "BoardPlacement",
    "BoardRow",
    "BoardSnapshot",
    "BoardTotals",
    "CategoryRating",
    "Evaluation",
    "Notification",
    "NotificationKind",
    "RunReplicates",
    "Submission",
]
