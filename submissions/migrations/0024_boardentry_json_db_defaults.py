"""Issue 16: `{}` as the database default of the board rows' five small JSON columns, so a recompute
whose rows all leave one empty does not write it (docs/boards.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('submissions', '0023_boardentry_position_unique'),
    ]

    operations = [
        migrations.AlterField(
            model_name='boardentry',
            name='category_ranks',
            field=models.JSONField(blank=True, db_default={}, default=dict),
        ),
        migrations.AlterField(
            model_name='boardentry',
            name='highlights',
            field=models.JSONField(db_default={}, default=dict),
        ),
        migrations.AlterField(
            model_name='boardentry',
            name='judged_over',
            field=models.JSONField(blank=True, db_default={}, default=dict),
        ),
        migrations.AlterField(
            model_name='boardentry',
            name='model_facts',
            field=models.JSONField(blank=True, db_default={}, default=dict),
        ),
        migrations.AlterField(
            model_name='boardentry',
            name='rating_battles',
            field=models.JSONField(blank=True, db_default={}, default=dict),
        ),
    ]
