"""Rating a category: every stored battle between entries on the boards, fitted
(`arena.fitting.fit_category`, Bradley-Terry with the benchmark's anchor, rounds and seed) and
handed to `submissions.ratings.store_ratings`, the one writer of the ratings the boards show.
`rate_category` is also the one writer of `CategoryFit`."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmark.models import Benchmark, Category
from submissions.ratings import RatingValue, store_ratings

from ..enums import FitStatus
from ..fitting import CategoryOutcome, fit_category
from ..models import CategoryFit
from ..selectors import battles_on_the_boards, on_the_boards

logger = logging.getLogger(__name__)


def lock_fit(benchmark: Benchmark, category: str) -> CategoryFit:
    """The category's fit row, created when missing, locked until the transaction ends: the
    category's lock for scheduling and rating. Call inside a transaction."""
    CategoryFit.objects.get_or_create(benchmark=benchmark, category=category)
    return CategoryFit.objects.select_for_update().get(benchmark=benchmark, category=category)


def _status(outcome: CategoryOutcome) -> FitStatus:
    if not outcome.battles and not outcome.pending:
        return FitStatus.WAITING
    if not outcome.rated:
        return FitStatus.PENDING
    return FitStatus.PARTLY_PENDING if outcome.pending else FitStatus.RATED


def rate_category(
    benchmark: Benchmark, category: str, *, actor: Any = None, note: str = ""
) -> CategoryFit:
    """Fit the ratings of one rating category over every stored battle between two entries on
    the boards and store them: the one writer of `CategoryFit`.

    In one transaction, holding the category's lock (so a fit never overwrites a newer one):
    reads who is on the boards and their battles, fits them (`fit_category`: the benchmark's
    `rating_anchor`, `rating_bootstrap_rounds` and `rating_seed`), replaces the category's
    ratings with `store_ratings` (an entry left out, pending or without battles, shows "rating
    pending"; a rating whose interval has an unbounded end is stored without an interval),
    which audits and refreshes the board on commit, and records the fit. Returns the fit."""
    if not Category.objects.filter(benchmark=benchmark, key=category, ranking="rating").exists():
        raise ValueError(f"{benchmark.name} has no rating category {category!r}")
    with transaction.atomic():
        fit = lock_fit(benchmark, category)
        benchmark.refresh_from_db(
            fields=["rating_anchor", "rating_bootstrap_rounds", "rating_seed", "name"]
        )
        members = {
            submission_id: run.submission.model_name
            for submission_id, run in on_the_boards(benchmark).items()
        }
        battles = battles_on_the_boards(benchmark, category, members)
        anchor = benchmark.rating_anchor or None
        outcome = fit_category(
            battles,
            anchor=anchor,
            rounds=benchmark.rating_bootstrap_rounds,
            seed=benchmark.rating_seed,
        )
        ids = {name: submission_id for submission_id, name in members.items()}
        values = {
            ids[row.model]: RatingValue(
                rating=row.rating,
                # An interval with an unbounded end is not shown (the fit row says which end).
                ci_low=None if row.model in outcome.unbounded else row.ci_low,
                ci_high=None if row.model in outcome.unbounded else row.ci_high,
                battles=row.battles,
            )
            for row in outcome.rated
        }
        now = timezone.now()
        store_ratings(
            benchmark,
            category,
            values,
            computed_at=now,
            actor=actor,
            note=note or f"{outcome.battles:,} battles between entries on the boards",
        )
        fit.status = _status(outcome)
        fit.reason = outcome.reason
        fit.members = sorted(members)
        fit.pending_models = list(outcome.pending)
        fit.unbounded = dict(sorted(outcome.unbounded.items()))
        fit.battles = outcome.battles
        fit.rated = len(outcome.rated)
        fit.rounds = benchmark.rating_bootstrap_rounds
        fit.seed = benchmark.rating_seed
        fit.anchor = benchmark.rating_anchor
        fit.computed_at = now
        fit.save()
    return fit


def rate_category_now(benchmark_id: int, category: str) -> None:
    """Rate now (a job finished, the boards moved); if that fails, log it and queue
    `task_rate_category` so a worker retries. What asked for it has committed already and must
    not fail because derived data could not be rebuilt."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return
    try:
        rate_category(benchmark, category)
    except Exception:
        logger.exception(
            "rating category %s of benchmark %s failed; queued a retry", category, benchmark_id
        )
        enqueue_rating(benchmark_id, category)


def enqueue_rating(benchmark_id: int, category: str) -> None:
    # Imported here: django_q pulls in its models, and this module is imported at start-up.
    from django_q.tasks import async_task

    async_task(
        "arena.tasks.task_rate_category", benchmark_id, category, q_options={"group": "ratings"}
    )
