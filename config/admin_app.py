"""Django's admin without discovering the ModelAdmins at start-up (docs/performance.md).

Django's default `AdminConfig.ready()` imports every app's `admin` module when the app
registry loads. Ours import the services and, through them, most of the platform (the judge,
the boards, the intervals): ~0.25 s of every process's start-up, paid by `manage.py score`
and every other command that never shows an admin page. Here the registry is filled when it is
first needed instead: by `admin.autodiscover()` in config/urls.py (every admin page is reached
through the URLconf) and by the admin's system check below, so `manage.py check` still checks
every ModelAdmin. This is Django's documented `SimpleAdminConfig` arrangement.
"""

from django.contrib import admin
from django.contrib.admin.apps import SimpleAdminConfig
from django.contrib.admin.checks import check_admin_app, check_dependencies
from django.core import checks


class AdminConfig(SimpleAdminConfig):
    def ready(self) -> None:
        # SimpleAdminConfig.ready() registers these two checks; the second is replaced by one
        # that discovers the ModelAdmins first (check order is not defined, so the URL check,
        # which also discovers them, may come later).
        checks.register(check_dependencies, checks.Tags.admin)
        checks.register(check_discovered_admin, checks.Tags.admin)


def check_discovered_admin(app_configs, **kwargs):
    """Django's admin check, run over every app's ModelAdmins."""
    admin.autodiscover()
    return check_admin_app(app_configs, **kwargs)
