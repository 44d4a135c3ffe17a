from django.apps import AppConfig


class VerifyingConfig(AppConfig):
    """Verifying an entry by re-running the model through its own API (docs/verification.md)."""

    name = "verifying"
    verbose_name = "Verification re-runs"

    def ready(self) -> None:
        # The verification writer (in `submissions`, below this app) asks this app for an
        # uploaded entry's evidence: a hook, since `submissions` never imports `verifying`.
        from submissions.services import set_rerun_evidence_check

        from .evidence import rerun_evidence

        set_rerun_evidence_check(rerun_evidence)
