from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = "Submissions"

    def ready(self) -> None:
        # Imported here: services import models, which must not load before the app registry.
        from benchmark.services import add_board_input_listener

        from .services import refresh_board

        # A benchmark's ranking policy or metrics changed: rebuild its board (docs/boards.md).
        add_board_input_listener(refresh_board)
