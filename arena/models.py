"""Pairwise-judged categories (issue 15, point 3; docs/ratings.md, "On the platform"): the battle
jobs, their judge calls, the battles they store and each category's last fit.

A `BattleJob` is one newcomer's battles in one rating category: the opponents it meets
(`benchmark.scoring.battles.choose_opponents`), the questions of each pairing
(`choose_questions`), and two judge calls per battle (`BattleItem`), the same two answers with
their positions swapped. It is an engine job (`inference.models.Job`): a worker runs it in time
slices, a dead worker's job is reaped and continues from its persisted items, and every judged
prompt goes into the judge's verdict cache (`judging.models.Verdict`), so a pairwise prompt
judged once is never paid for again. When both calls of a battle have a usable verdict the
battle is stored (`Battle`): never rewritten, exported as JSON Lines. A call that stays unusable
after every attempt drops its battle (counted on the job, shown), never guessed.

A `CategoryFit` records what the last Bradley-Terry fit of a category came to: which entries
were on the boards, how many battles it used, and why an entry's rating is pending when its
battles have no finite rating.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Greatest, Least

from benchmark.models import Benchmark, TestSet
from benchmark.scoring.battles import VERDICTS, WINNERS
from inference.models import Item, Job
from judging.models import JudgeEndpoint, Verdict
from submissions.models import Submission

from .enums import ACTIVE_JOB_STATES, FitStatus, ItemState, JobStatus, Shown

# The verdict cache's `rubric_version` for pairwise prompts: a battle prompt holds everything the
# judge is asked (the plugin's instruction, the question, the reference and both answers), so its
# sha256 is the whole key with the judge model; the reading is taken from the cached reply again.
VERDICT_CACHE_VERSION = "pairwise"
READINGS = [(value, value) for value in VERDICTS]  # "first", "second", "tie" (by position)
WINNER_CHOICES = [(value, value) for value in WINNERS]  # "model_a", "model_b", "tie"


class BattleJob(Job):
    """The battles of one entry (the newcomer, model A of each battle) in one rating category of
    its benchmark, an engine job (`inference.models.Job`). `status` is written only by
    `arena.services.set_job_status`. `opponents` is the schedule it was given: the entries it
    meets (model B), `[{"submission": id, "model_name": ...}]` in model-name order (an empty
    list: no other entry was on the boards, so it waits for the next one). The counters are
    progress for the admin; the items and the battles are the truth."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="battle_jobs")
    category = models.CharField(max_length=50)
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="battle_jobs")
    # The test set the answers were read against (the newcomer's newest scored run's).
    test_set = models.ForeignKey(TestSet, on_delete=models.PROTECT, related_name="+")
    endpoint = models.ForeignKey(
        JudgeEndpoint, on_delete=models.PROTECT, related_name="battle_jobs"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    rerun_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns"
    )
    # A snapshot: the verdicts are the judge model's the job started with.
    model = models.CharField(max_length=100, help_text="The judge model.")
    opponents = models.JSONField(default=list, blank=True)
    battles_total = models.PositiveIntegerField(default=0)
    battles_judged = models.PositiveIntegerField(default=0)
    battles_dropped = models.PositiveIntegerField(
        default=0, help_text="Battles whose judge calls got no usable verdict: not rated."
    )
    items_cached = models.PositiveIntegerField(default=0)
    # The judge endpoint's outage, written at each heartbeat (None: reachable), as a judge job's.
    unreachable_since = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    last_transient_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=JobStatus.values), name="battlejob_status_valid"
            ),
            models.UniqueConstraint(
                fields=["submission", "category"],
                condition=models.Q(status__in=sorted(ACTIVE_JOB_STATES)),
                name="battlejob_one_active_per_entry_and_category",
            ),
        ]

    def __str__(self) -> str:
        return f"Battle job {self.pk} of {self.submission_id} in {self.category}: {self.status}"


class BattleItem(Item):
    """One judge call of a job (an engine item, `inference.models.Item`): round 1 or 2 of the
    battle of the job's newcomer against `opponent` on `question`, with `shown_first` the model
    whose answer the prompt shows first (round 2 shows the other). Once judged, `reading` is
    the verdict read by the plugin ("first", "second" or "tie", by position) and `verdict` the
    cached reply. The prompt holds the question's reference answer: it is kept here for the
    worker and never shown or exported."""

    job = models.ForeignKey(BattleJob, on_delete=models.CASCADE, related_name="items")
    opponent = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    question = models.CharField(max_length=100)
    round = models.PositiveSmallIntegerField()
    shown_first = models.CharField(max_length=10, choices=Shown)
    prompt = models.TextField()
    prompt_sha256 = models.CharField(max_length=64)
    # The arena's words for the engine's item states.
    state = models.CharField(max_length=10, choices=ItemState, default=ItemState.PENDING)
    from_cache = models.BooleanField(default=False)
    verdict = models.ForeignKey(
        Verdict, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reading = models.CharField(max_length=10, choices=READINGS, blank=True)

    class Meta:
        ordering = ["job", "id"]
        indexes = [models.Index(fields=["job", "state"])]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "opponent", "question", "round"], name="battleitem_once"
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=ItemState.values), name="battleitem_state_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(round__in=[1, 2]), name="battleitem_round_one_or_two"
            ),
            models.CheckConstraint(
                condition=~models.Q(state=ItemState.DONE)
                | (models.Q(verdict__isnull=False) & ~models.Q(reading="")),
                name="battleitem_done_has_verdict",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.question} vs {self.opponent_id}, round {self.round}: {self.state}"


class Battle(models.Model):
    """One judged battle: the two entries' answers to one question of a rating category, shown
    to the judge twice with their positions swapped, and what MEDIC's rule makes of the two
    verdicts (`benchmark.scoring.battles.battle_winner`). Model A is the entry whose job
    scheduled it (the newcomer then), model B its opponent.

    Stored once by the job that judged it (`arena.services.finish_job`), never rewritten: a pair
    meets on a question once per category (a constraint, whichever of them is model A).
    `round1_first` says whose answer round 1 showed first; round 2 showed the other's first.
    Each round keeps the prompt's sha256 (the prompt itself holds the reference answer and is
    never kept here), the judge's raw reply and its reading. Exported as JSON Lines
    (`GET /api/v1/benchmarks/<slug>/battles.jsonl?category=KEY`) without the raw replies
    (docs/ratings.md, "The export")."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="battles")
    category = models.CharField(max_length=50)
    question = models.CharField(max_length=100)
    model_a = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="battles_as_a")
    model_b = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="battles_as_b")
    job = models.ForeignKey(
        BattleJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="battles"
    )
    round1_first = models.CharField(max_length=10, choices=Shown)
    round1_prompt_sha256 = models.CharField(max_length=64)
    round1_verdict = models.TextField()
    round1_reading = models.CharField(max_length=10, choices=READINGS)
    round2_prompt_sha256 = models.CharField(max_length=64)
    round2_verdict = models.TextField()
    round2_reading = models.CharField(max_length=10, choices=READINGS)
    winner = models.CharField(max_length=10, choices=WINNER_CHOICES)
    judge_model = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["benchmark", "category"])]
        constraints = [
            models.UniqueConstraint(
                "benchmark",
                "category",
                "question",
                Least("model_a", "model_b"),
                Greatest("model_a", "model_b"),
                name="battle_once_per_pair_and_question",
            ),
            models.CheckConstraint(
                condition=~models.Q(model_a=models.F("model_b")), name="battle_two_entries"
            ),
            models.CheckConstraint(
                condition=models.Q(winner__in=WINNERS), name="battle_winner_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(round1_reading__in=VERDICTS)
                & models.Q(round2_reading__in=VERDICTS),
                name="battle_readings_valid",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.category}/{self.question}: {self.model_a_id} v {self.model_b_id}: {self.winner}"
        )

    @property
    def round2_first(self) -> str:
        return Shown.MODEL_B if self.round1_first == Shown.MODEL_A else Shown.MODEL_A

    @property
    def reading_with_a_first(self) -> str:
        """The verdict of the round that showed model A's answer first."""
        return self.round1_reading if self.round1_first == Shown.MODEL_A else self.round2_reading

    @property
    def reading_with_b_first(self) -> str:
        return self.round2_reading if self.round1_first == Shown.MODEL_A else self.round1_reading


class CategoryFit(models.Model):
    """What the last rating of one rating category came to: written only by
    `arena.services.rate_category`, which fits the Bradley-Terry ratings over every stored
    battle between entries on the boards and hands them to `submissions.ratings.store_ratings`.
    Its row is also the category's lock: scheduling and rating take it `FOR UPDATE`, so two
    jobs never schedule the same pair twice and a fit never overwrites a newer one.

    `members` are the ids of the entries on the boards when it was fitted (a board change that
    moves none of them re-rates nothing); `pending_models` the model names left "rating
    pending" with `reason`; `unbounded` the models whose rating is published without its
    interval because an end of it is unbounded (model name -> "above", "below" or "both")."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="category_fits")
    category = models.CharField(max_length=50)
    status = models.CharField(max_length=20, choices=FitStatus, default=FitStatus.WAITING)
    reason = models.TextField(blank=True)
    members = models.JSONField(default=list, blank=True)
    pending_models = models.JSONField(default=list, blank=True)
    unbounded = models.JSONField(default=dict, blank=True)
    battles = models.PositiveIntegerField(default=0)
    rated = models.PositiveIntegerField(default=0)
    rounds = models.PositiveIntegerField(default=0)
    seed = models.PositiveBigIntegerField(default=0)
    anchor = models.CharField(max_length=100, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["benchmark", "category"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "category"], name="categoryfit_once"),
            models.CheckConstraint(
                condition=models.Q(status__in=FitStatus.values), name="categoryfit_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.category} of {self.benchmark_id}: {self.status}"
