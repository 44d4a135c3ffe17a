"""Issue 32: the metrics each board has a value in (`BoardTotals.filled_metrics`), so its page
hides the empty columns. The rows' view (0027) is dropped and created again around the change,
as in 0028 (SQLite rebuilds the table to add the column, and refuses to while a view reads
it)."""

import importlib

from django.db import migrations, models

board_placements = importlib.import_module("submissions.migrations.0027_board_placements")


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0031_board_totals_first_rank"),
    ]

    operations = [
        migrations.RunPython(board_placements.drop_view, board_placements.create_view),
        migrations.AddField(
            model_name="boardtotals",
            name="filled_metrics",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
        migrations.RunPython(board_placements.create_view, board_placements.drop_view),
    ]
