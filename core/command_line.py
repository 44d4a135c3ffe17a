"""Running a management command that needs no app: settings and logging, not django.setup().

`manage.py score` reads two files and prints numbers: it touches no model, no database and no
URL. `django.setup()` would still import every installed app's models and run every app's
`ready()` (allauth's loads its provider registry with `requests`): ~0.2 s of a ~1 s process
(docs/performance.md). manage.py sends the commands it names in `COMMANDS_WITHOUT_APPS` here.

Such a command's module, and everything its handle() imports, must not need the app registry:
`tests/judging/test_score_startup.py` runs the command in a fresh process and fails if an app's
models are imported (the registry would raise AppRegistryNotReady anyway: a loud failure, not
a silent one). Its options, help, output and exit statuses are Django's own: the command class
runs through `BaseCommand.run_from_argv`, as `execute_from_command_line` would run it.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os


def run_without_apps(module: str, argv: list[str]) -> None:
    """Run `module`'s Command with argv (sys.argv: script, command name, arguments), the
    settings and logging configured, the apps not loaded."""
    from django.conf import settings
    from django.core.management.base import CommandError, CommandParser, handle_default_options
    from django.utils.module_loading import import_string

    # As ManagementUtility.execute: --settings and --pythonpath before the settings are read.
    parser = CommandParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--settings")
    parser.add_argument("--pythonpath")
    with contextlib.suppress(CommandError):  # the command's own parser reports it
        handle_default_options(parser.parse_known_args(argv[2:])[0])
    # Not django.utils.log.configure_logging: it first installs Django's DEFAULT_LOGGING, whose
    # mail handler imports django.views, django.http and the ORM (~65 ms), for loggers that
    # this project's LOGGING (config/settings/base.py) then takes over. The rest is the same.
    logging.captureWarnings(True)
    if settings.LOGGING_CONFIG and settings.LOGGING:
        import_string(settings.LOGGING_CONFIG)(settings.LOGGING)
    command = importlib.import_module(module).Command()
    # As ManagementUtility.execute: the prog name is the script's, e.g. "manage.py score".
    command.run_from_argv([os.path.basename(argv[0]), *argv[1:]])
