"""The import_testset and setup_benchmarks commands: thin wrappers over the services."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import Benchmark, TestSet
from core.models import AuditEvent
from tests.benchmark.factories import BenchmarkFactory, small_ground_truth, write_ground_truth

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def benchmark():
    return BenchmarkFactory(slug="medvidbench", name="MedVidBench")


@pytest.fixture
def ground_truth(tmp_path):
    return write_ground_truth(tmp_path / "gt.json", small_ground_truth())


def test_import_prints_the_new_version(benchmark, ground_truth, testset_dir):
    output = run("import_testset", "--benchmark", "medvidbench", str(ground_truth))

    test_set = TestSet.objects.get()
    assert output == (
        f"Imported MedVidBench test set v1 (5 records, sha256 {test_set.checksum[:12]}, active) "
        f"as testsets/medvidbench/v1-{test_set.checksum[:12]}.json\n"
    )
    assert (test_set.version, test_set.is_active, test_set.imported_by) == (1, True, None)


def test_import_with_options_and_task_counts(benchmark, ground_truth, testset_dir):
    output = run(
        "import_testset",
        "--benchmark",
        "medvidbench",
        str(ground_truth),
        "--no-activate",
        "--notes",
        "candidate",
        "--verbosity",
        "2",
    )

    test_set = TestSet.objects.get()
    assert (test_set.is_active, test_set.notes) == (False, "candidate")
    assert output.splitlines()[1:] == [
        "  cvs_assessment            1",
        "  next_action               1",
        "  stg                       1",
        "  tal                       1",
        "  video_summary             1",
    ]


def test_importing_the_same_file_again_says_so(benchmark, ground_truth, testset_dir):
    run("import_testset", "--benchmark", "medvidbench", str(ground_truth))

    output = run("import_testset", "--benchmark", "medvidbench", str(ground_truth))

    assert (
        output == "MedVidBench already has this file as test set v1 (active); nothing imported.\n"
    )
    assert TestSet.objects.count() == 1


def test_a_bad_file_fails_with_the_loaders_message(benchmark, testset_dir, tmp_path):
    records = small_ground_truth()
    records[0]["conversations"] = []
    bad = write_ground_truth(tmp_path / "bad.json", records)

    with pytest.raises(CommandError) as raised:
        run("import_testset", "--benchmark", "medvidbench", str(bad))

    assert str(raised.value) == (
        "The ground-truth file was rejected (1 problem(s)):\n"
        "  - row 0, field 'conversations': expected a non-empty list of turns"
    )
    # CommandError is what manage.py prints as one line and exit status 1, without a traceback.
    assert raised.value.returncode == 1
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__ is True
    assert TestSet.objects.count() == 0
    assert not testset_dir.exists()


def test_an_unknown_benchmark_fails(ground_truth, testset_dir):
    with pytest.raises(CommandError) as raised:
        run("import_testset", "--benchmark", "nope", str(ground_truth))

    assert str(raised.value) == (
        "No benchmark with slug 'nope'. Run `manage.py setup_benchmarks` first."
    )


def test_setup_benchmarks_is_idempotent():
    first = run("setup_benchmarks")
    second = run("setup_benchmarks")

    assert (
        first
        == second
        == (
            # Every installed plugin's benchmark, by plugin key.
            "Demo clinical QA (clinicalqa): accuracy, open_ended_rating\n"
            "MedSG-Bench (medsg-bench): IoU, ACC@0.5, IoU_items, ACC@0.5_items, "
            "IoU_Registered_Diff, IoU_Non_Registered_Diff, IoU_multi_view, "
            "IoU_object_tracking, IoU_concept, IoU_patch, IoU_crossmodal, IoU_referring\n"
            "MedVidBench (medvidbench): CVS_acc, NAP_acc, SA_acc, STG_mIoU, TAG_mIoU@0.3, "
            "TAG_mIoU@0.5, DVC_F1, DVC_llm, VS_llm, RC_llm\n"
        )
    )
    assert Benchmark.objects.get(slug="medvidbench").metrics.count() == 10
    assert Benchmark.objects.get(slug="medsg-bench").plugin == "medsg-bench"
    assert (
        list(AuditEvent.objects.values_list("action", flat=True))
        == ["benchmark.benchmark.created"] * 3
    )


def test_setup_benchmarks_overwrite_resets_edited_texts():
    run("setup_benchmarks")
    Benchmark.objects.update(about="Edited by hand.")

    run("setup_benchmarks")
    assert Benchmark.objects.get(slug="medvidbench").about == "Edited by hand."

    run("setup_benchmarks", "--overwrite", "--verbosity", "0")
    medvidbench = Benchmark.objects.get(slug="medvidbench")
    assert medvidbench.about.startswith("MedVidBench is a comprehensive benchmark")
