"""Migration 0027 (issue 16): the board rows already on a database become placements, and read
through the rows' view as they did (their values and intervals kept as their own, their
per-metric ranks as the list in their board's key order), until the next recompute writes
them narrow."""

import pytest
from django.utils import timezone

from benchmark.services import ensure_plugin_benchmark
from submissions import services
from submissions.enums import EvaluationStatus
from submissions.models import BoardEntry, BoardPlacement, BoardTotals, RunReplicates
from tests.migrating import migrate, migrate_to_latest

from .factories import EvaluationFactory, SubmissionFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

BEFORE = [("submissions", "0026_evaluation_sent_at")]
AFTER = [("submissions", "0027_board_placements")]


def test_the_rows_on_the_database_read_the_same_through_the_view():
    benchmark = ensure_plugin_benchmark("medvidbench")
    now = timezone.now()
    plain = SubmissionFactory(benchmark=benchmark, publish=True, model_facts={"type": "open"})
    rated = SubmissionFactory(benchmark=benchmark, publish=True)
    runs = {
        submission.pk: EvaluationFactory(
            submission=submission,
            status=EvaluationStatus.COMPLETE,
            metrics={"CVS_acc": 0.5, "SA_acc": 0.25},
            scored_at=now,
        )
        for submission in (plain, rated)
    }
    RunReplicates.objects.create(
        evaluation=runs[plain.pk],
        test_set_checksum="0" * 64,
        replicates=200,
        contributions=b"",
        values=b"",
        metric_keys=["CVS_acc", "SA_acc"],
        intervals={"CVS_acc": [0.4, 0.6], "SA_acc": None},
        computed_at=now,
    )
    old = migrate(BEFORE)
    rows, totals = (
        old.get_model("submissions", "BoardEntry"),
        old.get_model("submissions", "BoardTotals"),
    )
    written = {}
    for position, (submission, values, intervals) in enumerate(
        [
            (plain, {"CVS_acc": 0.5, "SA_acc": 0.25}, {"CVS_acc": [0.4, 0.6], "SA_acc": None}),
            # A rating overlaid on the run's values and intervals: not the run's.
            (rated, {"CVS_acc": 0.5, "SA_acc": 1234.5}, {"SA_acc": [1200.0, 1300.0]}),
        ],
        start=1,
    ):
        written[submission.pk] = rows.objects.create(
            benchmark_id=benchmark.pk,
            submission_id=submission.pk,
            evaluation_id=runs[submission.pk].pk,
            board="community",
            rank=position,
            mean_rank=float(position),
            wins=2 - position,
            values=values,
            intervals=intervals,
            listed_at=now,
            computed_at=now,
            metric_ranks={"SA_acc": position, "CVS_acc": 3 - position},
            position=position,
            overall_position=position,
        ).pk
    totals.objects.create(
        benchmark_id=benchmark.pk, board="community", entries=2, with_intervals=2, computed_at=now
    )
    try:
        migrate(AFTER)
    finally:
        migrate_to_latest()

    shown = {
        row.submission_id: (row.values, row.intervals, row.model_facts, row.rank)
        for row in BoardEntry.objects.all()
    }
    assert shown == {
        plain.pk: (
            {"CVS_acc": 0.5, "SA_acc": 0.25},
            {"CVS_acc": [0.4, 0.6], "SA_acc": None},
            {"type": "open"},
            1,
        ),
        rated.pk: ({"CVS_acc": 0.5, "SA_acc": 1234.5}, {"SA_acc": [1200.0, 1300.0]}, {}, 2),
    }
    ranks = {
        row.submission_id: dict(zip(row.metric_keys, row.metric_ranks, strict=True))
        for row in BoardEntry.objects.all()
    }
    assert ranks == {plain.pk: {"SA_acc": 1, "CVS_acc": 2}, rated.pk: {"SA_acc": 2, "CVS_acc": 1}}
    assert BoardTotals.objects.get().metric_keys == ["SA_acc", "CVS_acc"]
    assert sorted(BoardPlacement.objects.values_list("metric_ranks", flat=True)) == [[1, 2], [2, 1]]

    # The next recompute writes them narrow: the run's own values and intervals are not copied.
    services.recompute_board(benchmark)
    assert list(BoardPlacement.objects.values_list("own_values", "own_intervals")) == [
        (None, None),
        (None, None),
    ]
    assert BoardEntry.objects.get(submission=plain).intervals == {
        "CVS_acc": [0.4, 0.6],
        "SA_acc": None,
    }
