"""Issue 16: the placements' indexes cost a 100,000-row recompute's COPY less. The positions
within a board: one partial index of two integers per board rather than one index that holds
the board's name too; a submission's placement: a hash index on PostgreSQL
(`core.fields.EqualityIndex`), rather than the foreign key's B-tree. The rows' view (0027)
reads the placements' table: it is dropped and created again around the change, since SQLite
rebuilds the table to alter the foreign key's column and refuses to while a view reads it."""

import importlib

import django.db.models.deletion
from django.db import migrations, models

import core.fields

board_placements = importlib.import_module("submissions.migrations.0027_board_placements")


class Migration(migrations.Migration):
    dependencies = [
        ("benchmark", "0010_private_store"),
        ("submissions", "0028_evaluation_item_counts"),
    ]

    operations = [
        migrations.RunPython(board_placements.drop_view, board_placements.create_view),
        migrations.RemoveIndex(
            model_name="boardplacement",
            name="boardplacement_position",
        ),
        migrations.AlterField(
            model_name="boardplacement",
            name="submission",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="submissions.submission",
            ),
        ),
        migrations.AddIndex(
            model_name="boardplacement",
            index=models.Index(
                condition=models.Q(("board", "official")),
                fields=["benchmark", "position"],
                name="boardplacement_official",
            ),
        ),
        migrations.AddIndex(
            model_name="boardplacement",
            index=models.Index(
                condition=models.Q(("board", "community")),
                fields=["benchmark", "position"],
                name="boardplacement_community",
            ),
        ),
        migrations.AddIndex(
            model_name="boardplacement",
            index=core.fields.EqualityIndex(fields=["submission"], name="boardplacement_submission"),
        ),
        migrations.RunPython(board_placements.create_view, board_placements.drop_view),
    ]
