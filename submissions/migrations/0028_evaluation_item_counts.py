"""Issue 16: `Evaluation.item_counts`, the result's item counts kept by the database (a stored
generated column), so the board's recompute reads them without decompressing every run's whole
result. The rows' view (0027) reads the runs' table: it is dropped and created again around the
change, since SQLite rebuilds the table to add the column and refuses to while a view reads it."""

import importlib

import django.db.models.fields.json
from django.db import migrations, models

board_placements = importlib.import_module("submissions.migrations.0027_board_placements")


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0027_board_placements"),
    ]

    operations = [
        migrations.RunPython(board_placements.drop_view, board_placements.create_view),
        migrations.AddField(
            model_name="evaluation",
            name="item_counts",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.db.models.fields.json.KeyTransform("counts", "result"),
                output_field=models.JSONField(),
            ),
        ),
        migrations.RunPython(board_placements.create_view, board_placements.drop_view),
    ]
