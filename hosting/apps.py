from django.apps import AppConfig


class HostingConfig(AppConfig):
    """Hosted evaluation with a public request queue (docs/hosted.md): a submitter gives a model
    endpoint, Podium asks it every question and submits the answers as an upload."""

    name = "hosting"
    verbose_name = "Hosted evaluation"

    def ready(self) -> None:
        # Each is a hook: `submissions` and `core` (below this app) never import it. Light
        # modules and lazy callbacks, so nothing heavy is imported at start-up (core/hooks.py).
        from core.hooks import lazy
        from core.workers import add_reaper
        from submissions import hooks

        # A hosted request takes one of the day's evaluations, as an upload does.
        hooks.add_quota_use(lazy("hosting.selectors.hosted_evaluations_since"))
        # `load_demo` ends with the queue's part of the demo: the stand-in models' requests.
        hooks.add_demo_hook(lazy("hosting.demo.on_demo_loaded"))
        # A request whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(lazy("hosting.services.reap_dead_workers_requests"))
