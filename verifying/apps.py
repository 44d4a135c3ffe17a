from django.apps import AppConfig


class VerifyingConfig(AppConfig):
    """Verifying an entry by re-running the model through its own API (docs/verification.md)."""

    name = "verifying"
    verbose_name = "Verification re-runs"

    def ready(self) -> None:
        # Each is a hook, since `submissions` (below this app) never imports `verifying`. Light
        # modules and lazy callbacks, so nothing heavy is imported at start-up (core/hooks.py).
        from core.hooks import lazy
        from core.workers import add_reaper
        from submissions import hooks

        # The verification writer asks this app for an uploaded entry's evidence.
        hooks.rerun_evidence_check.set(lazy("verifying.evidence.rerun_evidence"))
        # The public entry page and API show the re-run a verified upload rests on (issue 33).
        hooks.rerun_evidence_reader.set(lazy("verifying.selectors.public_rerun_evidence"))
        # `load_demo` ends with the re-run's part of the demo: frames and the stand-in model.
        hooks.add_demo_hook(lazy("verifying.demo.on_demo_loaded"))
        # A refused move, or the entry's page, names the re-run step that is missing.
        hooks.add_step_guide(lazy("verifying.steps.rerun_step"))
        # A re-run whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(lazy("verifying.services.reap_dead_workers_reruns"))
