"""The periodic job the worker cluster runs: the reaper that hands out again (or fails) hosted
evaluations whose worker died, and queues again those whose task was lost."""

from django.db import migrations

SCHEDULES = [
    ("reap stalled hosted evaluations", "hosting.tasks.task_reap_hosted_requests", 1),
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
        ("hosting", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create, remove)]
