"""The judge metrics' replicates (issue 12): stored when the judge publishes, from the same
verdicts, so the identity resample gives the published judge metrics bit for bit, full or
accepted over a subset; recomputed from the stored verdicts by `compute_intervals`."""

import numpy as np
import pytest

from judging import services
from judging.services.replicates import recompute_run_replicates
from plugins.medvidbench.scoring.contributions import from_bytes, identity_weights, metric_values
from plugins.medvidbench.scoring.tasks import AUTOMATIC_METRICS, JUDGE_METRICS
from submissions.intervals import replicate_values
from submissions.models import RunReplicates
from tests.accounts.factories import UserFactory
from tests.judging.test_services import hold_with_one_bad_item, run

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def identity_values(run_):
    row = RunReplicates.objects.get(evaluation=run_)
    contributions = from_bytes(bytes(row.contributions))
    return row, metric_values(contributions, identity_weights(contributions.n_samples))


def test_publishing_the_judge_adds_its_metrics_replicates(scored_run, standin):
    before = replicate_values(RunReplicates.objects.get(evaluation=scored_run))
    assert all(np.isnan(before[name]).all() for name in JUDGE_METRICS)

    run(services.start_judge(scored_run, enqueue=False))

    scored_run.refresh_from_db()
    row, identity = identity_values(scored_run)
    after = replicate_values(row)
    for name in JUDGE_METRICS:
        assert float(identity[name][0]) == scored_run.metrics[name], name
        assert not np.isnan(after[name]).all(), name
    for name in AUTOMATIC_METRICS:  # untouched
        assert after[name].tobytes() == before[name].tobytes(), name


def test_a_judgement_accepted_over_a_subset_gets_the_replicates_of_that_subset(scored_run, standin):
    job, _ = hold_with_one_bad_item(scored_run, standin)
    maintainer = UserFactory(is_superuser=True)
    services.accept_partial_judgement(job, actor=maintainer, note="one caption is unusable")

    scored_run.refresh_from_db()
    _, identity = identity_values(scored_run)
    for name in JUDGE_METRICS:
        assert float(identity[name][0]) == scored_run.metrics[name], name


def test_compute_intervals_rebuilds_the_judge_replicates_from_the_stored_verdicts(
    scored_run, standin
):
    run(services.start_judge(scored_run, enqueue=False))
    scored_run.refresh_from_db()
    stored = bytes(RunReplicates.objects.get(evaluation=scored_run).values)
    RunReplicates.objects.filter(evaluation=scored_run).delete()
    calls = standin.calls

    assert recompute_run_replicates(scored_run)

    assert bytes(RunReplicates.objects.get(evaluation=scored_run).values) == stored
    assert standin.calls == calls  # no judge call: the verdicts are stored


def test_compute_intervals_refuses_a_run_whose_metrics_it_cannot_reproduce(scored_run):
    scored_run.metrics = {**scored_run.metrics, "TAG_mIoU@0.3": 0.5}
    scored_run.save(update_fields=["metrics"])
    with pytest.raises(ValueError, match=r"TAG_mIoU@0\.3"):
        recompute_run_replicates(scored_run)
