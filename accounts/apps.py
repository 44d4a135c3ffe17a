from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Importing the module registers its system checks.
        from accounts import checks  # noqa: F401
