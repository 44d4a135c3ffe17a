from django.apps import AppConfig


class ArenaConfig(AppConfig):
    """Pairwise-judged categories (issue 15, point 3; docs/ratings.md, "On the platform"): a
    scored entry meets a few others in battles judged by the benchmark's LLM judge, and the
    category's Bradley-Terry ratings are fitted over every battle between entries on the
    boards. Placed above `judging` (it reuses the judge's endpoint, client and verdict cache)
    and below `hosting`; `submissions` reaches it only through the hooks registered here."""

    name = "arena"
    verbose_name = "Pairwise battles"

    def ready(self) -> None:
        # Imported here: services import models, which must not load before the app registry.
        # Each is a hook, since `submissions` (below this app) never imports `arena`.
        from core.workers import add_reaper
        from submissions.boards import add_board_listener
        from submissions.judge_step import add_scored_listener
        from submissions.ratings import set_entry_battles_reader, set_rating_tab_reader

        from .selectors import entry_battles, rating_tab
        from .services import on_board_recomputed, reap_dead_workers_jobs, start_battles_for_run

        # An entry was scored: it meets its opponents in each rating category.
        add_scored_listener(start_battles_for_run)
        # An entry left or rejoined the boards: re-rate (only when the boards' entries moved).
        add_board_listener(on_board_recomputed)
        # A battle job whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(reap_dead_workers_jobs)
        # The rating tab's note and download, and the entry page's battles.
        set_rating_tab_reader(rating_tab)
        set_entry_battles_reader(entry_battles)
