from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "LLM judge"

    def ready(self) -> None:
        # Imported here: services import models, which must not load before the app registry.
        from core.workers import add_reaper
        from submissions.judge_step import add_scored_listener, set_judge_details_reader

        from .selectors import judge_details
        from .services import reap_dead_workers_jobs, start_judge_if_automatic

        # A run was scored: start step 2 if the benchmark says so (spec 5).
        add_scored_listener(start_judge_if_automatic)
        # A judge job whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(reap_dead_workers_jobs)
        # The public entry page says who judged a run (issue 12).
        set_judge_details_reader(judge_details)
