from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = "Submissions"

    def ready(self) -> None:
        # Imported here: services import models, which must not load before the app registry.
        from benchmark.services import add_board_input_listener
        from core.workers import add_reaper

        from .notifications import verification_changed
        from .services import add_verification_listener, reap_stale_evaluations, refresh_board

        # A benchmark's ranking policy or metrics changed: rebuild its board (docs/boards.md).
        add_board_input_listener(refresh_board)
        # An entry moved along verification: tell its submitter (issue 6).
        add_verification_listener(verification_changed)
        # A scoring run whose worker died is handed out again within seconds: every worker
        # process runs this reaper every PODIUM_WORKER_REAP_SECONDS (docs/workers.md).
        add_reaper(reap_stale_evaluations)
