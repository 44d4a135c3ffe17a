import dataclasses
import hashlib
import threading
from functools import partial

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction

from benchmark.enums import RankingMethod
from benchmark.hooks import board_input_listeners
from benchmark.models import Benchmark, Metric, TestSet
from benchmark.services import (
    add_board_input_listener,
    ensure_benchmark,
    ensure_plugin_benchmark,
    import_testset,
    set_active_testset,
    update_benchmark,
    update_metric,
)
from core import private_files
from core.audit import events_for
from core.exceptions import InvalidRankingPolicy, InvalidTestSet
from core.models import AuditEvent
from plugins.medvidbench.definition import MEDVIDBENCH
from plugins.medvidbench.scoring import SCORER_VERSION
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import (
    BenchmarkFactory,
    MetricFactory,
    TestSetFactory,
    small_ground_truth,
    write_ground_truth,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

MEDVIDBENCH_KEYS = [
    "CVS_acc",
    "NAP_acc",
    "SA_acc",
    "STG_mIoU",
    "TAG_mIoU@0.3",
    "TAG_mIoU@0.5",
    "DVC_F1",
    "DVC_llm",
    "VS_llm",
    "RC_llm",
]


def actions() -> list[str]:
    return list(AuditEvent.objects.order_by("id").values_list("action", flat=True))


def files_under(directory) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


@pytest.fixture
def benchmark():
    return BenchmarkFactory(slug="medvidbench", name="MedVidBench")


@pytest.fixture
def ground_truth(tmp_path):
    return write_ground_truth(tmp_path / "incoming" / "gt.json", small_ground_truth())


# import_testset ---------------------------------------------------------------------------------


def test_import_creates_version_1_with_its_counts_and_a_private_copy(
    benchmark, ground_truth, testset_dir
):
    maintainer = UserFactory()
    raw = ground_truth.read_bytes()
    checksum = hashlib.sha256(raw).hexdigest()

    test_set = import_testset(benchmark, ground_truth, actor=maintainer, notes="first release")

    test_set.refresh_from_db()
    assert list(TestSet.objects.all()) == [test_set]
    assert (test_set.version, test_set.checksum, test_set.record_count) == (1, checksum, 5)
    assert test_set.file_name == f"testsets/medvidbench/v1-{checksum[:12]}.json"
    assert test_set.qa_type_counts == {
        "cvs_assessment": 1,
        "next_action": 1,
        "stg": 1,
        "tal": 1,
        "video_summary_gpt": 1,
    }
    assert test_set.task_counts == {
        "cvs_assessment": 1,
        "next_action": 1,
        "stg": 1,
        "tal": 1,
        "video_summary": 1,
    }
    assert test_set.dataset_counts == {
        "AVOS": 2,
        "Cholec80_CVS": 1,
        "CholecTrack20": 1,
        "CoPESD": 1,
    }
    assert (test_set.scorer_version, test_set.imported_by, test_set.notes) == (
        SCORER_VERSION,
        maintainer,
        "first release",
    )
    assert test_set.is_active is True
    assert (testset_dir / "medvidbench" / f"v1-{checksum[:12]}.json").read_bytes() == raw
    assert files_under(testset_dir) == ["medvidbench", f"medvidbench/v1-{checksum[:12]}.json"]


def test_import_audits_the_import_and_the_activation(benchmark, ground_truth, testset_dir):
    maintainer = UserFactory()

    test_set = import_testset(benchmark, ground_truth, actor=maintainer, notes="first release")

    activated, imported = events_for(test_set)
    assert (imported.action, imported.actor) == ("benchmark.testset.imported", maintainer)
    assert imported.data == {
        "version": 1,
        "checksum": test_set.checksum,
        "record_count": 5,
        "file_name": test_set.file_name,
        "source": "gt.json",
        "scorer_version": SCORER_VERSION,
        "note": "first release",
    }
    assert (activated.action, activated.actor) == ("benchmark.testset.activated", maintainer)
    assert activated.data == {"from": None, "to": 1, "note": ""}
    assert actions() == ["benchmark.testset.imported", "benchmark.testset.activated"]


def test_a_second_file_becomes_version_2_and_the_only_active_one(
    benchmark, ground_truth, testset_dir, tmp_path
):
    first = import_testset(benchmark, ground_truth)
    corrected = write_ground_truth(tmp_path / "incoming" / "gt-v2.json", small_ground_truth())

    second = import_testset(benchmark, corrected)

    first.refresh_from_db()
    assert (first.version, first.is_active) == (1, False)
    assert (second.version, second.is_active) == (2, True)
    assert list(TestSet.objects.filter(is_active=True)) == [second]
    assert private_files.read(first.file_name) == ground_truth.read_bytes()
    assert private_files.read(second.file_name) == corrected.read_bytes()
    assert events_for(second).first().data == {"from": 1, "to": 2, "note": ""}


def test_an_import_without_activation_leaves_the_active_version_alone(
    benchmark, ground_truth, testset_dir, tmp_path
):
    first = import_testset(benchmark, ground_truth)
    candidate = write_ground_truth(tmp_path / "incoming" / "gt-v2.json", small_ground_truth())

    second = import_testset(benchmark, candidate, activate=False)

    assert (second.version, second.is_active) == (2, False)
    assert list(TestSet.objects.filter(is_active=True)) == [first]
    assert actions() == [
        "benchmark.testset.imported",
        "benchmark.testset.activated",
        "benchmark.testset.imported",
    ]


def test_reimporting_the_same_file_returns_the_existing_test_set(
    benchmark, ground_truth, testset_dir, tmp_path
):
    first = import_testset(benchmark, ground_truth)
    same_bytes = tmp_path / "elsewhere" / "copy.json"
    same_bytes.parent.mkdir()
    same_bytes.write_bytes(ground_truth.read_bytes())

    again = import_testset(benchmark, same_bytes, notes="ignored")

    assert again == first
    assert list(TestSet.objects.all()) == [first]
    assert files_under(testset_dir) == ["medvidbench", first.file_name.removeprefix("testsets/")]
    assert actions() == ["benchmark.testset.imported", "benchmark.testset.activated"]


def test_reimporting_an_inactive_version_activates_it_when_asked(
    benchmark, ground_truth, testset_dir, tmp_path
):
    first = import_testset(benchmark, ground_truth)
    second = import_testset(
        benchmark, write_ground_truth(tmp_path / "v2.json", small_ground_truth())
    )

    again = import_testset(benchmark, ground_truth)

    second.refresh_from_db()
    assert again == first
    assert (again.is_active, second.is_active) == (True, False)
    assert TestSet.objects.count() == 2
    assert events_for(first).first().data == {"from": 2, "to": 1, "note": ""}


def test_the_same_file_may_be_imported_for_another_benchmark(benchmark, ground_truth, testset_dir):
    other = BenchmarkFactory(slug="medvidbench-lite")
    mine = import_testset(benchmark, ground_truth)

    theirs = import_testset(other, ground_truth)

    assert (theirs.benchmark, theirs.version, theirs.checksum) == (other, 1, mine.checksum)
    assert theirs.file_name.startswith("testsets/medvidbench-lite/v1-")
    assert list(TestSet.objects.filter(is_active=True).order_by("id")) == [mine, theirs]


def test_a_malformed_file_is_rejected_with_the_loaders_message_and_nothing_written(
    benchmark, testset_dir, tmp_path
):
    records = small_ground_truth()
    records[1]["qa_type"] = "mystery"
    del records[3]["metadata"]["fps"]
    bad = write_ground_truth(tmp_path / "bad.json", records)

    with pytest.raises(InvalidTestSet) as raised:
        import_testset(benchmark, bad)

    assert str(raised.value) == (
        "The ground-truth file was rejected (2 problem(s)):\n"
        "  - row 1, field 'qa_type': unknown qa_type 'mystery': no MedVidBench task reads it\n"
        "  - row 3, field 'metadata.fps': expected a non-empty string or number"
    )
    assert TestSet.objects.count() == 0
    assert AuditEvent.objects.count() == 0
    assert not testset_dir.exists()


def test_a_file_that_is_not_json_is_rejected(benchmark, testset_dir, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[{", encoding="utf-8")

    with pytest.raises(InvalidTestSet) as raised:
        import_testset(benchmark, bad)

    assert str(raised.value) == (
        "The ground-truth file was rejected (1 problem(s)):\n"
        "  - row 0: the file ends early, at byte 2, inside the first row: it looks cut off "
        "(an interrupted upload or copy); upload the whole file"
    )
    assert TestSet.objects.count() == 0


def test_a_missing_file_is_rejected(benchmark, testset_dir, tmp_path):
    missing = tmp_path / "nowhere.json"

    with pytest.raises(InvalidTestSet) as raised:
        import_testset(benchmark, missing)

    assert str(raised.value) == f"Cannot read {missing}: No such file or directory."


def test_a_failed_transaction_removes_the_copied_file(benchmark, ground_truth, testset_dir):
    # An unsaved user cannot be stored as imported_by: the row fails after the file was written.
    with pytest.raises(ValueError, match="unsaved related object"):
        import_testset(benchmark, ground_truth, actor=UserFactory.build())

    assert TestSet.objects.count() == 0
    assert AuditEvent.objects.count() == 0
    assert files_under(testset_dir) == ["medvidbench"]


def test_a_private_folder_inside_media_root_is_refused(benchmark, ground_truth, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PODIUM_PRIVATE_DIR = tmp_path / "media" / "private"

    with pytest.raises(ImproperlyConfigured, match="must not be inside MEDIA_ROOT"):
        import_testset(benchmark, ground_truth)

    assert TestSet.objects.count() == 0


def test_a_demo_sized_test_set_is_counted_like_the_official_one(benchmark, testset_dir, tmp_path):
    from plugins.medvidbench.demo_testset import QA_TYPE_COUNTS, generate_testset  # ~1 s, only here

    path = write_ground_truth(tmp_path / "demo.json", generate_testset(seed=0))

    test_set = import_testset(benchmark, path)

    assert test_set.record_count == 6245
    assert test_set.qa_type_counts == dict(sorted(QA_TYPE_COUNTS.items()))
    assert test_set.task_counts == {
        "cvs_assessment": 648,
        "dense_captioning": 1479,
        "next_action": 670,
        "region_caption": 306,
        "skill_assessment": 160,
        "stg": 780,
        "tal": 1637,
        "video_summary": 565,
    }


# set_active_testset -----------------------------------------------------------------------------


def test_activating_switches_the_active_version_and_audits_once():
    benchmark = BenchmarkFactory()
    old = TestSetFactory(benchmark=benchmark, version=1, is_active=True)
    new = TestSetFactory(benchmark=benchmark, version=2)
    maintainer = UserFactory()

    returned = set_active_testset(new, actor=maintainer, note="fixes STG boxes")

    old.refresh_from_db()
    new.refresh_from_db()
    assert returned == new
    assert (old.is_active, new.is_active) == (False, True)
    (event,) = AuditEvent.objects.all()
    assert (event.action, event.actor, event.target) == (
        "benchmark.testset.activated",
        maintainer,
        new,
    )
    assert event.data == {"from": 1, "to": 2, "note": "fixes STG boxes"}


def test_activating_the_active_version_changes_nothing():
    active = TestSetFactory(is_active=True)

    set_active_testset(active, actor=None)

    active.refresh_from_db()
    assert active.is_active is True
    assert AuditEvent.objects.count() == 0


def test_activating_touches_only_its_own_benchmark():
    elsewhere = TestSetFactory(is_active=True)
    mine = TestSetFactory()

    set_active_testset(mine, actor=None)

    elsewhere.refresh_from_db()
    assert elsewhere.is_active is True
    assert events_for(mine).get().data == {"from": None, "to": mine.version, "note": ""}


# ensure_plugin_benchmark -----------------------------------------------------------------------------


def test_ensure_medvidbench_creates_the_benchmark_with_ten_metrics_in_order():
    benchmark = ensure_plugin_benchmark("medvidbench")

    assert list(Benchmark.objects.all()) == [benchmark]
    assert (benchmark.slug, benchmark.name, benchmark.is_public) == (
        "medvidbench",
        "MedVidBench",
        True,
    )
    assert list(benchmark.metrics.values_list("key", flat=True)) == MEDVIDBENCH_KEYS
    assert list(benchmark.metrics.values_list("position", flat=True)) == list(range(1, 11))
    assert list(benchmark.metrics.filter(is_judge_metric=True).values_list("key", flat=True)) == [
        "DVC_llm",
        "VS_llm",
        "RC_llm",
    ]
    assert (benchmark.tie_method, benchmark.ranking_scope, benchmark.ranking_decimals) == (
        "min",
        "global",
        3,
    )
    assert benchmark.judge_rubric == MEDVIDBENCH.judge_rubric()
    assert benchmark.citation.startswith("@inproceedings{su2026medgrpo,")
    (event,) = AuditEvent.objects.all()
    assert (event.action, event.target, event.data) == (
        "benchmark.benchmark.created",
        benchmark,
        {"metrics": MEDVIDBENCH_KEYS},
    )


def test_ensure_medvidbench_twice_yields_one_benchmark_and_one_audit_row():
    first = ensure_plugin_benchmark("medvidbench")

    second = ensure_plugin_benchmark("medvidbench")

    assert second == first
    assert Benchmark.objects.count() == 1
    assert list(Metric.objects.order_by("position").values_list("key", flat=True)) == (
        MEDVIDBENCH_KEYS
    )
    assert actions() == ["benchmark.benchmark.created"]


def test_ensure_medvidbench_keeps_maintainers_edits_unless_overwriting():
    benchmark = ensure_plugin_benchmark("medvidbench")
    update_benchmark(benchmark, actor=None, about="Edited.", tie_method="dense")
    update_metric(benchmark.metrics.get(key="CVS_acc"), actor=None, label="CVS")

    kept = ensure_plugin_benchmark("medvidbench")

    assert (kept.about, kept.tie_method) == ("Edited.", "dense")
    assert kept.metrics.get(key="CVS_acc").label == "CVS"

    reset = ensure_plugin_benchmark("medvidbench", overwrite=True)

    assert (reset.about, reset.tie_method) == (MEDVIDBENCH.about, "min")
    assert reset.metrics.get(key="CVS_acc").label == "CVS assessment accuracy"
    assert events_for(reset).first().data == {
        "fields": ["about", "tie_method"],
        "metrics_added": [],
        "metrics_updated": {"CVS_acc": ["label"]},
    }


def test_ensure_medvidbench_restores_missing_metrics_and_protocol_fields():
    benchmark = ensure_plugin_benchmark("medvidbench")
    benchmark.metrics.filter(key="RC_llm").delete()
    benchmark.metrics.filter(key="CVS_acc").update(task="tal", position=99)

    ensure_plugin_benchmark("medvidbench")

    assert list(benchmark.metrics.values_list("key", flat=True)) == MEDVIDBENCH_KEYS
    assert benchmark.metrics.get(key="CVS_acc").task == "cvs_assessment"
    assert events_for(benchmark).first().data == {
        "fields": [],
        "metrics_added": ["RC_llm"],
        "metrics_updated": {"CVS_acc": ["task", "position"]},
    }


def test_ensure_medvidbench_does_not_republish_a_hidden_benchmark():
    benchmark = ensure_plugin_benchmark("medvidbench")
    update_benchmark(benchmark, actor=None, is_public=False)

    assert ensure_plugin_benchmark("medvidbench", overwrite=True).is_public is False


# update_benchmark, update_metric ----------------------------------------------------------------


def test_update_benchmark_saves_and_audits_from_and_to():
    benchmark = BenchmarkFactory(ranking_decimals=3)
    maintainer = UserFactory()

    update_benchmark(
        benchmark,
        actor=maintainer,
        note="match the official app",
        ranking_decimals=None,
        tie_method="dense",
        name=benchmark.name,
    )

    benchmark.refresh_from_db()
    assert (benchmark.ranking_decimals, benchmark.tie_method) == (None, "dense")
    (event,) = AuditEvent.objects.all()
    assert (event.action, event.actor) == ("benchmark.benchmark.updated", maintainer)
    assert event.data == {
        "changes": {
            "ranking_decimals": {"from": 3, "to": None},
            "tie_method": {"from": "min", "to": "dense"},
        },
        "note": "match the official app",
    }


def test_update_benchmark_without_a_change_audits_nothing():
    benchmark = BenchmarkFactory()

    update_benchmark(benchmark, actor=None, name=benchmark.name)

    assert AuditEvent.objects.count() == 0


@pytest.mark.parametrize("field", ["slug", "created_at", "id"])
def test_update_benchmark_refuses_fixed_fields(field):
    with pytest.raises(ValueError, match=f"not editable on a benchmark: {field}"):
        update_benchmark(BenchmarkFactory(), actor=None, **{field: None})


def test_update_metric_changes_only_presentation():
    benchmark = ensure_plugin_benchmark("medvidbench")
    metric = benchmark.metrics.get(key="STG_mIoU")

    update_metric(metric, actor=None, display_decimals=2, label="STG mIoU")

    metric.refresh_from_db()
    assert (metric.display_decimals, metric.label) == (2, "STG mIoU")
    assert events_for(metric).get().data == {
        "changes": {
            "display_decimals": {"from": 3, "to": 2},
            "label": {"from": "Spatiotemporal grounding mIoU", "to": "STG mIoU"},
        },
        "note": "",
    }
    with pytest.raises(ValueError, match="not editable on a metric: key, task"):
        update_metric(metric, actor=None, key="STG", task="tal")


@pytest.mark.django_db(transaction=True)
def test_concurrent_imports_take_consecutive_versions(testset_dir, tmp_path):
    # select_for_update on the benchmark row serialises imports; SQLite has no row locks (and
    # its in-memory test database is not shared between threads), so this runs on PostgreSQL.
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    benchmark = BenchmarkFactory(slug="medvidbench")
    paths = [
        write_ground_truth(tmp_path / f"gt{index}.json", small_ground_truth()) for index in range(4)
    ]
    barrier = threading.Barrier(len(paths))
    errors: list[BaseException] = []

    def run(path):
        try:
            barrier.wait()
            import_testset(benchmark, path)
        except BaseException as error:  # reported below, a thread cannot raise into the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sorted(TestSet.objects.values_list("version", flat=True)) == [1, 2, 3, 4]
    assert TestSet.objects.filter(is_active=True).count() == 1
    assert len(files_under(testset_dir / "medvidbench")) == 4


# The ranking method and order (issue 14) ---------------------------------------------------------


def two_metric_benchmark():
    benchmark = BenchmarkFactory()
    MetricFactory(benchmark=benchmark, key="IoU", position=1)
    MetricFactory(benchmark=benchmark, key="ACC@0.5", position=2)
    return benchmark


@pytest.fixture
def board_inputs_changed():
    """The benchmark ids the board-input listeners are called with, once the change commits
    (a listener is called in the change's transaction and defers its work to the commit, as
    the board's refresh does)."""
    called: list[int] = []

    def listener(benchmark_id: int) -> None:
        transaction.on_commit(partial(called.append, benchmark_id))

    add_board_input_listener(listener)
    yield called
    board_input_listeners.remove(listener)


def test_update_benchmark_sets_a_lexicographic_order_audited_and_recomputes_the_board(
    board_inputs_changed, django_capture_on_commit_callbacks
):
    benchmark = two_metric_benchmark()
    maintainer = UserFactory()

    with django_capture_on_commit_callbacks(execute=True):
        update_benchmark(
            benchmark, actor=maintainer, ranking_method="lexicographic", ranking_order=["IoU"]
        )

    benchmark.refresh_from_db()
    assert (benchmark.ranking_method, benchmark.ranking_order) == ("lexicographic", ["IoU"])
    (event,) = AuditEvent.objects.all()
    assert (event.action, event.actor, event.data["changes"]) == (
        "benchmark.benchmark.updated",
        maintainer,
        {
            "ranking_method": {"from": "mean_rank", "to": "lexicographic"},
            "ranking_order": {"from": [], "to": ["IoU"]},
        },
    )
    assert board_inputs_changed == [benchmark.pk]


def test_changing_only_the_order_recomputes_the_board_too(
    board_inputs_changed, django_capture_on_commit_callbacks
):
    benchmark = two_metric_benchmark()
    update_benchmark(benchmark, actor=None, ranking_method="lexicographic", ranking_order=["IoU"])

    with django_capture_on_commit_callbacks(execute=True):
        update_benchmark(benchmark, actor=None, ranking_order=["ACC@0.5", "IoU"])

    assert board_inputs_changed == [benchmark.pk]
    assert Benchmark.objects.get(pk=benchmark.pk).ranking_order == ["ACC@0.5", "IoU"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"ranking_method": "lexicographic"},
            "The lexicographic method needs an order: at least one metric key.",
        ),
        (
            {"ranking_method": "lexicographic", "ranking_order": ["IoU", "mIoU"]},
            "The ranking order names ['mIoU'], which is not among the metrics ranked: "
            "['IoU', 'ACC@0.5'].",
        ),
        (
            {"ranking_order": ["mIoU"]},  # a stale key is refused under mean rank as well
            "The ranking order names ['mIoU'], which is not among the metrics ranked: "
            "['IoU', 'ACC@0.5'].",
        ),
        (
            {"ranking_method": "lexicographic", "ranking_order": ["IoU", "IoU"]},
            "Order repeats metric keys ['IoU']: ['IoU', 'IoU'].",
        ),
        (
            {"ranking_order": "IoU"},
            "The ranking order must be a list of metric keys, e.g. [\"IoU\"], not 'IoU'.",
        ),
    ],
)
def test_update_benchmark_refuses_an_order_that_cannot_rank_the_board(changes, message):
    benchmark = two_metric_benchmark()

    with pytest.raises(InvalidRankingPolicy) as refused:
        update_benchmark(benchmark, actor=None, **changes)

    assert str(refused.value) == message
    benchmark.refresh_from_db()
    assert (benchmark.ranking_method, benchmark.ranking_order) == ("mean_rank", [])
    assert AuditEvent.objects.count() == 0


def test_ensure_benchmark_carries_the_definitions_method_and_order():
    definition = dataclasses.replace(
        MEDVIDBENCH,
        slug="lexi",
        ranking_method=RankingMethod.LEXICOGRAPHIC,
        ranking_order=("STG_mIoU", "CVS_acc"),
    )

    benchmark = ensure_benchmark(definition)

    assert (benchmark.ranking_method, benchmark.ranking_order) == (
        "lexicographic",
        ["STG_mIoU", "CVS_acc"],
    )
    update_benchmark(benchmark, actor=None, ranking_method="mean_rank", ranking_order=[])
    reset = ensure_benchmark(definition, overwrite=True)
    assert (reset.ranking_method, reset.ranking_order) == ("lexicographic", ["STG_mIoU", "CVS_acc"])
    assert events_for(reset).first().data["fields"] == ["ranking_method", "ranking_order"]
