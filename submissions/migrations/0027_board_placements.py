"""Issue 16: the board's rows become placements (`BoardPlacement`, the table the recompute
writes) and a view of them (`BoardEntry`, `submissions_boardentry`) joined to their runs and
submissions for the values, intervals, model facts and date shown (docs/boards.md,
"Placements and the rows' view").

The existing rows are copied as placements with their values and intervals as their own, so
every board reads as it did until its next recompute writes it narrow."""

import core.fields
import django.db.models.deletion
from django.db import migrations, models

# The columns a placement shares with the old rows, copied as they are.
SHARED = (
    "board", "rank", "mean_rank", "wins", "highlights", "judge_pending", "judged_over",
    "rank_best", "rank_worst", "tier", "model_key", "team_key",
    "category_ranks", "rating_battles", "metric_ranks", "rank_sum", "normalized_sum",
    "position", "overall_position", "api_head", "api_tail", "benchmark_id", "evaluation_id",
    "submission_id",
)  # fmt: skip


def copy_rows(apps, schema_editor):
    """The old rows as placements, each with its values and intervals as its own, and its
    per-metric ranks as the list in the order of its board's keys (`BoardTotals.metric_keys`,
    a recompute writes every row's in one order)."""
    quote = schema_editor.connection.ops.quote_name
    shared = ", ".join(quote(column) for column in SHARED)
    schema_editor.execute(
        f"INSERT INTO submissions_boardplacement ({shared}, own_values, own_intervals) "
        f'SELECT {shared}, "values", intervals FROM submissions_boardentry'
    )
    placements = apps.get_model("submissions", "BoardPlacement")
    totals = apps.get_model("submissions", "BoardTotals")
    changed = []
    keys_of: dict[tuple[int, str], list[str]] = {}
    for placement in placements.objects.only("benchmark_id", "board", "metric_ranks").iterator():
        ranks = placement.metric_ranks if isinstance(placement.metric_ranks, dict) else {}
        keys_of.setdefault((placement.benchmark_id, placement.board), list(ranks))
        placement.metric_ranks = list(ranks.values())
        changed.append(placement)
    placements.objects.bulk_update(changed, ["metric_ranks"], batch_size=2000)
    for (benchmark_id, board), keys in keys_of.items():
        totals.objects.filter(benchmark_id=benchmark_id, board=board).update(metric_keys=keys)


def view_sql(vendor: str) -> str:
    """The rows' view: each placement with its run's values and intervals (its own where
    it has them), its submission's model facts (`{}` for none), and the date shown (the
    published date of a result produced elsewhere, else the verification date of a
    verified entry, else the run's scoring date, else its creation), and the metric of
    each of its per-metric ranks (its board's totals). Outer joins to unique keys, so a query that reads none
    of the joined columns (a count, the positions) reads the placements alone."""
    if vendor == "postgresql":
        intervals = "COALESCE(p.own_intervals, r.intervals::json, '{}'::json)"
        facts = "COALESCE(NULLIF(s.model_facts, 'null'::jsonb), '{}'::jsonb)"
    else:
        intervals = "COALESCE(p.own_intervals, r.intervals, '{}')"
        facts = "COALESCE(NULLIF(s.model_facts, 'null'), '{}')"
    shared = ", ".join(f'p."{column}"' for column in ("id", *SHARED))
    return f"""
        CREATE VIEW submissions_boardentry AS
        SELECT {shared},
            COALESCE(p.own_values, e.metrics) AS "values",
            {intervals} AS intervals,
            {facts} AS model_facts,
            COALESCE(
                s.published_at,
                CASE WHEN s.verification_status = 'verified' THEN s.verified_at END,
                e.scored_at,
                e.created_at
            ) AS listed_at,
            t.metric_keys,
            t.computed_at
        FROM submissions_boardplacement p
        LEFT JOIN submissions_evaluation e ON e.id = p.evaluation_id
        LEFT JOIN submissions_submission s ON s.id = p.submission_id
        LEFT JOIN submissions_runreplicates r ON r.evaluation_id = p.evaluation_id
        LEFT JOIN submissions_boardtotals t
            ON t.benchmark_id = p.benchmark_id AND t.board = p.board
    """


def create_view(apps, schema_editor):
    schema_editor.execute(view_sql(schema_editor.connection.vendor))


def drop_view(apps, schema_editor):
    schema_editor.execute("DROP VIEW IF EXISTS submissions_boardentry")


class Migration(migrations.Migration):
    dependencies = [
        ("benchmark", "0010_private_store"),
        ("submissions", "0026_evaluation_sent_at"),
    ]

    operations = [
        migrations.CreateModel(
            name="BoardPlacement",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "board",
                    models.CharField(
                        choices=[("official", "Official"), ("community", "Community")],
                        max_length=10,
                    ),
                ),
                ("rank", models.PositiveIntegerField()),
                ("mean_rank", models.FloatField()),
                ("wins", models.PositiveSmallIntegerField()),
                ("highlights", models.JSONField(db_default={}, default=dict)),
                ("judge_pending", models.BooleanField(default=False)),
                ("judged_over", models.JSONField(blank=True, db_default={}, default=dict)),
                ("rank_best", models.PositiveIntegerField(blank=True, null=True)),
                ("rank_worst", models.PositiveIntegerField(blank=True, null=True)),
                ("tier", models.PositiveIntegerField(blank=True, null=True)),
                ("model_key", models.CharField(blank=True, default="", max_length=400)),
                ("team_key", models.CharField(blank=True, default="", max_length=800)),
                ("category_ranks", models.JSONField(blank=True, db_default={}, default=dict)),
                ("rating_battles", models.JSONField(blank=True, db_default={}, default=dict)),
                ("metric_ranks", core.fields.JSONTextField(blank=True, default=list)),
                ("rank_sum", models.PositiveIntegerField(default=0)),
                ("normalized_sum", models.FloatField(default=0.0)),
                ("position", models.PositiveIntegerField(default=0)),
                ("overall_position", models.PositiveIntegerField(default=0)),
                ("api_head", models.TextField(blank=True, db_default="")),
                ("api_tail", models.TextField(blank=True, db_default="")),
                ("own_values", models.JSONField(blank=True, null=True)),
                ("own_intervals", core.fields.JSONTextField(blank=True, null=True)),
                (
                    "benchmark",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="board_placements",
                        to="benchmark.benchmark",
                    ),
                ),
                (
                    "evaluation",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="submissions.evaluation",
                    ),
                ),
                (
                    "submission",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="submissions.submission",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["benchmark", "board", "position"], name="boardplacement_position"
                    ),
                    models.Index(
                        fields=["benchmark", "overall_position"], name="boardplacement_overall"
                    ),
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("board__in", ["official", "community"])),
                        name="boardplacement_board_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("rank__gte", 1)), name="boardplacement_rank_gte_1"
                    ),
                ],
            },
        ),
        migrations.AddField(
            model_name="boardtotals",
            name="metric_keys",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(copy_rows, migrations.RunPython.noop),
        migrations.DeleteModel(name="BoardEntry"),
        migrations.CreateModel(
            name="BoardEntry",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "board",
                    models.CharField(
                        choices=[("official", "Official"), ("community", "Community")],
                        max_length=10,
                    ),
                ),
                ("rank", models.PositiveIntegerField()),
                ("mean_rank", models.FloatField()),
                ("wins", models.PositiveSmallIntegerField()),
                ("highlights", models.JSONField(db_default={}, default=dict)),
                ("judge_pending", models.BooleanField(default=False)),
                ("judged_over", models.JSONField(blank=True, db_default={}, default=dict)),
                ("rank_best", models.PositiveIntegerField(blank=True, null=True)),
                ("rank_worst", models.PositiveIntegerField(blank=True, null=True)),
                ("tier", models.PositiveIntegerField(blank=True, null=True)),
                ("computed_at", models.DateTimeField()),
                ("model_key", models.CharField(blank=True, default="", max_length=400)),
                ("team_key", models.CharField(blank=True, default="", max_length=800)),
                ("category_ranks", models.JSONField(blank=True, db_default={}, default=dict)),
                ("rating_battles", models.JSONField(blank=True, db_default={}, default=dict)),
                ("metric_ranks", core.fields.JSONTextField(blank=True, default=list)),
                ("metric_keys", models.JSONField(blank=True, default=list)),
                ("rank_sum", models.PositiveIntegerField(default=0)),
                ("normalized_sum", models.FloatField(default=0.0)),
                ("position", models.PositiveIntegerField(default=0)),
                ("overall_position", models.PositiveIntegerField(default=0)),
                ("api_head", models.TextField(blank=True, db_default="")),
                ("api_tail", models.TextField(blank=True, db_default="")),
                ("values", models.JSONField(default=dict)),
                ("intervals", core.fields.JSONTextField(blank=True, default=dict)),
                ("listed_at", models.DateTimeField()),
                ("model_facts", models.JSONField(blank=True, default=dict)),
                (
                    "benchmark",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="board_entries",
                        to="benchmark.benchmark",
                    ),
                ),
                (
                    "evaluation",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="submissions.evaluation",
                    ),
                ),
                (
                    "submission",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="board_entry",
                        to="submissions.submission",
                    ),
                ),
            ],
            options={
                "db_table": "submissions_boardentry",
                "ordering": ["benchmark", "board", "rank"],
                "managed": False,
            },
        ),
        migrations.RunPython(create_view, drop_view),
    ]
