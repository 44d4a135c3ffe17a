"""The Maintainers group loses `judging.view_judgeendpoint` (issue 10, point 3): a judge
endpoint names the environment variable its key is read from, and its admin says which are
set, so only superusers see judge endpoints. Written by hand, like 0003; the permission is
named here, not read from `accounts.roles`, so the migration keeps its meaning."""

from django.db import migrations

GROUP = "Maintainers"
REMOVED = [("judging", "view_judgeendpoint")]


def remove_permissions(apps, schema_editor):
    database = schema_editor.connection.alias
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.using(database).filter(name=GROUP).first()
    if group is None:
        return
    for app_label, codename in REMOVED:
        group.permissions.remove(
            *Permission.objects.using(database).filter(
                content_type__app_label=app_label, codename=codename
            )
        )


def restore_permissions(apps, schema_editor):
    database = schema_editor.connection.alias
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.using(database).filter(name=GROUP).first()
    if group is None:
        return
    for app_label, codename in REMOVED:
        group.permissions.add(
            *Permission.objects.using(database).filter(
                content_type__app_label=app_label, codename=codename
            )
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_maintainers_group"),
    ]

    operations = [
        migrations.RunPython(remove_permissions, restore_permissions),
    ]
