"""Factories for the re-run's models, and `rerun_report` for tests that need an entry's
verification evidence without running a model (the runner's own tests run one)."""

import factory

from benchmark.selectors import active_testset
from submissions.selectors import newest_scored_run
from tests.benchmark.factories import TestSetFactory
from tests.submissions.factories import SubmissionFactory
from verifying.enums import RerunStatus
from verifying.models import ModelEndpoint, RerunJob


class ModelEndpointFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ModelEndpoint

    submission = factory.SubFactory(SubmissionFactory)
    base_url = "http://127.0.0.1:9/v1"
    model = "surgvlm-7b"


class RerunJobFactory(factory.django.DjangoModelFactory):
    """A re-run in `queued`; tests set other states (and the report) explicitly."""

    class Meta:
        model = RerunJob

    submission = factory.SubFactory(SubmissionFactory)
    endpoint = factory.LazyAttribute(
        lambda job: (
            job.submission.model_endpoints.filter(is_active=True).first()
            or ModelEndpointFactory(submission=job.submission)
        )
    )
    test_set = factory.LazyAttribute(
        lambda job: (
            (run.test_set if (run := newest_scored_run(job.submission)) else None)
            or active_testset(job.submission.benchmark)
            or TestSetFactory(benchmark=job.submission.benchmark)
        )
    )
    max_frames = 8
    items_total = 5


def rerun_report(submission, *, within=True, status=RerunStatus.DONE, evaluation=None):
    """A re-run of `submission` in `status` whose report compared `evaluation` (default: the
    entry's newest scored run) on one metric, within the tolerance or not."""
    run = evaluation or newest_scored_run(submission)
    report = {
        "tolerance": 0.01,
        "evaluation": run.pk if run is not None else None,
        "rows": [
            {
                "metric": "CVS_acc",
                "label": "CVS acc",
                "self_reported": 0.5,
                "rerun": 0.5 if within else 0.6,
                "difference": 0.0 if within else 0.1,
                "within": within,
                "status": "within" if within else "outside",
            }
        ],
        "compared": 1,
        "pending": 0,
        "failed_items": 0,
        "all_within": within,
    }
    done = status == RerunStatus.DONE
    return RerunJobFactory(
        submission=submission,
        status=status,
        report=report if done else {},
        items_done=5 if done else 0,
    )


def within_evidence(rerun):
    """The evidence a verify from `rerun_report(...)` (within the tolerance) writes into its
    audit row."""
    return {
        "summary": f"re-run {rerun.pk}: 1 metrics within ±0.01",
        "rerun": rerun.pk,
        "evaluation": rerun.report["evaluation"],
        "compared": 1,
        "pending": 0,
        "tolerance": 0.01,
        "forced": False,
    }
