"""The periodic job the worker cluster runs: the reaper that hands out again (or fails)
re-runs whose worker died."""

from django.db import migrations

SCHEDULES = [
    ("reap stalled re-runs", "verifying.tasks.task_reap_rerun_jobs", 1),
]


def create(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    for name, func, minutes in SCHEDULES:
        Schedule.objects.update_or_create(
            name=name,
            defaults={"func": func, "schedule_type": "I", "minutes": minutes, "repeats": -1},
        )


def remove(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.filter(name__in=[name for name, _, _ in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("verifying", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create, remove)]
