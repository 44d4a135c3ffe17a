"""A kind's timing settings (`inference.settings`): its own name where set, else the judge's,
else the default; read at each call."""

from datetime import timedelta

import pytest

from inference.settings import JUDGE, KindSettings
from verifying.config import RERUN

pytestmark = pytest.mark.unit


def test_a_kind_reads_its_own_setting_first_then_the_judges(settings):
    settings.PODIUM_JUDGE_STALE_SECONDS = 30
    settings.PODIUM_RERUN_STALE_SECONDS = 7

    assert (JUDGE.stale_after(), RERUN.stale_after()) == (
        timedelta(seconds=30),
        timedelta(seconds=7),
    )

    del settings.PODIUM_RERUN_STALE_SECONDS
    assert RERUN.stale_after() == timedelta(seconds=30)


def test_none_counts_as_unset_and_the_default_comes_last(settings):
    settings.PODIUM_JUDGE_MAX_RUNS = None
    settings.PODIUM_RERUN_MAX_RUNS = None

    assert (JUDGE.max_runs(), RERUN.max_runs()) == (20, 20)


def test_the_slice_defaults_to_three_quarters_of_the_cluster_timeout(settings):
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": 400}
    settings.PODIUM_JUDGE_SLICE_SECONDS = None
    hosted = KindSettings("PODIUM_HOSTED")

    assert (JUDGE.slice_seconds(), hosted.slice_seconds()) == (300.0, 300.0)

    settings.PODIUM_JUDGE_SLICE_SECONDS = 120
    settings.PODIUM_HOSTED_SLICE_SECONDS = 60
    assert (JUDGE.slice_seconds(), RERUN.slice_seconds(), hosted.slice_seconds()) == (120, 120, 60)


def test_a_kinds_outage_takes_its_limit_probe_cap_backoff_and_name(settings):
    settings.PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS = 90
    settings.PODIUM_JUDGE_OUTAGE_PROBE_SECONDS = 4
    settings.PODIUM_JUDGE_BACKOFF_SECONDS = 0.5
    settings.PODIUM_RERUN_OUTAGE_LIMIT_SECONDS = 15

    judge, rerun = JUDGE.outage("judge endpoint"), RERUN.outage("model endpoint")

    assert (judge.limit_seconds, judge.cap, judge.base, judge.endpoint_name) == (
        90.0,
        4.0,
        0.5,
        "judge endpoint",
    )
    assert (rerun.limit_seconds, rerun.cap, rerun.base, rerun.endpoint_name) == (
        15.0,
        4.0,
        0.5,
        "model endpoint",
    )
