"""config/admin_app.py: the admin's ModelAdmins are discovered by the URLconf and by the admin's
system check, not when the apps load."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.admin.sites import AdminSite

from accounts.models import User
from config.admin_app import check_discovered_admin

pytestmark = pytest.mark.unit

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# A fresh process: what is registered after django.setup(), after the admin's checks, and which
# checks report errors. Run without the URLconf, which would discover the admins itself.
FRESH_PROCESS = """
import django
django.setup()
from django.contrib import admin
from django.core.checks import run_checks
from submissions.models import Submission
before = len(admin.site._registry)
errors = run_checks(tags=["admin"])
print(before, Submission in admin.site._registry, len(errors))
"""


def test_the_apps_load_without_the_admins_and_the_admin_check_discovers_them():
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"DJANGO_SETTINGS_MODULE": "config.settings.test", "PATH": ""},
    )
    assert done.stdout.split() == ["0", "True", "0"]


class BrokenUserAdmin(admin.ModelAdmin):
    list_display = ("no_such_field",)


def test_the_admin_check_reports_a_broken_model_admin():
    site = AdminSite(name="broken_for_the_test")
    site.register(User, BrokenUserAdmin)
    errors = check_discovered_admin(None)
    site.unregister(User)
    assert [error.id for error in errors] == ["admin.E108"]
