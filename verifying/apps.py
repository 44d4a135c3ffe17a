from django.apps import AppConfig


class VerifyingConfig(AppConfig):
    """Verifying an entry by re-running the model through its own API (docs/verification.md)."""

    name = "verifying"
    verbose_name = "Verification re-runs"

    def ready(self) -> None:
        # Imported here: services import models, which must not load before the app registry.
        # Each is a hook, since `submissions` (below this app) never imports `verifying`.
        from core.workers import add_reaper
        from submissions.demo import add_demo_hook
        from submissions.next_step import add_step_guide
        from submissions.services import set_rerun_evidence_check

        from .demo import on_demo_loaded
        from .evidence import rerun_evidence
        from .services import reap_dead_workers_reruns
        from .steps import rerun_step

        # The verification writer asks this app for an uploaded entry's evidence.
        set_rerun_evidence_check(rerun_evidence)
        # `load_demo` ends with the re-run's part of the demo: frames and the stand-in model.
        add_demo_hook(on_demo_loaded)
        # A refused move, or the entry's page, names the re-run step that is missing.
        add_step_guide(rerun_step)
        # A re-run whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(reap_dead_workers_reruns)
