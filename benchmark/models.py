"""Benchmarks, their metrics and their private, versioned test sets.

A benchmark's definition (texts, metrics, ranking policy, submission rules) is data: it is
created from ``benchmark/definitions.py`` by ``ensure_benchmark`` and its presentation is edited
by maintainers through ``update_benchmark`` / ``update_metric``. Test sets are immutable once
imported; a new ground-truth file is a new version, so results already computed against an
older version keep meaning what they meant.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from benchmark.enums import (
    CategoryRanking,
    MetricDirection,
    RankingMethod,
    RankingScope,
    TieMethod,
)
from benchmark.facts import FACTS
from benchmark.plugins import Wording, plugin_for, wording_for
from benchmark.scoring.ranking import ranking_order_problem
from benchmark.scoring.rubric import Rubric, RubricError

# The bootstrap's replicates per interval: 95% intervals need at least 39 (bootstrap.py); below
# a few hundred the endpoints jump from one recompute of B to the next, and above 10,000 the
# stored replicates of a board outgrow what a recompute should read.
MIN_REPLICATES = 200
MAX_REPLICATES = 10_000

# More decimals than this is never a display or ranking choice, only a typo.
MAX_DECIMALS = 12


class Benchmark(models.Model):
    """One benchmark with its own board, e.g. MedVidBench.

    The slug is permanent (URLs, the private test-set folder and imports use it). Every field
    is written by ``benchmark.services`` (``ensure_benchmark`` creates, ``update_benchmark``
    edits, each leaving an audit row); nothing here is a workflow state.
    """

    slug = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=100)
    # The benchmark plugin that reads its files and scores them (benchmark/plugins.py), by the
    # key it is registered under. Fixed once the benchmark has test sets: their files are in
    # its format.
    plugin = models.CharField(
        max_length=50,
        default="medvidbench",
        help_text="The benchmark plugin (an installed `podium.benchmarks` entry point).",
    )
    description = models.CharField(
        max_length=300, blank=True, help_text="One sentence, shown in benchmark lists."
    )
    about = models.TextField(
        blank=True, help_text="The About tab: plain text, paragraphs separated by blank lines."
    )
    citation = models.TextField(blank=True, help_text="BibTeX.")
    licence = models.TextField(blank=True)

    # Ranking policy (spec 6): the About text's rule is the default; the official app's later
    # behaviour is dense ties, per-board scope.
    tie_method = models.CharField(max_length=10, choices=TieMethod, default=TieMethod.MIN)
    ranking_scope = models.CharField(
        max_length=10, choices=RankingScope, default=RankingScope.GLOBAL
    )
    ranking_decimals = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        default=3,
        help_text="Values are rounded to this many decimals before ranking; empty ranks on "
        "full precision.",
    )
    # Issue 14: MedSG-Bench ranks by IoU, then ACC@0.5 (benchmark/scoring/ranking.py).
    ranking_method = models.CharField(
        max_length=20, choices=RankingMethod, default=RankingMethod.MEAN_RANK
    )
    ranking_order = models.JSONField(
        default=list,
        blank=True,
        help_text='Metric keys by priority, e.g. ["IoU", "ACC@0.5"]: the board is ordered by '
        "the first, ties broken by the next. Required for the lexicographic method, ignored "
        "by mean rank.",
    )

    # Submission rules.
    daily_submission_limit = models.PositiveSmallIntegerField(
        default=5, help_text="Submissions per user per day; 0 closes submissions."
    )
    max_upload_mb = models.PositiveSmallIntegerField(default=50)
    # docs/benchmarks.md "Submission rules": why MedVidBench's default is 20,000.
    max_prediction_chars = models.PositiveIntegerField(
        default=20_000,
        validators=[MinValueValidator(1)],
        help_text="The longest prediction accepted, in characters (one prediction is sent to "
        "the judge as one prompt); a longer one is refused with its row.",
    )
    # Issue 12: how many bootstrap replicates each interval is read from (docs/statistics.md).
    bootstrap_replicates = models.PositiveIntegerField(
        default=1000,
        validators=[MinValueValidator(MIN_REPLICATES), MaxValueValidator(MAX_REPLICATES)],
        help_text="Bootstrap replicates behind every interval, rank interval and comparison "
        f"({MIN_REPLICATES:,} to {MAX_REPLICATES:,}). Runs scored before a change keep their "
        "replicates until `manage.py compute_intervals` recomputes them.",
    )
    is_public = models.BooleanField(
        default=False, help_text="Listed and visible to everyone; staff always see it."
    )

    # spec 5: the judge prompt is protocol data, editable by maintainers, not a code literal.
    judge_rubric = models.TextField(
        blank=True,
        help_text="The LLM judge's prompt, with {task}, {ground_truth} and {prediction}.",
    )
    judge_settings = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "The rest of the rubric: aspects (in averaging order), answer patterns with "
            "{aspect}, score_min, score_max and the task labels the prompt uses."
        ),
    )
    judge_auto_start = models.BooleanField(
        default=False,
        help_text="Start the LLM judge as soon as a run is scored (else the submitter starts it).",
    )

    # Verification by re-running the model (docs/verification.md).
    verification_tolerance = models.FloatField(
        default=0.01,
        validators=[MinValueValidator(0.0)],
        help_text="Max |self-reported - re-run| per metric for a verified entry.",
    )
    rerun_max_frames = models.PositiveSmallIntegerField(
        default=8,
        validators=[MinValueValidator(1)],
        help_text="Frames sent per question when the platform re-runs a model (evenly spaced, "
        "the first included).",
    )

    contact_url = models.URLField(
        max_length=300,
        blank=True,
        help_text="Where submitters reach the maintainers (e.g. the benchmark's GitHub issues "
        "page), linked from the Official board and About; blank: the site's contact address.",
    )

    # Issue 15 (docs/boards.md, "Categories"): set from the definition by `ensure_benchmark`,
    # as the submission rules are (at creation; again with `setup_benchmarks --overwrite`),
    # and shown read-only in the admin: they describe how Podium evaluates and rates, which a
    # running benchmark does not change by hand.
    model_facts = models.JSONField(
        default=list,
        blank=True,
        help_text="The model facts submitters give (type, parameters, licence, precision, "
        "domain_specific), shown and filtered on the boards.",
    )
    hosted_evaluation = models.BooleanField(
        default=False, help_text="Podium can ask a submitted model endpoint every question."
    )
    hosted_max_tokens = models.PositiveBigIntegerField(
        default=2_000_000, help_text="Prompt and completion tokens one hosted request may spend."
    )
    hosted_requests_per_minute = models.PositiveIntegerField(
        default=600, help_text="Calls one hosted request may make per minute."
    )
    pairwise_opponents = models.PositiveSmallIntegerField(
        default=5, help_text="Opponents a new model meets in a rating category."
    )
    pairwise_questions = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Questions per pairing; empty: every question of the category.",
    )
    rating_anchor = models.CharField(
        max_length=100,
        blank=True,
        help_text="The model whose rating is pinned; empty: the ratings' mean is 1000.",
    )
    rating_bootstrap_rounds = models.PositiveIntegerField(
        default=1000, help_text="Bootstrap rounds behind each rating's 95% interval."
    )
    rating_seed = models.PositiveBigIntegerField(
        default=0, help_text="The seed of the ratings' bootstrap."
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(tie_method__in=TieMethod.values),
                name="benchmark_tie_method_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(ranking_scope__in=RankingScope.values),
                name="benchmark_ranking_scope_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(ranking_method__in=RankingMethod.values),
                name="benchmark_ranking_method_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(ranking_decimals__isnull=True)
                | models.Q(ranking_decimals__lte=MAX_DECIMALS),
                name="benchmark_ranking_decimals_range",
            ),
            models.CheckConstraint(
                condition=models.Q(max_upload_mb__gte=1), name="benchmark_max_upload_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(max_prediction_chars__gte=1),
                name="benchmark_max_prediction_chars_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(bootstrap_replicates__gte=MIN_REPLICATES)
                & models.Q(bootstrap_replicates__lte=MAX_REPLICATES),
                name="benchmark_bootstrap_replicates_range",
            ),
            models.CheckConstraint(
                condition=models.Q(pairwise_opponents__gte=1),
                name="benchmark_pairwise_opponents_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(pairwise_questions__isnull=True)
                | models.Q(pairwise_questions__gte=1),
                name="benchmark_pairwise_questions_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(rating_bootstrap_rounds__gte=1),
                name="benchmark_rating_bootstrap_rounds_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def judge_rubric_checksum(self) -> str:
        """sha256 of the prompt template, shown beside it on the About page."""
        return hashlib.sha256(self.judge_rubric.encode()).hexdigest()

    @property
    def has_judge(self) -> bool:
        """Whether the benchmark has judge metrics at all (a rubric to judge them with)."""
        return bool(self.judge_rubric.strip())

    def rubric(self) -> Rubric:
        """The judge rubric as the scorer uses it; `RubricError` if it cannot work."""
        if not self.has_judge:
            raise RubricError(f"{self.name} has no judge rubric")
        return Rubric.from_dict(
            self.judge_settings, template=self.judge_rubric, required_labels=self.judge_task_labels
        )

    @property
    def judge_task_labels(self) -> tuple[str, ...]:
        """The tasks the benchmark's judge writes prompts for (its plugin's), each of which the
        rubric must label."""
        judge = plugin_for(self).judge
        return tuple(judge.task_labels) if judge is not None else ()

    @property
    def judge_rubric_version(self) -> str:
        """The rubric's content hash ("" without a usable rubric): verdicts are cached by it."""
        try:
            return self.rubric().version
        except RubricError:
            return ""

    def clean(self) -> None:
        super().clean()
        if self.has_judge:
            try:
                self.rubric()
            except RubricError as error:
                raise ValidationError({"judge_settings": str(error)}) from None
        # A benchmark not yet saved has no metrics to check the keys against; the
        # definition's own check covers creation (`BenchmarkDefinition.__post_init__`).
        if self.pk is not None and self.ranking_method in RankingMethod.values:
            problem = ranking_order_problem(
                self.ranking_method, self.ranking_order, self.metric_keys()
            )
            if problem:
                raise ValidationError({"ranking_order": problem})

    def metric_keys(self) -> list[str]:
        """The keys of the benchmark's metrics, in column order."""
        return [metric.key for metric in self.metrics.all()]

    @property
    def wording(self) -> Wording:
        """How the pages name this benchmark's rows, groups and bootstrap draws (its plugin's
        words: "samples" and "per dataset" for MedVidBench, "items" and "per task" for
        MedSG-Bench)."""
        return wording_for(plugin_for(self))

    @property
    def judge_step(self) -> bool:
        """Whether a scored run waits for the LLM judge (its plugin says)."""
        return plugin_for(self).judge_step

    @property
    def is_lexicographic(self) -> bool:
        """Whether the board is ordered by `ranking_order` rather than by mean rank."""
        return self.ranking_method == RankingMethod.LEXICOGRAPHIC

    @property
    def fact_keys(self) -> list[str]:
        """The model facts its submitters give, in the vocabulary's order (`benchmark.facts`:
        type, parameters, licence, precision, domain-specific), whatever the definition's."""
        asked = set(self.model_facts or [])
        return [key for key in FACTS if key in asked]

    @property
    def ranking_order_text(self) -> str:
        """The order as the board and About say it: "IoU, then ACC@0.5" (metric keys, the
        board's column names)."""
        return ", then ".join(str(key) for key in self.ranking_order)


class Metric(models.Model):
    """One board column of a benchmark, e.g. MedVidBench's ``TAG_mIoU@0.3``.

    ``key`` is the name the scorer reports the value under, so it never changes once results
    exist; ``task`` is the scorer's task that feeds it. Written by ``ensure_benchmark``
    (protocol fields) and ``update_metric`` (label, description, display precision).
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="metrics")
    key = models.CharField(max_length=50)
    label = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    task = models.CharField(max_length=50)
    direction = models.CharField(
        max_length=10, choices=MetricDirection, default=MetricDirection.HIGHER
    )
    display_decimals = models.PositiveSmallIntegerField(default=3)
    is_judge_metric = models.BooleanField(
        default=False, help_text="Filled by the LLM judge (step 2), pending until then."
    )
    # Issue 15: a pairwise rating (Elo scale), not a value the scorer computes: the board
    # takes it from `submissions.CategoryRating`, with its interval and battles.
    is_rating = models.BooleanField(
        default=False,
        help_text="A Bradley-Terry rating from pairwise battles, pending until they are run.",
    )
    # The official column order; equal positions fall back to creation order.
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "key"], name="metric_key_unique"),
            models.CheckConstraint(
                condition=models.Q(direction__in=MetricDirection.values),
                name="metric_direction_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(display_decimals__lte=MAX_DECIMALS),
                name="metric_display_decimals_range",
            ),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def higher_is_better(self) -> bool:
        return self.direction == MetricDirection.HIGHER


class Category(models.Model):
    """One tab of a benchmark's board (issue 15): its columns (`metric_keys`, in column order)
    and how it ranks (`ranking`: its metrics under the benchmark's policy, or its one rating
    metric, highest first), with a description and a note naming its judge.

    Written only by ``ensure_benchmark`` from the definition's `CategoryDefinition`s: the key,
    metrics, ranking and position always follow the definition, the label, description and
    judge note at creation and with ``overwrite``, and a category the definition no longer has
    is removed (its ratings, keyed by the category's key, stay stored).
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="categories")
    key = models.SlugField(max_length=50)
    label = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    judge_note = models.CharField(max_length=300, blank=True)
    ranking = models.CharField(
        max_length=10, choices=CategoryRanking, default=CategoryRanking.METRICS
    )
    metric_keys = models.JSONField(default=list)
    # The tabs' order; equal positions fall back to creation order.
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        verbose_name_plural = "categories"
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "key"], name="category_key_unique"),
            models.CheckConstraint(
                condition=models.Q(ranking__in=CategoryRanking.values),
                name="category_ranking_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark_id}:{self.key}"

    @property
    def ranks_by_rating(self) -> bool:
        return self.ranking == CategoryRanking.RATING


class TestSet(models.Model):
    """One version of a benchmark's private ground truth.

    The file is in the private store (``core.private_files``, never served; docs/storage.md)
    as ``file_name``, its key: ``testsets/<slug>/v<version>-<checksum[:12]>.json``. A row and
    its file never change after import: a corrected ground truth is a new version, and each
    result records the test set (hence its version) and the scorer version it was computed with.

    ``is_active`` marks the version new submissions are scored against, at most one per
    benchmark (a constraint). Its one writer is ``benchmark.services.set_active_testset``; the
    importer calls it too.
    """

    __test__ = False  # not a pytest test class, despite the name

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="test_sets")
    version = models.PositiveIntegerField()
    checksum = models.CharField(max_length=64, help_text="sha256 of the file, hex.")
    file_name = models.CharField(
        max_length=255, help_text="The file's key in the private store: testsets/<slug>/..."
    )
    record_count = models.PositiveIntegerField()
    qa_type_counts = models.JSONField(default=dict)
    task_counts = models.JSONField(default=dict)
    dataset_counts = models.JSONField(default=dict)
    scorer_version = models.CharField(
        max_length=50, help_text="The benchmark.scoring version that validated the file."
    )
    is_active = models.BooleanField(default=False)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "version"], name="testset_version_unique"),
            models.UniqueConstraint(
                fields=["benchmark", "checksum"], name="testset_checksum_unique"
            ),
            models.UniqueConstraint(
                fields=["benchmark"],
                condition=models.Q(is_active=True),
                name="testset_one_active_per_benchmark",
            ),
            models.CheckConstraint(
                condition=models.Q(version__gte=1), name="testset_version_gte_1"
            ),
            models.CheckConstraint(
                condition=models.Q(checksum__regex=r"^[0-9a-f]{64}$"),
                name="testset_checksum_sha256_hex",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark.slug} test set v{self.version}"
