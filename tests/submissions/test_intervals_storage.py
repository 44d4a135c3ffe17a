"""Each run's replicates (issue 12): stored privately when it is scored, public intervals on the
board, rank intervals and tiers written after a recompute, paired comparisons."""

from __future__ import annotations

from datetime import datetime, time

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone

from benchmark.scoring.bootstrap import percentile_interval
from benchmark.services import import_testset
from plugins.medvidbench.plugin import plugin as medvidbench_plugin
from plugins.medvidbench.scoring.contributions import from_bytes, identity_weights, metric_values
from plugins.medvidbench.scoring.tasks import AUTOMATIC_METRICS, JUDGE_METRICS, METRIC_NAMES
from submissions import intervals
from submissions.boards import recompute_board
from submissions.judge_step import copy_for_rejudge
from submissions.models import BoardEntry, RunReplicates
from submissions.services import import_published_result
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import write_ground_truth
from tests.submissions.intervals_data import REPLICATES, interval_records

pytestmark = pytest.mark.django_db


def import_row(benchmark, index=0):
    """One of the official board's published rows (spec 7): no per-sample data."""
    row = medvidbench_plugin.published_rows()[index]
    return import_published_result(
        benchmark,
        model_name=row.model_name,
        values=row.values,
        verified_at=timezone.make_aware(datetime.combine(row.published_on, time())),
    )


def test_scoring_stores_the_replicates_and_the_identity_gives_the_published_metrics(
    scored_entry,
):
    run = scored_entry("Model A")
    row = RunReplicates.objects.get(evaluation=run)
    assert (row.test_set_checksum, row.replicates) == (run.test_set.checksum, REPLICATES)
    assert row.metric_keys == list(METRIC_NAMES)
    values = intervals.replicate_values(row)
    assert {key: array.shape for key, array in values.items()} == dict.fromkeys(
        METRIC_NAMES, (REPLICATES,)
    )
    # The stored contributions reproduce the published metrics bit for bit.
    contributions = from_bytes(bytes(row.contributions))
    identity = metric_values(contributions, identity_weights(contributions.n_samples))
    for name in AUTOMATIC_METRICS:
        assert float(identity[name][0]) == run.metrics[name], name
    for name in JUDGE_METRICS:  # pending: no value on any replicate, no interval
        assert np.isnan(values[name]).all()
        assert row.intervals[name] is None
    for name in AUTOMATIC_METRICS:
        low, high = row.intervals[name]
        assert (low, high) == percentile_interval(values[name])
        assert low <= run.metrics[name] <= high, name
        assert low < high, name


def test_every_entry_on_a_test_set_version_is_resampled_alike(scored_entry):
    owner = UserFactory()  # the same file twice: one person's (another's would be a copy)
    a, b = scored_entry("A", "noisy", 1, owner=owner), scored_entry("B", "noisy", 1, owner=owner)
    rows = {row.evaluation_id: row for row in RunReplicates.objects.all()}
    # Same predictions, same weights: the same bytes, so any two entries are paired.
    assert bytes(rows[a.pk].values) == bytes(rows[b.pk].values)
    c = scored_entry("C", "prose", 2)
    assert bytes(RunReplicates.objects.get(evaluation=c).values) != bytes(rows[a.pk].values)


def test_the_board_carries_each_runs_intervals_and_imported_rows_have_none(
    interval_benchmark, scored_entry
):
    run = scored_entry("Model A")
    imported = import_row(interval_benchmark)
    recompute_board(interval_benchmark)
    entries = {entry.submission_id: entry for entry in BoardEntry.objects.all()}
    stored = RunReplicates.objects.get(evaluation=run).intervals
    assert entries[run.submission_id].intervals == stored
    assert entries[imported.pk].intervals == {}
    assert entries[run.submission_id].rank_best is None  # until the background task runs


def test_rank_intervals_and_tiers_are_written_for_the_board_recomputed(
    interval_benchmark, scored_entry
):
    scored_entry("Perfect", "perfect")
    scored_entry("Noisy 1", "noisy", 1)
    scored_entry("Noisy 2", "noisy", 2)
    scored_entry("Prose", "prose", 3)
    before = set(BoardEntry.objects.values_list("computed_at", flat=True))

    assert intervals.compute_rank_intervals(interval_benchmark) == 4
    rows = list(BoardEntry.objects.order_by("rank"))
    assert rows[0].submission.model_name == "Perfect"
    for row in rows:
        assert row.rank_best <= row.rank <= row.rank_worst
    perfect, *others = rows
    assert (perfect.rank_best, perfect.rank_worst, perfect.tier) == (1, 1, 1)
    assert all(row.tier >= 2 for row in others)
    # The two noisy models answer alike: the test set cannot tell them apart.
    noisy = [row for row in rows if row.submission.model_name.startswith("Noisy")]
    assert noisy[0].tier == noisy[1].tier
    # The board is stamped again (cached pages and ETags follow), and a second task does not
    # redo the work.
    after = set(BoardEntry.objects.values_list("computed_at", flat=True))
    assert len(after) == 1
    assert after != before
    assert intervals.compute_rank_intervals(interval_benchmark) == 0


def test_a_board_recomputed_meanwhile_is_not_overwritten(
    interval_benchmark, scored_entry, monkeypatch
):
    scored_entry("A", "noisy", 1)
    scored_entry("B", "prose", 2)
    real = intervals.rank_intervals

    def recompute_in_between(*args, **kwargs):
        recompute_board(interval_benchmark)  # rewrites every row with a new computed_at
        return real(*args, **kwargs)

    monkeypatch.setattr(intervals, "rank_intervals", recompute_in_between)
    assert intervals.compute_rank_intervals(interval_benchmark) == 0
    assert not BoardEntry.objects.filter(rank_best__isnull=False).exists()


def test_an_imported_row_keeps_its_values_in_every_replicate(interval_benchmark, scored_entry):
    scored_entry("A", "noisy", 1)
    import_row(interval_benchmark)
    recompute_board(interval_benchmark)
    assert intervals.compute_rank_intervals(interval_benchmark) == 2
    for row in BoardEntry.objects.all():
        assert row.rank_best is not None
        assert row.rank_best <= row.rank <= row.rank_worst


def test_a_board_of_imported_rows_only_has_no_rank_intervals(interval_benchmark):
    for index in range(3):
        import_row(interval_benchmark, index)
    recompute_board(interval_benchmark)
    assert intervals.compute_rank_intervals(interval_benchmark) == 3
    assert set(BoardEntry.objects.values_list("rank_best", "rank_worst", "tier")) == {
        (None, None, None)
    }


def test_comparing_two_entries_pairs_their_replicates(interval_benchmark, scored_entry):
    perfect, noisy = scored_entry("Perfect", "perfect"), scored_entry("Noisy", "noisy", 1)
    comparison = intervals.compare_runs(interval_benchmark, perfect, noisy)
    assert comparison.paired
    assert comparison.unpaired_reason == ""
    for name in AUTOMATIC_METRICS:
        found = comparison.metrics[name]
        assert found.difference == perfect.metrics[name] - noisy.metrics[name]
        low, high = found.interval
        assert low <= found.difference <= high
        assert 0 < found.p_value <= 1
    assert comparison.verdicts["TAG_mIoU@0.3"] == "a"
    for name in JUDGE_METRICS:
        assert comparison.metrics[name].interval is None
        assert comparison.verdicts[name] is None
    assert comparison.summary.startswith("Perfect is better on ")
    itself = intervals.compare_runs(interval_benchmark, noisy, noisy)
    assert {itself.metrics[name].p_value for name in AUTOMATIC_METRICS} == {1.0}
    assert {itself.verdicts[name] for name in AUTOMATIC_METRICS} == {"tied"}
    body = intervals.comparison_as_dict(comparison)
    assert body["metrics"]["NAP_acc"]["interval"] == list(comparison.metrics["NAP_acc"].interval)
    assert set(body["per_dataset"]["NAP_acc"]) == set(perfect.result["per_dataset"]["NAP_acc"])


def test_entries_of_different_test_set_versions_are_compared_without_intervals(
    interval_benchmark, scored_entry, tmp_path
):
    old = scored_entry("Old", "noisy", 1)
    records = interval_records()[:-1]
    other = scored_entry("Other", "noisy", 2)
    # As if `old` had been scored on an earlier version of the test set.
    new_version = import_testset(
        interval_benchmark, write_ground_truth(tmp_path / "v2.json", records)
    )
    RunReplicates.objects.filter(evaluation=old).update(test_set_checksum=new_version.checksum)
    comparison = intervals.compare_runs(interval_benchmark, old, other)
    assert not comparison.paired
    assert "different test-set versions" in comparison.unpaired_reason
    assert all(found.interval is None for found in comparison.metrics.values())
    assert comparison.metrics["NAP_acc"].difference == (
        old.metrics["NAP_acc"] - other.metrics["NAP_acc"]
    )


def test_a_judge_rerun_copy_keeps_the_automatic_replicates_and_drops_the_judges(
    interval_benchmark, scored_entry
):
    run = scored_entry("A")
    run.status = "complete"
    run.save(update_fields=["status"])
    copy = copy_for_rejudge(run, actor=None)
    source = intervals.replicate_values(RunReplicates.objects.get(evaluation=run))
    copied_row = RunReplicates.objects.get(evaluation=copy)
    copied = intervals.replicate_values(copied_row)
    for name in AUTOMATIC_METRICS:
        assert copied[name].tobytes() == source[name].tobytes()
    assert all(np.isnan(copied[name]).all() for name in JUDGE_METRICS)
    assert all(copied_row.intervals[name] is None for name in JUDGE_METRICS)
    assert not set(from_bytes(bytes(copied_row.contributions)).metrics) & set(JUDGE_METRICS)


def test_compute_intervals_recomputes_older_runs_and_a_new_number_of_replicates(
    interval_benchmark, scored_entry, capsys
):
    run = scored_entry("A", "noisy", 1)
    scored_entry("B", "prose", 2)
    original = RunReplicates.objects.get(evaluation=run)
    RunReplicates.objects.filter(evaluation=run).delete()
    interval_benchmark.bootstrap_replicates = 300
    interval_benchmark.save(update_fields=["bootstrap_replicates"])

    call_command("compute_intervals", "--benchmark", interval_benchmark.slug)

    out = capsys.readouterr().out
    assert "replicates for 2 runs" in out
    assert "rank intervals for 2 rows (B = 300)" in out
    again = RunReplicates.objects.get(evaluation=run)
    assert again.replicates == 300
    # The first 200 replicates are the same resamples as before: B only adds rows.
    first = intervals.replicate_values(again)["NAP_acc"][:REPLICATES]
    assert first.tobytes() == intervals.replicate_values(original)["NAP_acc"].tobytes()
    assert not BoardEntry.objects.filter(rank_best__isnull=True).exists()


def test_the_owners_status_page_shows_each_metrics_interval_and_the_rank_interval(
    interval_benchmark, scored_entry, client
):
    owner = UserFactory()
    run = scored_entry("Mine", "noisy", 1, owner=owner)
    scored_entry("Other", "prose", 2)
    intervals.compute_rank_intervals(interval_benchmark)
    client.force_login(owner)

    page = client.get(f"/submissions/{run.submission_id}/").content.decode()

    low, high = RunReplicates.objects.get(evaluation=run).intervals["NAP_acc"]
    decimals = interval_benchmark.metrics.get(key="NAP_acc").display_decimals
    assert f"{low:.{decimals}f}\u2013{high:.{decimals}f}" in page
    entry = BoardEntry.objects.get(submission_id=run.submission_id)
    assert f"(95% interval {entry.rank_best}\u2013{entry.rank_worst})" in page
    assert "resampled 200 times" in page
