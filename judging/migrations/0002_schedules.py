"""The periodic jobs the worker cluster runs: the reapers that hand out again (or fail) work
whose worker died, for scoring runs and for judge jobs."""

from django.db import migrations

SCHEDULES = [
    ("reap stalled judge jobs", "judging.tasks.task_reap_judge_jobs", 1),
    ("reap stalled scoring runs", "submissions.tasks.task_reap_stale_evaluations", 5),
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
        ("judging", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create, remove)]
