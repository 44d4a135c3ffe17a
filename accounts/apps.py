from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Importing the module registers its system checks.
        from accounts import checks  # noqa: F401
        from core.admin_access import entry_viewer_check
        from core.hooks import lazy

        # The entry admins (core's audit trail among them) ask the role (core/admin_access.py).
        entry_viewer_check.set(lazy("accounts.roles.can_view_all_entries"))
