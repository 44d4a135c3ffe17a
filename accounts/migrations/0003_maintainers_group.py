"""The Maintainers group with exactly the permissions a maintainer needs (accounts/roles.py).

Written by hand. The permission list is a frozen copy of `accounts.roles.MAINTAINER_PERMISSIONS`
as of this migration (a migration must not change meaning when that module does); a test keeps
the two equal, so changing the role takes a new data migration like this one.

Permissions are normally created after `migrate` (the post_migrate signal), too late for this
migration on a fresh database, so they are created here first, for every app, from the
historical models (the usual pattern; `create_permissions` skips the ones that exist).
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "Maintainers"
PERMISSIONS = [
    "submissions.view_submission",
    "submissions.view_evaluation",
    "submissions.view_boardentry",
    "core.view_auditevent",
    "judging.view_judgejob",
    "judging.view_judgeendpoint",
    "judging.view_verdict",
    "submissions.change_submission",
    "submissions.verify_submission",
    "submissions.rerun_evaluation",
    "judging.rerun_judgejob",
]


def create_maintainers_group(apps, schema_editor):
    database = schema_editor.connection.alias
    for app_config in apps.get_app_configs():
        # Historical app configs have no models module; create_permissions skips those.
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0, using=database)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.using(database).get_or_create(name=GROUP)
    permissions = []
    for name in PERMISSIONS:
        app_label, codename = name.split(".")
        permissions.append(
            Permission.objects.using(database).get(
                content_type__app_label=app_label, codename=codename
            )
        )
    group.permissions.set(permissions)


def remove_maintainers_group(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.using(schema_editor.connection.alias).filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_api_tokens"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("core", "0001_initial"),
        ("benchmark", "0002_judge_settings"),
        ("submissions", "0004_maintainer_permissions"),
        ("judging", "0002_schedules"),
    ]

    operations = [
        migrations.RunPython(create_maintainers_group, remove_maintainers_group),
    ]
