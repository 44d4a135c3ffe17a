"""The boards already on the database get what the next recompute would store (issue 16): each
board's totals, each row's positions in rank order, and its per-metric ranks and tiebreak values, ranked again from the
row's values as `recompute_board` ranks them (the benchmark's policy and scope, through the
pure `rank_entries`). Without it the rankings API would show no per-metric ranks until each
board was recomputed."""

import math

from django.db import migrations
from django.db.models import Count, Max, Q


def _clean(value):
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def fill(apps, schema_editor):
    # Imported here: a migration reads the pure ranking as it is when the migration runs.
    from benchmark.scoring.ranking import Entry, MetricSpec, RankingPolicy, rank_entries

    Benchmark = apps.get_model("benchmark", "Benchmark")
    BoardEntry = apps.get_model("submissions", "BoardEntry")
    BoardTotals = apps.get_model("submissions", "BoardTotals")
    for benchmark in Benchmark.objects.filter(board_entries__isnull=False).distinct():
        rows = list(BoardEntry.objects.filter(benchmark=benchmark).select_related("submission"))
        metrics = list(benchmark.metrics.all())
        if metrics:
            lexicographic = benchmark.ranking_method == "lexicographic"
            policy = RankingPolicy(
                tie_method=benchmark.tie_method,
                decimals=benchmark.ranking_decimals,
                method=benchmark.ranking_method,
                order=tuple(benchmark.ranking_order) if lexicographic else (),
            )
            # The historical model has no `higher_is_better` property: its field.
            specs = [MetricSpec(metric.key, metric.direction == "higher") for metric in metrics]
            groups = [rows]
            if benchmark.ranking_scope == "per_board":
                groups = [[row for row in rows if row.board == board] for board in ("official", "community")]
            for group in filter(None, groups):
                by_key = {row.submission_id: row for row in group}
                entries = [
                    Entry(row.submission_id, row.submission.model_name,
                          {metric.key: _clean(row.values.get(metric.key)) for metric in metrics})
                    for row in group
                ]
                for place in rank_entries(entries, specs, policy):
                    row = by_key[place.key]
                    row.metric_ranks = dict(place.metric_ranks)
                    row.rank_sum = place.rank_sum
                    row.normalized_sum = place.normalized_sum
                    row.save(update_fields=["metric_ranks", "rank_sum", "normalized_sum"])
        # The positions: each board's rank order, and both boards' by rank then submission.
        for position, row in enumerate(sorted(rows, key=lambda row: (row.rank, row.submission_id)), 1):
            row.overall_position = position
        for board in ("official", "community"):
            on_board = sorted((row for row in rows if row.board == board), key=lambda row: row.rank)
            for position, row in enumerate(on_board, 1):
                row.position = position
        BoardEntry.objects.bulk_update(rows, ["position", "overall_position"], batch_size=1000)
        totals = (
            BoardEntry.objects.filter(benchmark=benchmark)
            .values("board")
            .annotate(
                entries=Count("id"),
                with_intervals=Count("id", filter=~Q(intervals={})),
                with_rank_intervals=Count("id", filter=Q(rank_best__isnull=False)),
                with_tiers=Count("id", filter=Q(tier__isnull=False)),
                computed_at=Max("computed_at"),
            )
            .order_by()
        )
        BoardTotals.objects.bulk_create(
            [BoardTotals(benchmark=benchmark, **board) for board in totals]
        )


class Migration(migrations.Migration):

    dependencies = [
        ('submissions', '0019_board_totals_and_stored_ranks'),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
