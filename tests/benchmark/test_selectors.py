import hashlib
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from benchmark.models import Benchmark
from benchmark.selectors import (
    TestSetFileError,
    active_testset,
    benchmark_by_slug,
    load_scoring_testset,
    public_benchmarks,
)
from benchmark.services import import_testset
from plugins.medvidbench.scoring import SCORER_VERSION
from tests.accounts.factories import UserFactory, maintainer_user
from tests.benchmark.factories import (
    BenchmarkFactory,
    TestSetFactory,
    small_ground_truth,
    write_ground_truth,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def imported(testset_dir, tmp_path):
    source = write_ground_truth(tmp_path / "gt.json", small_ground_truth())
    return import_testset(BenchmarkFactory(slug="medvidbench"), source)


def test_active_testset_is_the_active_version_or_none():
    benchmark = BenchmarkFactory()
    TestSetFactory(benchmark=benchmark, version=1)
    assert active_testset(benchmark) is None

    active = TestSetFactory(benchmark=benchmark, version=2, is_active=True)
    TestSetFactory(is_active=True)  # another benchmark's

    assert active_testset(benchmark) == active


def test_public_benchmarks_lists_public_ones_by_name():
    zeta = BenchmarkFactory(name="Zeta", is_public=True)
    alpha = BenchmarkFactory(name="Alpha", is_public=True)
    BenchmarkFactory(name="Hidden", is_public=False)

    assert list(public_benchmarks()) == [alpha, zeta]


def test_a_public_benchmark_is_found_by_anyone():
    benchmark = BenchmarkFactory(slug="medvidbench", is_public=True)

    assert benchmark_by_slug("medvidbench", viewer=AnonymousUser()) == benchmark


def test_a_hidden_benchmark_is_found_by_maintainers_and_the_system_only():
    hidden = BenchmarkFactory(slug="draft", is_public=False)

    assert benchmark_by_slug("draft", viewer=maintainer_user()) == hidden
    assert benchmark_by_slug("draft", viewer=None) == hidden
    for viewer in (AnonymousUser(), UserFactory(), UserFactory(is_staff=True)):
        with pytest.raises(Benchmark.DoesNotExist):
            benchmark_by_slug("draft", viewer=viewer)


def test_an_unknown_slug_is_not_found():
    with pytest.raises(Benchmark.DoesNotExist):
        benchmark_by_slug("nope", viewer=None)


def test_load_scoring_testset_parses_the_stored_file(imported):
    parsed = load_scoring_testset(imported)

    assert parsed.checksum == imported.checksum
    assert len(parsed) == 5
    assert [sample.qa_type for sample in parsed.samples] == [
        "tal",
        "stg",
        "next_action",
        "cvs_assessment",
        "video_summary_gpt",
    ]


def test_load_scoring_testset_parses_once_per_process(imported):
    assert load_scoring_testset(imported) is load_scoring_testset(imported)


def stored(test_set) -> Path:
    return Path(settings.PODIUM_PRIVATE_DIR) / test_set.file_name


def test_a_tampered_file_is_detected(imported):
    tampered = stored(imported).read_bytes().replace(b"tying", b"cutting")
    stored(imported).write_bytes(tampered)

    with pytest.raises(TestSetFileError) as raised:
        load_scoring_testset(imported)

    assert str(raised.value) == (
        f"Test set file {imported.file_name} was altered: its sha256 is "
        f"{hashlib.sha256(tampered).hexdigest()}, the imported file's was {imported.checksum}."
    )


def test_a_missing_file_is_reported(imported):
    stored(imported).unlink()

    with pytest.raises(TestSetFileError) as raised:
        load_scoring_testset(imported)

    assert str(raised.value) == (
        f"Test set file {imported.file_name} cannot be read: it is not in the private store."
    )


def test_a_restored_file_loads_again_after_a_failure(imported):
    original = stored(imported).read_bytes()
    stored(imported).unlink()
    with pytest.raises(TestSetFileError):
        load_scoring_testset(imported)

    stored(imported).write_bytes(original)

    assert load_scoring_testset(imported).checksum == imported.checksum


def test_a_file_the_scorer_now_rejects_is_reported(testset_dir):
    # A row whose file passes the checksum but not the loader (e.g. after a scorer change).
    raw = b'[{"qa_type": "tal"}]'
    test_set = TestSetFactory(checksum=hashlib.sha256(raw).hexdigest())
    stored(test_set).parent.mkdir(parents=True)
    stored(test_set).write_bytes(raw)

    with pytest.raises(TestSetFileError) as raised:
        load_scoring_testset(test_set)

    assert str(raised.value) == (
        f"Test set file {test_set.file_name} no longer loads with scorer {SCORER_VERSION}:\n"
        "The ground-truth file was rejected (1 problem(s)):\n"
        "  - row 0, field 'conversations': expected a non-empty list of turns"
    )
