"""The judge's part of the console: its panel beside the entry's latest run, the rerun action
and the judge jobs in the entry's audit trail.

`judging` sits above this app, so the console reaches it through the hooks it installs from
its `ready()` (`submissions.hooks`), never an import. Without them (no judging installed, or
a test that removed them) the console shows no judge step and offers no rerun.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from core.exceptions import DomainError

from ..hooks import entry_judge_jobs_reader, judge_panel_reader, judge_rerun, judge_rerun_permission
from ..models import Evaluation, Submission


def judge_panel(evaluation: Evaluation | None) -> Any | None:
    """The run's judge panel as the console shows it (no viewer: a maintainer sees it all),
    or None without a run or a judge."""
    reader = judge_panel_reader.callback
    return None if reader is None else reader(evaluation, None)


def can_rerun_judge(user: Any) -> bool:
    check = judge_rerun_permission.callback
    return check is not None and bool(check(user))


def rerun_judge(evaluation: Evaluation, *, actor: Any) -> Any:
    """Queue the judge again on `evaluation` (the judge's own service); the new job.
    `DomainError` when it refuses, or when no judge is installed."""
    rerun = judge_rerun.callback
    if rerun is None:
        raise DomainError("No LLM judge is installed.")
    return rerun(evaluation, actor=actor)


def entry_judge_jobs(submission: Submission) -> QuerySet[Any] | None:
    """The judge jobs of the entry's runs, or None without a judge."""
    reader = entry_judge_jobs_reader.callback
    return None if reader is None else reader(submission)
