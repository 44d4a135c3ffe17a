"""Issue 32: each board's first row's rank, kept with its totals (the board page names the
other board's entries ranked above it). Filled here from the placements the last recompute
wrote, so a board shows it before its next recompute. The rows' view (0027) reads the totals'
table: it is dropped and created again around the change, as in 0028 (SQLite rebuilds the table
to add the column, and refuses to while a view reads it)."""

import importlib

from django.db import migrations, models
from django.db.models import Min

board_placements = importlib.import_module("submissions.migrations.0027_board_placements")


def fill_first_ranks(apps, schema_editor):
    BoardTotals = apps.get_model("submissions", "BoardTotals")
    BoardPlacement = apps.get_model("submissions", "BoardPlacement")
    firsts = {
        (row["benchmark_id"], row["board"]): row["first"]
        for row in BoardPlacement.objects.values("benchmark_id", "board")
        .annotate(first=Min("rank"))
        .order_by()
    }
    for totals in BoardTotals.objects.all():
        first = firsts.get((totals.benchmark_id, totals.board))
        if first and first != totals.first_rank:
            totals.first_rank = first
            totals.save(update_fields=["first_rank"])


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0030_board_orders"),
    ]

    operations = [
        migrations.RunPython(board_placements.drop_view, board_placements.create_view),
        migrations.AddField(
            model_name="boardtotals",
            name="first_rank",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.RunPython(fill_first_ranks, migrations.RunPython.noop),
        migrations.RunPython(board_placements.create_view, board_placements.drop_view),
    ]
