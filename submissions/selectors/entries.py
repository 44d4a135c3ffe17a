"""Reads of entries and their runs, and the ranking's inputs (shared by `recompute_board` and
`would_be_rank`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    Func,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.functions import Cast, Coalesce, NullIf

from accounts.roles import can_view_all_entries
from benchmark.models import Benchmark, Metric
from benchmark.plugins import plugin_for
from benchmark.scoring.ranking import Entry, MetricSpec, RankingPolicy
from core.text import confusable_key

from ..enums import (
    STATES_WITH_SCORES,
    VerificationStatus,
)
from ..models import Evaluation, Submission

# --- submissions ---------------------------------------------------------------------------------


def submissions_for_user(user: Any, *, benchmark: Benchmark | None = None) -> QuerySet[Submission]:
    """The user's own submissions, newest first, each annotated with its newest run's
    `latest_status` and carrying its board entry (if published and ranked). None for an
    anonymous user."""
    if not getattr(user, "is_authenticated", False):
        return Submission.objects.none()
    newest_run = Evaluation.objects.filter(submission=OuterRef("pk")).order_by("-created_at", "-id")
    submissions = (
        Submission.objects.filter(owner=user)
        .select_related("benchmark", "board_entry")
        .annotate(latest_status=Subquery(newest_run.values("status")[:1]))
        .order_by("-created_at", "-id")
    )
    if benchmark is not None:
        submissions = submissions.filter(benchmark=benchmark)
    return submissions


def submission_for_user(user: Any, pk: int) -> Submission:
    """The submission `pk` if `user` owns it or may see everyone's (`can_view_all_entries`:
    maintainers and superusers, not staff as such); `Submission.DoesNotExist` otherwise (the page
    then 404s: another person's entry is not even confirmed to exist). The site's pages and the
    API both find entries here."""
    submissions = Submission.objects.select_related("benchmark")
    if not getattr(user, "is_authenticated", False):
        raise Submission.DoesNotExist
    if not can_view_all_entries(user):
        submissions = submissions.filter(owner=user)
    return submissions.get(pk=pk)


@dataclass(frozen=True)
class DeclaredOption:
    """One choice a submission declared beside its file (its plugin's `SubmissionOption`),
    as the status page, the admin and the API say it."""

    key: str
    label: str  # "Box convention"
    value: str  # "norm1000" (the stored value)
    text: str  # the choice's label, or a declaration's statement
    is_declaration: bool = False


def declared_options(submission: Submission) -> list[DeclaredOption]:
    """The submission's declared options in its plugin's order; a value the plugin no longer
    offers is shown as stored, and an option it did not declare is left out."""
    declared = submission.options or {}
    lines = []
    for option in plugin_for(submission.benchmark).submission_options:
        value = declared.get(option.key)
        if not value:
            continue
        if option.kind == "declaration":
            text = option.statement if value in option.values else str(value)
        else:
            text = dict(option.choices).get(value, str(value))
        lines.append(
            DeclaredOption(option.key, option.label, str(value), text, option.kind == "declaration")
        )
    return lines


def group_order(names: Iterable[str], metrics: Iterable[Metric]) -> list[str]:
    """Breakdown groups (datasets, tasks) in the order a reader expects: those a metric is
    about (`Metric.task`, MedSG-Bench's per-task columns) in the board's column order, then
    the rest alphabetically (MedVidBench's source datasets). A stored JSON object keeps no
    key order, so the order is never the store's."""
    names = set(names)
    ordered = []
    for metric in metrics:
        if metric.task in names and metric.task not in ordered:
            ordered.append(metric.task)
    return ordered + sorted(names - set(ordered))


def published_lookalike(
    benchmark: Benchmark, model_name: str, *, exclude_pk: int | None = None
) -> Submission | None:
    """The published entry on `benchmark` (other than `exclude_pk`) whose model name looks the
    same as `model_name`, case aside (the same `confusable_key`), or None. One query on the
    unique index of published skeletons."""
    entries = Submission.objects.filter(
        benchmark=benchmark, publish=True, model_name_skeleton=confusable_key(model_name)
    )
    if exclude_pk is not None:
        entries = entries.exclude(pk=exclude_pk)
    return entries.first()


def published_copy(
    benchmark: Benchmark,
    checksum: str,
    *,
    other_than: Any,
    sources: Iterable[str] | None = None,
    created_before: Any = None,
) -> Submission | None:
    """The earliest published entry on `benchmark` whose predictions file has the sha256
    `checksum` and whose owner is not `other_than` (a user, or its pk), among `sources` (every
    source when None) and created before `created_before` (any time when None), or None. One
    query on the (benchmark, checksum) index."""
    if not checksum:
        return None
    entries = Submission.objects.filter(
        benchmark=benchmark, predictions_sha256=checksum, publish=True
    ).exclude(owner=other_than)
    if sources is not None:
        entries = entries.filter(source__in=list(sources))
    if created_before is not None:
        entries = entries.filter(created_at__lt=created_before)
    return entries.order_by("created_at", "pk").first()


def own_published_copy(
    benchmark: Benchmark, owner: Any, checksum: str, *, other_than: Any = None
) -> Submission | None:
    """`owner`'s earliest published entry on `benchmark` whose predictions file has the sha256
    `checksum` (other than the entry `other_than`, a pk), or None: the same results are listed
    once (issue 32, point 9). One query on the (benchmark, checksum) index."""
    if not checksum or owner is None:
        return None
    entries = Submission.objects.filter(
        benchmark=benchmark, predictions_sha256=checksum, publish=True, owner=owner
    )
    if other_than is not None:
        entries = entries.exclude(pk=other_than)
    return entries.order_by("created_at", "pk").first()


def latest_evaluation(submission: Submission) -> Evaluation | None:
    """The submission's newest run, whatever its state."""
    return submission.evaluations.order_by("-created_at", "-id").first()


# --- ranking inputs (shared by recompute_board and would_be_rank) --------------------------------


def ranking_policy(benchmark: Benchmark) -> RankingPolicy:
    """The benchmark's tie method, rounding, method and order as the pure ranking function
    takes them: the one place a benchmark becomes a `RankingPolicy` (the board, the API's
    per-metric ranks, the would-be rank and the rank intervals all come here). The order is
    passed only to the method that uses it."""
    return RankingPolicy(
        tie_method=str(benchmark.tie_method),
        decimals=benchmark.ranking_decimals,
        method=str(benchmark.ranking_method),
        order=tuple(benchmark.ranking_order) if benchmark.is_lexicographic else (),
    )


def metric_specs(metrics: list[Metric]) -> list[MetricSpec]:
    return [MetricSpec(metric.key, higher_is_better=metric.higher_is_better) for metric in metrics]


def metric_value(value: Any) -> float | None:
    """A stored metric value as a number, or None (missing, pending, or not a finite number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def ranking_entry(key: int, name: str, stored: dict[str, Any], metrics: list[Metric]) -> Entry:
    """One row for `rank_entries`. A pending judge metric is None, so it ranks last."""
    return Entry(
        key=key,
        name=name,
        values={metric.key: metric_value(stored.get(metric.key)) for metric in metrics},
    )


def board_candidates(benchmark: Benchmark) -> list[Evaluation]:
    """The run each published entry of `benchmark` shows: its newest run that has scores
    (scored, judging or complete), with its submission. Entries without one are not listed."""
    runs = (
        Evaluation.objects.filter(
            submission__benchmark=benchmark,
            submission__publish=True,
            status__in=STATES_WITH_SCORES,
        )
        .select_related("submission")
        .order_by("submission_id", "-created_at", "-id")
    )
    newest: dict[int, Evaluation] = {}
    for run in runs:
        newest.setdefault(run.submission_id, run)
    return list(newest.values())


class BoardCandidate(NamedTuple):
    """One published entry as `recompute_board` reads it (issue 16): plain values, and the
    JSON it decodes or copies as the database's own text."""

    run_id: int
    submission_id: int
    status: str
    metrics_json: str  # the run's metrics
    # Its `RunReplicates.intervals` is not empty (it has replicates with intervals).
    has_intervals: bool
    # That JSON (None: no replicates), read only when asked (`with_intervals`): a row keeps
    # the run's intervals by reference, and holds its own only when a rating overlays them.
    intervals_json: str | None
    model_name: str
    team: str  # the team name, else the institution
    verified: bool
    # The run's result's item counts per metric where some metric may have been judged over
    # fewer items than it has (`PartialCounts`); None where none was (or no counts).
    counts_json: str | None


class PartialCounts(Func):
    """A run's item counts (`Evaluation.item_counts`) as JSON text where one of them may say a
    metric was judged over fewer items than it has (`scored` below `total`: a partial judgement
    a maintainer accepted), else NULL. Most runs are whole: on PostgreSQL their counts are
    neither sent nor decoded (a JSON path test on the server, ~0.3 s less at 100,000 runs);
    elsewhere every run's counts are sent and `recompute_board` looks at each. Only ever
    more than the partial ones: the reader decides (`submissions.boards.values.partial_judgements`)."""

    template = "CAST(%(expressions)s AS text)"
    output_field = TextField()

    def as_postgresql(self, compiler, connection, **extra_context):
        return self.as_sql(
            compiler,
            connection,
            template=(
                "CASE WHEN %(expressions)s @? '$.* ? (@.scored < @.total)' "
                "THEN (%(expressions)s)::text END"
            ),
            **extra_context,
        )


def board_candidate_rows(
    benchmark: Benchmark, *, with_intervals: bool = False
) -> list[BoardCandidate]:
    """`board_candidates` as `recompute_board` needs it for a large board: one query of plain
    columns (no model instance), the run's metrics as the database's text (decoded once for
    the whole board), whether it has intervals (their text only `with_intervals`) and only
    the run's item counts (`Evaluation.item_counts`, not the whole result). What the board's rows show of the run and the
    submission as they are (the values, the intervals, the model facts, the date) is not
    read: the rows' view joins it (`BoardEntry`).

    Every scored run of a published entry is read, and each entry's newest (the latest
    `created_at`, then the highest id) is kept here: an entry rarely has more than one, and a
    plain join is the plan PostgreSQL can only get right (choosing the newest in the
    database, by a window or a NOT EXISTS, made it sort the wide rows or, with the
    statistics of a freshly filled table, compare every pair of runs: 4 to 290 s at 100,000
    entries). The creation dates are read only for the entries with several runs, in a
    second query: loading 100,000 of them cost ~0.1 s for the few that decide anything."""
    has_intervals = ExpressionWrapper(
        Q(replicates__intervals__isnull=False) & ~Q(replicates__intervals={}),
        output_field=BooleanField(),
    )
    intervals = (
        Cast("replicates__intervals", TextField())
        if with_intervals
        else Value(None, output_field=TextField())
    )
    runs = (
        Evaluation.objects.filter(
            submission__benchmark=benchmark,
            submission__publish=True,
            status__in=STATES_WITH_SCORES,
        )
        .order_by()
        .annotate(
            metrics_json=Cast("metrics", TextField()),
            has_intervals=has_intervals,
            intervals_json=intervals,
            # The team name, else the institution; whether the entry is verified (its board).
            team=Coalesce(NullIf("submission__team_name", Value("")), "submission__institution"),
            verified=ExpressionWrapper(
                Q(submission__verification_status=VerificationStatus.VERIFIED),
                output_field=BooleanField(),
            ),
            counts_json=PartialCounts("item_counts"),
        )
        # `BoardCandidate`'s fields, in its order.
        .values_list(
            "pk",
            "submission_id",
            "status",
            "metrics_json",
            "has_intervals",
            "intervals_json",
            "submission__model_name",
            "team",
            "verified",
            "counts_json",
        )
    )
    # Read with one `fetchall` (the rows are plain columns, nothing to convert): Django's
    # iteration, a hundred rows at a time, cost a third more at 100,000 rows.
    statement, parameters = runs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(statement, parameters)
        fetched = cursor.fetchall()
    # Each row becomes a `BoardCandidate` by `tuple.__new__` itself (its `_make`, a Python
    # call per row, cost ~0.05 s at 100,000 rows); the query gives its fields in its order.
    candidate = partial(tuple.__new__, BoardCandidate)
    if len(set(map(itemgetter(1), fetched))) == len(fetched):  # one run per entry: the usual
        return list(map(candidate, fetched))
    newest: dict[int, tuple[Any, ...]] = {}
    others: dict[int, tuple[Any, ...]] = {}  # run id -> run, for the entries with several
    for run in fetched:
        kept = newest.setdefault(run[1], run)
        if kept is not run:
            others[kept[0]] = kept
            others[run[0]] = run
    created = Evaluation.objects.filter(pk__in=list(others)).values_list("created_at", "pk")
    for order in sorted(created):  # oldest first, so each entry's newest is set last
        run = others[order[1]]
        newest[run[1]] = run
    return list(map(candidate, newest.values()))


def interval_range(interval: Any, decimals: int) -> str:
    """A stored [low, high] interval as shown beside a value, "0.512\u20130.604" at the
    metric's decimals; "" when there is none (null, or a bound that is not a number)."""
    if not interval:
        return ""
    low, high = (metric_value(bound) for bound in interval)
    if low is None or high is None:
        return ""
    return f"{low:.{decimals}f}\N{EN DASH}{high:.{decimals}f}"


def newest_scored_run(submission: Submission) -> Evaluation | None:
    return (
        submission.evaluations.filter(status__in=STATES_WITH_SCORES)
        .order_by("-created_at", "-id")
        .first()
    )
