"""Issue 32: whether some row of a board names a team (`BoardTotals.has_teams`), so its page
hides the Team column when none does. True until the next recompute (the column shown, as
before). The rows' view (0027) is dropped and created again around the change, as in 0028."""

import importlib

from django.db import migrations, models

board_placements = importlib.import_module("submissions.migrations.0027_board_placements")


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0032_board_totals_filled_metrics"),
    ]

    operations = [
        migrations.RunPython(board_placements.drop_view, board_placements.create_view),
        migrations.AddField(
            model_name="boardtotals",
            name="has_teams",
            field=models.BooleanField(default=True),
        ),
        migrations.RunPython(board_placements.create_view, board_placements.drop_view),
    ]
