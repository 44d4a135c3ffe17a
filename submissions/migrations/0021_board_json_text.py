"""Issue 16: a board row's intervals and per-metric ranks as PostgreSQL's `json` (their text)
rather than `jsonb`, which a recompute spent a quarter of its server time parsing
(`core.fields.JSONTextField`, docs/boards.md). jsonb converts to json as an assignment."""

import core.fields
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0020_fill_board_totals_and_ranks"),
    ]

    operations = [
        migrations.AlterField(
            model_name="boardentry",
            name="intervals",
            field=core.fields.JSONTextField(blank=True, default=dict),
        ),
        migrations.AlterField(
            model_name="boardentry",
            name="metric_ranks",
            field=core.fields.JSONTextField(blank=True, default=dict),
        ),
    ]
