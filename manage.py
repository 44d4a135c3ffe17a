#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import atexit
import gc
import os
import sys

# Commands that read files and touch no model, database or URL: they run without
# django.setup(), which would import every app's models and run their ready() hooks
# (core/command_line.py; tests/judging/test_score_startup.py keeps it so).
COMMANDS_WITHOUT_APPS = {"score": "judging.management.commands.score"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    # One BLAS thread, as the NAP encoder uses anyway (its only user): with more, OpenBLAS
    # starts a worker thread when numpy is imported, which spins ~50 ms of CPU in every process
    # (docs/performance.md). Read when numpy loads OpenBLAS, so set before anything imports it.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # At exit the interpreter's last garbage collection traverses every object of the process
    # (a million after Django's set-up and a loaded test set): 0.1-0.15 s of `manage.py score`,
    # to free memory the system takes back anyway. Frozen objects are not traversed; everything
    # not in a reference cycle is still freed and finalised as usual. Registered first, so it
    # runs after every other exit handler (logging's shutdown among them). docs/performance.md.
    atexit.register(gc.freeze)
    if len(sys.argv) > 1 and sys.argv[1] in COMMANDS_WITHOUT_APPS:
        from core.command_line import run_without_apps

        run_without_apps(COMMANDS_WITHOUT_APPS[sys.argv[1]], sys.argv)
        return
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
