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
        # Each is a hook, since `submissions` (below this app) never imports `arena`; light
        # modules and lazy callbacks, so nothing heavy is imported at start-up (core/hooks.py).
        from core.hooks import lazy
        from core.workers import add_reaper
        from submissions import hooks

        # An entry was scored: it meets its opponents in each rating category.
        hooks.add_scored_listener(lazy("arena.services.start_battles_for_run"))
        # An entry left or rejoined the boards: re-rate (only when the boards' entries moved).
        hooks.add_board_listener(lazy("arena.services.on_board_recomputed"))
        # A battle job whose worker died continues once stale, not at the next minute's reaper.
        add_reaper(lazy("arena.services.reap_dead_workers_jobs"))
        # The rating tab's note and download, and the entry page's battles.
        hooks.rating_tab_reader.set(lazy("arena.selectors.rating_tab"))
        hooks.entry_battles_reader.set(lazy("arena.selectors.entry_battles"))
