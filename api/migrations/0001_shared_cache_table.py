"""The table of the `shared` cache (the API's throttle counts), created by `migrate` so that no
deployment can forget `createcachetable`. Idempotent: an existing table is left alone, and
nothing is created when the shared cache is Redis."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = []

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
