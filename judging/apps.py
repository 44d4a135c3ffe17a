from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "LLM judge"

    def ready(self) -> None:
        # Light modules and lazy callbacks: nothing heavy is imported at start-up, in every
        # process (core/hooks.py).
        from core.hooks import lazy
        from core.workers import add_reaper
        from submissions import hooks

        # A run was scored: start step 2 if the benchmark says so (spec 5).
        hooks.add_scored_listener(lazy("judging.services.start_judge_if_automatic"))
        # A judge job whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(lazy("judging.services.reap_dead_workers_jobs"))
        # The public entry page says who judged a run (issue 12).
        hooks.judge_details_reader.set(lazy("judging.selectors.judge_details"))
        # The boards say who scored their judge columns (issue 32).
        hooks.board_judges_reader.set(lazy("judging.selectors.board_judges"))
        # The maintainers' console shows and reruns the judge beside the entry (issue 33).
        hooks.judge_panel_reader.set(lazy("judging.selectors.judge_panel"))
        hooks.judge_rerun_permission.set(lazy("judging.selectors.can_rerun_judge"))
        hooks.judge_rerun.set(lazy("judging.services.rerun_judge"))
        hooks.entry_judge_jobs_reader.set(lazy("judging.selectors.entry_judge_jobs"))
