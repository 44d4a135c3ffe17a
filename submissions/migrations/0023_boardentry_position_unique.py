"""Issue 16: the board's order held by one unique index, on the positions, instead of a unique
rank and a plain position index: every index cost a 100,000-row recompute ~0.15 s of the
server's time, and the positions are each board's rank order (docs/boards.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('benchmark', '0010_private_store'),
        ('submissions', '0022_boardentry_api_json'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='boardentry',
            name='boardentry_rank_unique',
        ),
        migrations.RemoveIndex(
            model_name='boardentry',
            name='boardentry_position',
        ),
        migrations.AddConstraint(
            model_name='boardentry',
            constraint=models.UniqueConstraint(fields=('benchmark', 'board', 'position'), name='boardentry_position_unique'),
        ),
    ]
