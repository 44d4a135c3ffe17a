"""Recomputing a run's bootstrap replicates from what is stored (issue 12): the predictions
file, the test set and the judge's verdicts. For runs scored before intervals existed, or after
a benchmark's number of replicates changed (`manage.py compute_intervals`).

Here, above `submissions`, because a run's judge metrics need its judge job's verdicts.
"""

from __future__ import annotations

from django.db import transaction

from benchmark.plugins import plugin_for
from benchmark.selectors import load_scoring_testset
from submissions.intervals import add_metric_replicates, compute_replicates, store_replicates
from submissions.models import Evaluation
from submissions.selectors.files import predictions_bytes

from ..enums import JobStatus
from .jobs import _judgement


def recompute_run_replicates(evaluation: Evaluation) -> bool:
    """Score the run's stored predictions again for their contributions and store its
    replicates with its benchmark's current B, adding the judge metrics' from its newest
    finished judge job. The published metrics are not touched: a run whose scoring no longer
    gives them (another scorer version) is refused with ValueError, since its intervals would
    describe other numbers. False for a run without a test set or predictions (imported)."""
    submission = evaluation.submission
    if evaluation.test_set_id is None or not submission.predictions_file:
        return False
    plugin = plugin_for(submission.benchmark)
    test_set = load_scoring_testset(evaluation.test_set)
    predictions = plugin.check_predictions(
        predictions_bytes(submission),
        test_set,
        options=submission.options,
        max_prediction_chars=submission.benchmark.max_prediction_chars,
    )
    result, contributions = plugin.score(test_set, predictions, options=submission.options)
    changed = [
        name
        for name, value in result.metrics.items()
        if value is not None and evaluation.metrics.get(name) != value
    ]
    if changed:
        raise ValueError(
            f"evaluation {evaluation.pk}: scoring again gives other {', '.join(changed)} than "
            f"stored (scorer {evaluation.scorer_version or 'unknown'}); rescore the run instead"
        )
    computed = compute_replicates(
        evaluation.test_set.checksum,
        submission.benchmark.bootstrap_replicates,
        test_set,
        contributions,
        plugin=plugin,
    )
    job = evaluation.judge_jobs.filter(status=JobStatus.DONE).order_by("-pk").first()
    judgement = _judgement(job) if job is not None else None
    with transaction.atomic():
        store_replicates(evaluation, computed)
        if judgement is not None:
            add_metric_replicates(evaluation, judgement.test_set, judgement.contributions)
    return True
