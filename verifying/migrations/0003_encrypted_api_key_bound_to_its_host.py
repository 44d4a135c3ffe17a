"""A model endpoint's API key is entered, stored encrypted and bound to its host, instead of
naming an environment variable of the server (issue 10, point 3: any variable could be named,
SECRET_KEY included, and was sent to a URL the registering maintainer chose).

An endpoint that named a variable keeps its row but no key: it is flagged `api_key_needed`, so
a re-run is refused until the entry's owner (or a superuser) enters the key. The key is never
copied from the environment into the database. Reversing restores an empty `api_key_env`.
"""

from django.db import migrations, models


def flag_environment_references(apps, schema_editor):
    ModelEndpoint = apps.get_model("verifying", "ModelEndpoint")
    ModelEndpoint.objects.using(schema_editor.connection.alias).exclude(api_key_env="").update(
        api_key_needed=True
    )


class Migration(migrations.Migration):

    dependencies = [
        ('verifying', '0002_schedules'),
    ]

    operations = [
        migrations.AddField(
            model_name='modelendpoint',
            name='api_key_encrypted',
            field=models.TextField(blank=True, editable=False, help_text='The API key as a Fernet token; never the key.'),
        ),
        migrations.AddField(
            model_name='modelendpoint',
            name='api_key_needed',
            field=models.BooleanField(default=False, editable=False, help_text='The endpoint wants an API key (set when one is entered).'),
        ),
        migrations.AddField(
            model_name='modelendpoint',
            name='api_key_origin',
            field=models.CharField(blank=True, editable=False, help_text='scheme://host:port the key was entered for; it is sent nowhere else.', max_length=300),
        ),
        migrations.AddField(
            model_name='modelendpoint',
            name='api_key_set_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(flag_environment_references, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='modelendpoint',
            name='api_key_env',
        ),
    ]
