"""The materialised boards' models (docs/boards.md), re-exported by `submissions.models`.

A board row is two things (issue 16, "Placements and the rows' view"):

- `BoardPlacement`, a table: where `recompute_board` put each published entry (its board, rank,
  positions, per-metric ranks, marks), rewritten whole by every recompute. It holds nothing
  that the entry's submission or run already holds.
- `BoardEntry`, a database view over the placements joined to their runs and submissions: the
  row every reader reads, with the values and intervals the run holds (or the placement's own
  where a rating overlays them), the model facts and the date shown. Read-only; it has no
  writer of its own.
"""

from __future__ import annotations

import numpy as np
from django.db import models

from benchmark.models import Benchmark
from core.fields import EqualityIndex, JSONTextField

from .enums import BoardKind, SnapshotReason


class BoardRow(models.Model):
    """What a board row holds that its recompute (or the background writers after it)
    decides: the fields `BoardPlacement` stores and `BoardEntry` shows as they are."""

    board = models.CharField(max_length=10, choices=BoardKind)
    rank = models.PositiveIntegerField()
    mean_rank = models.FloatField()
    wins = models.PositiveSmallIntegerField()
    # metric key -> "best" | "second", within this row's board; absent keys are not highlighted.
    highlights = models.JSONField(default=dict, db_default={})
    # The run has its automatic metrics but the LLM judge has not finished (spec 5).
    judge_pending = models.BooleanField(default=False)
    # Judge metrics a maintainer accepted over fewer items than they have (issue 10): metric key ->
    # {"judged": n, "items": m}; the board says so beside the value.
    judged_over = models.JSONField(default=dict, db_default={}, blank=True)
    # The 95% rank interval and the statistical tier within the row's board. Written after the
    # recompute, in the background, by `submissions.intervals.compute_rank_intervals` (the one
    # writer of these three); None until then, or when no row of the board has replicates.
    rank_best = models.PositiveIntegerField(null=True, blank=True)
    rank_worst = models.PositiveIntegerField(null=True, blank=True)
    tier = models.PositiveIntegerField(null=True, blank=True)
    # The model name and the team (team name, else institution) casefolded (issue 13, point 11):
    # what the board's search matches and its Model and Team columns sort by, in the database
    # and in code-point order (`selectors.board_page`), as `sort_board_rows` orders them.
    model_key = models.CharField(max_length=400, blank=True, default="")
    team_key = models.CharField(max_length=800, blank=True, default="")
    # Issue 15 (docs/boards.md, "Categories"). The rank within each category's tab, ranked as
    # `rank` is (the benchmark's scope; unique positions): category key -> rank.
    category_ranks = models.JSONField(default=dict, db_default={}, blank=True)
    # Rating metrics taken from `CategoryRating`: metric key -> battles behind the rating
    # (its value is in `values`, its 95% interval in `intervals`); absent while pending.
    # Issue 16: these JSON columns default to `{}` in the database too, so a recompute whose
    # rows all leave one empty does not write it (`submissions.boards.rows._EMPTY_BY_DEFAULT`).
    rating_battles = models.JSONField(default=dict, db_default={}, blank=True)
    # Issue 16: what `rank_entries` said besides the rank, stored so the rankings API reads a
    # page of rows instead of ranking the whole board again: the rank on each metric, a list
    # in the order of the board's `BoardTotals.metric_keys` (every metric, in the benchmark's
    # order when the board was recomputed; `BoardEntry.metric_keys` shows them), and the
    # two tiebreak values after `wins` (the sum of the per-metric ranks, the sum of the
    # normalised scores). A list, not an object: the keys on every row were three fifths of
    # a 100,000-row recompute's bytes. `json`, not `jsonb`, on PostgreSQL
    # (`core.fields.JSONTextField`): read whole, never searched inside.
    metric_ranks = JSONTextField(default=list, blank=True)
    rank_sum = models.PositiveIntegerField(default=0)
    normalized_sum = models.FloatField(default=0.0)
    # Issue 16: the row's place in its board's rank order (1 to the board's rows) and among
    # both boards' rows by rank then submission (the rankings API's `board=all`), so a page
    # in rank order is a range of an index, whatever the board's size and whatever the
    # planner's statistics of a table every recompute rewrites (`selectors.board_page`).
    position = models.PositiveIntegerField(default=0)
    overall_position = models.PositiveIntegerField(default=0)
    # Issue 16: the row's rankings-API JSON on the overview, as `json.dumps` encodes it,
    # before and after its rank interval, tier and category rank (filled in by the page:
    # `submissions.board_json.spliced`). Written after the recompute, in the background, by
    # `submissions.board_json.write_board_json` (the one writer of these two); empty until
    # then (the database's default, so the recompute's COPY leaves them out), when the API
    # builds the row instead.
    api_head = models.TextField(blank=True, db_default="")
    api_tail = models.TextField(blank=True, db_default="")

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"#{self.rank} {self.board} {self.submission_id}"  # type: ignore[attr-defined]


class BoardPlacement(BoardRow):
    """Where a benchmark's last recompute placed one published entry: the table behind
    `BoardEntry`. `submissions.boards.recompute_board` is its only writer of rows (it replaces
    a benchmark's placements in one transaction whenever an input changes);
    `compute_rank_intervals` and `write_board_json` fill in their own columns afterwards.

    Issue 16: a placement holds only what the recompute decides. The values and intervals it
    shows are its run's (`BoardEntry` joins them), so a 100,000-row recompute no longer
    copies every run's JSON through Python into the board and back: `own_values` and
    `own_intervals` are set only where the row shows something its run does not hold (a
    rating category's rating overlaid on the run's metrics, a stored value that is not a
    finite number cleaned to null), and null otherwise.
    """

    # The three references are Django's (joins, and on_delete=CASCADE, which Django's
    # collector carries out) but not the database's (`db_constraint=False`). A row is derived
    # data its one writer rebuilds whole from the submissions and runs it reads in the same
    # transaction, under the benchmark's row lock; and the platform never deletes a
    # submission or a run (a superuser's admin deletion cascades to the row in Django). A
    # database foreign key would instead check and lock (FOR KEY SHARE) every submission and
    # run of the board on every recompute: two thirds of a 100,000-row recompute's time. No
    # index of the benchmark's own (the position indexes below start with it), none for the
    # run (nothing looks a row up by its run): every index costs a 100,000-row recompute.
    benchmark = models.ForeignKey(
        Benchmark,
        on_delete=models.CASCADE,
        related_name="board_placements",
        db_index=False,
        db_constraint=False,
    )
    # One placement per submission (a benchmark's recompute places each of its published
    # entries once), kept by its one writer rather than by a unique index: see Meta. Looked
    # up by equality alone (a submission's row): a hash index on PostgreSQL (Meta).
    submission = models.ForeignKey(
        "submissions.Submission",
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    # The run whose values are shown: the submission's newest run that has scores.
    evaluation = models.ForeignKey(
        "submissions.Evaluation",
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    # The values shown where they are not the run's own metrics (null: the run's).
    own_values = models.JSONField(null=True, blank=True)
    # The intervals shown where they are not the run's `RunReplicates.intervals` (null: the
    # run's, `{}` for a run without replicates).
    own_intervals = JSONTextField(null=True, blank=True)

    class Meta:
        # Issue 16: no unique index. A recompute deletes a benchmark's placements and writes
        # them again in one transaction, so every new row has the key of a row it deleted (the
        # same positions, the same submissions), and a unique index checks each against the
        # deleted row's heap tuple: ~0.4-0.5 s of a 100,000-row recompute's COPY, a quarter of
        # the server's part (docs/boards.md, "Placements and the rows' view"). A board's
        # positions (1 to its rows, in rank order) and its one placement per submission are
        # its one writer's, under the benchmark's lock, and tested
        # (tests/submissions/test_board_recompute.py).
        constraints = [
            models.CheckConstraint(
                condition=models.Q(board__in=BoardKind.values), name="boardplacement_board_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(rank__gte=1), name="boardplacement_rank_gte_1"
            ),
        ]
        indexes = [
            # The pages' ranges of positions, the home page's leader at position 1: one
            # partial index per board, so each row goes into one index of two integers, in
            # the order `recompute_board` writes them (ascending positions), rather than into
            # one index of the board's name too (a text compared under the database's
            # collation at every step down the tree: ~0.1 s of a 100,000-row COPY more).
            *(
                models.Index(
                    fields=["benchmark", "position"],
                    condition=models.Q(board=kind),
                    name=f"boardplacement_{kind}",
                )
                for kind in BoardKind.values
            ),
            # The rankings API's `board=all`.
            models.Index(fields=["benchmark", "overall_position"], name="boardplacement_overall"),
            # A submission's row (`Submission.board_entry`, the rows' view's joins).
            EqualityIndex(fields=["submission"], name="boardplacement_submission"),
        ]


class BoardEntry(BoardRow):
    """One row of a benchmark's board, as every reader reads it: a published entry, its rank
    and what decided it, its values and intervals.

    A database view (`submissions_boardentry`, created by migration 0027; a migration that
    alters a table it reads drops and creates it again around the change, as 0028 does,
    since SQLite rebuilds a table to alter it and refuses to while a view reads it): each
    `BoardPlacement` with its run's metrics as `values` and its `RunReplicates.intervals` as
    `intervals` (the placement's own where it has them), its submission's model facts, and
    the date shown. Read-only: rows are written as placements, by `recompute_board`, which
    ranks every published entry with `benchmark.scoring.ranking` whenever an input changes (a
    run gains or loses scores, an entry is verified, the ranking policy or a metric's
    presentation is edited). Board pages read the rows as they are. `rank` is the rank shown:
    against the union of both boards under the global scope, against the row's own board
    under the per-board one. `highlights` marks the best and second-best value of each
    column within the row's board.

    The values are read from the run when the row is read. A run's metrics change only with
    its status (scored, judged, re-scored, accepted partially), and each such change
    schedules the recompute that places the row again, in the same commit's aftermath; a page
    cached in between is keyed by the previous `computed_at` and replaced by that recompute.
    """

    benchmark = models.ForeignKey(
        Benchmark,
        on_delete=models.DO_NOTHING,
        related_name="board_entries",
        db_constraint=False,
    )
    submission = models.OneToOneField(
        "submissions.Submission",
        on_delete=models.DO_NOTHING,
        related_name="board_entry",
        db_constraint=False,
    )
    evaluation = models.ForeignKey(
        "submissions.Evaluation",
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_constraint=False,
    )
    # metric key -> value (None where missing or pending), as the run stored it, cleaned (a
    # finite number or None), a rating metric's from the entry's rating.
    values = models.JSONField(default=dict)
    # Issue 12 (docs/statistics.md): metric key -> [low, high] or None, the run's intervals as
    # `RunReplicates` stored them ({} for a run without per-sample data: an imported row).
    intervals = JSONTextField(default=dict, blank=True)
    # The board's date column: the published date of a result produced elsewhere, else the
    # verification date of a verified entry, else the scoring date of its run.
    listed_at = models.DateTimeField()
    # The submission's model facts, so the board filters them in its own query.
    model_facts = models.JSONField(default=dict, blank=True)
    # The metric of each of `metric_ranks` (its board's `BoardTotals.metric_keys`).
    metric_keys = models.JSONField(default=list, blank=True)
    # When the board was computed: its `BoardTotals.computed_at`, which each recompute and
    # each writing of the rank intervals moves (and the cached pages and ETags are keyed by).
    computed_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = "submissions_boardentry"
        ordering = ["benchmark", "board", "rank"]


class BoardTotals(models.Model):
    """One board's summary as its last recompute left it (issue 16): how many rows it has,
    how many have metric intervals, rank intervals and tiers, and when it was computed. The
    board pages and the API read this one row instead of counting the board's rows on every
    request (`selectors.board_summary`).

    Written by `recompute_board`, with the rows it writes (a board without rows has no
    totals), and by `compute_rank_intervals` when it writes the rows' rank intervals and
    tiers (`with_rank_intervals`, `with_tiers` and the new `computed_at`): the writers of
    the rows these count, and no other code.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="board_totals")
    board = models.CharField(max_length=10, choices=BoardKind)
    entries = models.PositiveIntegerField()
    # Rows whose run has metric intervals (`BoardEntry.intervals` not empty).
    with_intervals = models.PositiveIntegerField()
    # Rows with a rank interval (`rank_best`) and with a tier.
    with_rank_intervals = models.PositiveIntegerField(default=0)
    with_tiers = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField()
    # The metric of each of a row's `metric_ranks`, in their order (issue 16): the board's
    # metrics as its recompute read them, written with the rows.
    metric_keys = models.JSONField(default=list, blank=True)
    # The rank of the board's first row (issue 32): above 1 under the global scope when the
    # other board holds the ranks above it, which the board page then names.
    first_rank = models.PositiveIntegerField(default=1)
    # The metrics with a value (or a pending judge value) on at least one of the board's rows
    # (issue 32): the board hides the others by default. None: not computed (a board written
    # before), every column shown.
    filled_metrics = models.JSONField(null=True, blank=True, default=None)
    # Whether some row names a team or institution (issue 32): the page hides the Team
    # column when none does. True for a board written before (the column shown).
    has_teams = models.BooleanField(default=True)

    class Meta:
        verbose_name_plural = "board totals"
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "board"], name="boardtotals_unique"),
            models.CheckConstraint(
                condition=models.Q(board__in=BoardKind.values), name="boardtotals_board_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.board} board of benchmark {self.benchmark_id}: {self.entries} rows"


class BoardChanges(models.Model):
    """How many times a benchmark's board inputs have changed (docs/boards.md, "Changes and
    builds"): counted by `board_refresh.schedule_board_refresh` in the transaction of each change, so
    the count commits with the change or not at all. Its one writer is that function; the
    recompute only reads it (never locks it), so a change and a recompute never wait on
    each other here."""

    benchmark = models.OneToOneField(
        Benchmark, on_delete=models.CASCADE, primary_key=True, related_name="board_changes"
    )
    total = models.PositiveBigIntegerField(default=0)
    changed_at = models.DateTimeField()  # the last change's

    class Meta:
        verbose_name_plural = "board changes"

    def __str__(self) -> str:
        return f"benchmark {self.benchmark_id}: {self.total} changes"


class BoardBuild(models.Model):
    """Which of a benchmark's board changes its rows include: `changes` is the
    `BoardChanges.total` the last recompute read, under the benchmark's lock, before it read
    the entries. Written by `recompute_board` in its own transaction (so with the rows), and
    by no other code. A board whose count is ahead of its build is stale: the refresh that
    was to follow the change failed or died with its process, and the board reaper
    (`board_refresh.reap_stale_boards`) rebuilds it."""

    benchmark = models.OneToOneField(
        Benchmark, on_delete=models.CASCADE, primary_key=True, related_name="board_build"
    )
    changes = models.PositiveBigIntegerField(default=0)
    built_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"benchmark {self.benchmark_id}: built after {self.changes} changes"


# A `BoardOrder` of both boards together (the rankings API's `board=all`): their rows' overall
# positions.
BOTH_BOARDS = "all"


class BoardOrder(models.Model):
    """A board's rows in the order of one column it can be sorted by, one way (issue 16):
    their positions (`BoardPlacement.position`) as little-endian 32-bit integers, so a page
    of the whole board sorted by a metric, the model, the team or the date reads its rows by
    position, whatever the board's size, rather than sorting every row
    (`selectors.board_page`; the order is `board_ordering`'s, a test holds the two equal).

    Written in the background after each recompute by `board_orders.write_board_orders`, its
    one writer, for the build whose rows it read (`built_at`, the benchmark's
    `BoardBuild.built_at`, new at every rewrite). A page uses it only while that build is the
    board's; until the writer has run, it sorts in the database, as before."""

    # How `positions` holds them: the same bytes on every machine.
    POSITION_TYPE = np.dtype("<u4")
    BOTH = BOTH_BOARDS

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="+")
    board = models.CharField(max_length=10, choices=[*BoardKind.choices, (BOTH, "Both boards")])
    key = models.CharField(max_length=50)  # a metric's key, "model", "team" or "date"
    descending = models.BooleanField()
    built_at = models.DateTimeField()
    positions = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "board", "key", "descending"], name="boardorder_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(board__in=[*BoardKind.values, BOTH_BOARDS]),
                name="boardorder_board_valid",
            ),
        ]

    def __str__(self) -> str:
        way = "descending" if self.descending else "ascending"
        return f"{self.board} board of benchmark {self.benchmark_id} by {self.key}, {way}"


class BoardSnapshot(models.Model):
    """A benchmark's boards as they were published at a moment (issue 33, docs/boards.md,
    "Snapshots"): every row both boards show, as the rankings' CSV (`csv`, compressed, with
    each row's test-set and scorer versions last) and as the rankings' JSON rows (`rows`,
    compressed), and the sha256 of the CSV, so anyone can check a downloaded copy.

    Asked for (`requested`) in the transaction of each change of the Official board, by that
    change's writer (`snapshots.request_snapshot`, through `schedule_board_refresh`), by a
    maintainer, or by the Community board's first change of a day; written once (`sealed`)
    by the board's writers when the build that includes the change has its rank intervals
    (`snapshots.seal_snapshots`, under the benchmark's lock), and never again: a database
    trigger refuses any change to a sealed row (migration 0034). Requests one build includes
    together become one snapshot (the board never showed the states between them). Until it
    is sealed a snapshot is not listed anywhere.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="snapshots")
    # The moment the board is as of: the (last) change's, set with the request.
    taken_at = models.DateTimeField()
    reason = models.CharField(max_length=20, choices=SnapshotReason)
    # What changed, in words ("'Model X' verified"); the requests it merges, "; " between.
    description = models.TextField(blank=True, default="")
    # A maintainer's note (their own snapshot, a forced verification's note).
    note = models.TextField(blank=True, default="")
    # The benchmark's `BoardChanges.total` counted with the request: the build that includes
    # it seals it.
    changes = models.PositiveBigIntegerField()
    sealed_at = models.DateTimeField(null=True, blank=True)
    entries = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    csv = models.BinaryField(default=b"")
    rows = models.BinaryField(default=b"")
    # The metric keys of the rows, in the benchmark's order when it was sealed.
    metric_keys = models.JSONField(default=list, blank=True)
    # A digest of what the Official board showed (its rows, ranks, rank intervals, tiers and
    # runs): a build whose Official board differs from the last snapshot's takes one, so an
    # Official row moved by a Community entry under the global scope is recorded too.
    official_digest = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-taken_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(reason__in=SnapshotReason.values),
                name="boardsnapshot_reason_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["benchmark", "taken_at"], name="boardsnapshot_taken"),
            models.Index(
                fields=["benchmark", "changes"],
                condition=models.Q(sealed_at__isnull=True),
                name="boardsnapshot_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"snapshot {self.pk} of benchmark {self.benchmark_id} ({self.reason})"

    @property
    def is_sealed(self) -> bool:
        return self.sealed_at is not None
