from django.apps import AppConfig


class VerifyingConfig(AppConfig):
    """Verifying an entry by re-running the model through its own API (docs/verification.md)."""

    name = "verifying"
    verbose_name = "Verification re-runs"
