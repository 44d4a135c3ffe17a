"""The periodic job the worker cluster runs (the reaper that hands out again, or fails, battle
jobs whose worker died) and the maintainers' read access to battle jobs and battles (they
rerun and cancel them with the judge's `judging.rerun_judgejob`). Written by hand, like
accounts' 0003: the permissions are named here, not read from `accounts.roles`, so the
migration keeps its meaning; they are created first (post_migrate would be too late)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

SCHEDULES = [
    ("reap stalled battle jobs", "arena.tasks.task_reap_battle_jobs", 1),
]
GROUP = "Maintainers"
PERMISSIONS = [("arena", "view_battlejob"), ("arena", "view_battle")]


def create(apps, schema_editor):
    database = schema_editor.connection.alias
    Schedule = apps.get_model("django_q", "Schedule")
    for name, func, minutes in SCHEDULES:
        Schedule.objects.using(database).update_or_create(
            name=name,
            defaults={"func": func, "schedule_type": "I", "minutes": minutes, "repeats": -1},
        )
    app_config = apps.get_app_config("arena")
    # Historical app configs have no models module; create_permissions skips those.
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0, using=database)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.using(database).filter(name=GROUP).first()
    if group is None:
        return
    for app_label, codename in PERMISSIONS:
        group.permissions.add(
            *Permission.objects.using(database).filter(
                content_type__app_label=app_label, codename=codename
            )
        )


def remove(apps, schema_editor):
    database = schema_editor.connection.alias
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.using(database).filter(name__in=[name for name, _, _ in SCHEDULES]).delete()
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.using(database).filter(name=GROUP).first()
    if group is None:
        return
    for app_label, codename in PERMISSIONS:
        group.permissions.remove(
            *Permission.objects.using(database).filter(
                content_type__app_label=app_label, codename=codename
            )
        )


class Migration(migrations.Migration):
    dependencies = [
        ("arena", "0001_initial"),
        ("accounts", "0004_maintainers_without_judge_endpoints"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create, remove)]
