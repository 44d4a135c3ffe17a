from django.db import migrations, models


def date_imported_rows(apps, schema_editor):
    """An imported row's published date is the date its board verified it (its import's
    verified_at), which until now also stood in for the board's date column."""
    Submission = apps.get_model("submissions", "Submission")
    for submission in Submission.objects.filter(source="imported", verified_at__isnull=False):
        submission.published_at = submission.verified_at
        submission.save(update_fields=["published_at"])


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0005_notifications"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="published_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(date_imported_rows, migrations.RunPython.noop),
    ]
