from django.apps import AppConfig


class HostingConfig(AppConfig):
    """Hosted evaluation with a public request queue (docs/hosted.md): a submitter gives a model
    endpoint, Podium asks it every question and submits the answers as an upload."""

    name = "hosting"
    verbose_name = "Hosted evaluation"

    def ready(self) -> None:
        # Imported here: the services import models, which must not load before the app
        # registry. Each is a hook: `submissions` and `core` (below this app) never import it.
        from core.workers import add_reaper
        from submissions.demo import add_demo_hook
        from submissions.services import add_quota_use

        from .demo import on_demo_loaded
        from .selectors import hosted_evaluations_since
        from .services import reap_dead_workers_requests

        # A hosted request takes one of the day's evaluations, as an upload does.
        add_quota_use(hosted_evaluations_since)
        # `load_demo` ends with the queue's part of the demo: the stand-in models' requests.
        add_demo_hook(on_demo_loaded)
        # A request whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(reap_dead_workers_requests)
