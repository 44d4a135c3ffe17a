from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = "Submissions"

    def ready(self) -> None:
        # Light modules and lazy callbacks: nothing heavy is imported at start-up, in every
        # process (core/hooks.py).
        from benchmark.hooks import add_board_input_listener
        from core.hooks import lazy
        from core.workers import add_reaper

        from .hooks import add_verification_listener

        # A benchmark's ranking policy or metrics changed: rebuild its board (docs/boards.md).
        add_board_input_listener(lazy("submissions.services.schedule_board_refresh"))
        # An entry moved along verification: tell its submitter (issue 6).
        add_verification_listener(lazy("submissions.notifications.verification_changed"))
        # A scoring run whose worker died is handed out again within seconds: every worker
        # process runs this reaper every PODIUM_WORKER_REAP_SECONDS (docs/workers.md).
        add_reaper(lazy("submissions.services.reap_stale_evaluations"))
        # A board whose refresh died with its process is rebuilt (docs/boards.md).
        add_reaper(lazy("submissions.services.reap_stale_boards"))
