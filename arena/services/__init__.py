"""The arena's writes (docs/ratings.md, "On the platform"): scheduling a newcomer's battles,
running them in a worker, storing them and rating the category.

The package's modules: `schedule` (who meets whom on what, running a job again, and the hooks
that start it), `runner` (a worker's time slice), `jobs` (the status writer, finishing,
failing, cancelling, the reaper), `rating` (the fit of a category, the one writer of
`CategoryFit`).
Other apps import the names below from `arena.services`.
"""

from .jobs import (
    ARENA,
    BATTLE_JOBS,
    RERUN_PERMISSION,
    cancel_job,
    enqueue_job,
    fail_job,
    finish_job,
    reap_dead_workers_jobs,
    reap_stale_jobs,
    set_job_status,
)
from .rating import lock_fit, rate_category, rate_category_now
from .runner import run_job
from .schedule import (
    judge_unavailable_reason,
    on_board_recomputed,
    rerun_battles,
    start_battles,
    start_battles_for_run,
)

__all__ = [
    "ARENA",
    "BATTLE_JOBS",
    "RERUN_PERMISSION",
    "cancel_job",
    "enqueue_job",
    "fail_job",
    "finish_job",
    "judge_unavailable_reason",
    "lock_fit",
    "on_board_recomputed",
    "rate_category",
    "rate_category_now",
    "reap_dead_workers_jobs",
    "reap_stale_jobs",
    "rerun_battles",
    "run_job",
    "set_job_status",
    "start_battles",
    "start_battles_for_run",
]
