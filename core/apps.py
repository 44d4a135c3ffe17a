from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        # Imported here: django_q's signals module imports its models.
        from django_q.signals import post_spawn

        from .workers import on_worker_spawn

        # Infrastructure, not domain flow: each worker process the cluster spawns (at start,
        # and when its guard replaces a killed worker) starts the reaper watchdog at once.
        post_spawn.connect(on_worker_spawn, dispatch_uid="podium-reaper-watchdog")
