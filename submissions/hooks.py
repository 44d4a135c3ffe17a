"""The hooks `submissions` offers the apps above it (`judging`, `arena`, `hosting`,
`verifying`), which fill them from their `AppConfig.ready()` with `core.hooks.lazy` callbacks.
Only the registries live here, so filling them imports nothing heavy (core/hooks.py); the
modules that call them (judge_step, boards, ratings, services, verification, demo, next_step)
import them from here, and keep their `add_*` / `set_*` names for callers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.hooks import Slot


def _adder(listeners: list) -> Callable[[Any], None]:
    def add(listener: Any) -> None:
        if listener not in listeners:
            listeners.append(listener)

    return add


# `listener(evaluation_id)` after the commit that moves a run to `scored` (judge_step).
scored_listeners: list[Callable[[int], None]] = []
add_scored_listener = _adder(scored_listeners)

# `listener(benchmark_id)` after every commit that rewrote a benchmark's board (boards): how an
# app above hears that entries joined or left the boards (`arena` re-rates its categories
# then). A listener must be cheap when nothing it cares about moved, and may refresh the board
# itself (the board it then writes calls it again).
board_listeners: list[Callable[[int], None]] = []
add_board_listener = _adder(board_listeners)

# `listener(submission_id, from, to)` after a committed verification move: notifications.
verification_listeners: list[Callable[[int, str, str], None]] = []
add_verification_listener = _adder(verification_listeners)

# `counter(user, benchmark, since)` -> how many more evaluations the user asked for on the
# benchmark since `since`: the hosted evaluations (`hosting` registers one; a hosted request
# counts when it is submitted, so its entry's run does not count again).
quota_uses: list[Callable[..., int]] = []
add_quota_use = _adder(quota_uses)

# `hook(DemoLoaded)` at the end of `load_demo` (demo): the other apps' parts of the demo.
demo_hooks: list[Callable[..., None]] = []
add_demo_hook = _adder(demo_hooks)

# `guide(submission)` -> NextStep | None, asked first by `next_step` (an app's own steps).
step_guides: list[Callable[..., Any]] = []
add_step_guide = _adder(step_guides)

# Single readers and checks, installed once at start-up (None: not installed, or forgotten
# by a test).
judge_details_reader = Slot("who judged a run: (Evaluation) -> JudgeDetails | None")
board_judges_reader = Slot(
    "who judged a board's judge columns: (benchmark_id, board) -> list[BoardJudge]"
)
rating_tab_reader = Slot("a rating tab's note: (Benchmark, Category) -> RatingTab | None")
entry_battles_reader = Slot("an entry's battles: (Submission) -> list[EntryBattles]")
rerun_evidence_check = Slot("an uploaded entry's re-run: (submission, *, force, note) -> Evidence")
# The public side of that check (issue 33, point 4): what the re-run a verified upload was
# verified on found, for the entry page and the entry API (`verifying` installs it).
rerun_evidence_reader = Slot(
    "a verified upload's re-run, in public: (Submission) -> RerunEvidence | None"
)

# The maintainers' console (`submissions.admin`) shows and reruns the judge beside the entry,
# step 2 included in one place; `judging` sits above this app, so it installs these
# (`submissions.admin.judge` calls them).
judge_panel_reader = Slot("a run's judge panel: (Evaluation | None, viewer) -> JudgePanel | None")
judge_rerun_permission = Slot("whether a user may rerun the judge: (user) -> bool")
judge_rerun = Slot("rerun a run's judge: (Evaluation, *, actor) -> JudgeJob")
entry_judge_jobs_reader = Slot(
    "an entry's judge jobs, whose audit rows its trail shows: (Submission) -> QuerySet[JudgeJob]"
)
