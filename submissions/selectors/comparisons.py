"""Which run an entry shows when two entries are compared (issue 12: the compare API), and who
may see it: the rankings' privacy rules."""

from __future__ import annotations

from typing import Any

from accounts.roles import can_view_all_entries
from benchmark.models import Benchmark

from ..models import BoardEntry, Evaluation, Submission
from .entries import newest_scored_run


def compared_run(benchmark: Benchmark, submission_id: int, *, viewer: Any) -> Evaluation | None:
    """The run entry `submission_id` of `benchmark` is compared with, for `viewer`.

    A published entry on the board shows everyone the run the board shows
    (`BoardEntry.evaluation`). Any other entry (evaluate-only, or published but not on the
    board yet) is its owner's, and maintainers' and superusers' (`can_view_all_entries`); for
    them it is its newest run with scores, None when it has none yet. Raises
    `Submission.DoesNotExist` for an entry the viewer may not see, of another benchmark, or
    that does not exist: the same answer for the three, so nothing confirms that it exists.
    The caller may see `benchmark` (`benchmark.selectors.benchmark_by_slug`).
    """
    submission = (
        Submission.objects.select_related("benchmark", "board_entry__evaluation")
        .filter(benchmark=benchmark, pk=submission_id)
        .first()
    )
    if submission is None:
        raise Submission.DoesNotExist
    entry = _board_entry(submission)
    if submission.publish and entry is not None:
        run = entry.evaluation
    elif _may_see_unlisted(submission, viewer):
        run = newest_scored_run(submission)
    else:
        raise Submission.DoesNotExist
    if run is not None:
        run.submission = submission  # the comparison names the entry: no query for it
    return run


def _board_entry(submission: Submission) -> BoardEntry | None:
    try:
        return submission.board_entry
    except BoardEntry.DoesNotExist:
        return None


def _may_see_unlisted(submission: Submission, viewer: Any) -> bool:
    if not getattr(viewer, "is_authenticated", False):
        return False
    return submission.owner_id == viewer.pk or can_view_all_entries(viewer)
