import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from benchmark.models import Benchmark, Metric, TestSet
from tests.benchmark.factories import BenchmarkFactory, MetricFactory, TestSetFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_at_most_one_test_set_per_benchmark_is_active():
    benchmark = BenchmarkFactory()
    TestSetFactory(benchmark=benchmark, is_active=True)

    with pytest.raises(IntegrityError), transaction.atomic():
        TestSetFactory(benchmark=benchmark, is_active=True)

    assert TestSet.objects.filter(benchmark=benchmark, is_active=True).count() == 1


def test_each_benchmark_may_have_its_own_active_test_set():
    first = TestSetFactory(is_active=True)
    second = TestSetFactory(is_active=True)

    assert list(TestSet.objects.filter(is_active=True).order_by("id")) == [first, second]


def test_any_number_of_inactive_test_sets_may_exist():
    benchmark = BenchmarkFactory()
    TestSetFactory.create_batch(3, benchmark=benchmark)

    assert benchmark.test_sets.count() == 3


def test_a_version_is_unique_per_benchmark():
    existing = TestSetFactory(version=1)

    with pytest.raises(IntegrityError), transaction.atomic():
        TestSetFactory(benchmark=existing.benchmark, version=1)


def test_a_checksum_is_unique_per_benchmark():
    existing = TestSetFactory()

    with pytest.raises(IntegrityError), transaction.atomic():
        TestSetFactory(benchmark=existing.benchmark, checksum=existing.checksum)


def test_the_same_file_may_serve_two_benchmarks():
    existing = TestSetFactory()

    other = TestSetFactory(checksum=existing.checksum)

    assert other.checksum == existing.checksum


@pytest.mark.parametrize("checksum", ["abc", "A" * 64, "g" * 64, ""])
def test_a_checksum_is_64_lowercase_hex_digits(checksum):
    with pytest.raises(IntegrityError), transaction.atomic():
        TestSetFactory(checksum=checksum)


def test_version_zero_is_refused():
    with pytest.raises(IntegrityError), transaction.atomic():
        TestSetFactory(version=0)


def test_a_metric_key_is_unique_per_benchmark():
    metric = MetricFactory(key="TAG_mIoU@0.3")

    with pytest.raises(IntegrityError), transaction.atomic():
        MetricFactory(benchmark=metric.benchmark, key="TAG_mIoU@0.3")


@pytest.mark.parametrize(
    ("field", "value"),
    [("tie_method", "average"), ("ranking_scope", "everywhere"), ("ranking_decimals", 13)],
)
def test_the_ranking_policy_must_be_a_known_one(field, value):
    with pytest.raises(IntegrityError), transaction.atomic():
        BenchmarkFactory(**{field: value})


def test_an_upload_limit_of_zero_megabytes_is_refused():
    with pytest.raises(IntegrityError), transaction.atomic():
        BenchmarkFactory(max_upload_mb=0)


def test_a_metric_direction_must_be_known():
    with pytest.raises(IntegrityError), transaction.atomic():
        MetricFactory(direction="sideways")


def test_a_benchmark_defaults_to_the_about_text_ranking_and_the_official_rules():
    benchmark = Benchmark.objects.create(slug="fresh", name="Fresh")

    assert (benchmark.tie_method, benchmark.ranking_scope, benchmark.ranking_decimals) == (
        "min",
        "global",
        3,
    )
    assert (benchmark.daily_submission_limit, benchmark.max_upload_mb, benchmark.is_public) == (
        5,
        50,
        False,
    )


def test_metrics_are_listed_by_position():
    benchmark = BenchmarkFactory()
    third = MetricFactory(benchmark=benchmark, position=3)
    first = MetricFactory(benchmark=benchmark, position=1)
    second = MetricFactory(benchmark=benchmark, position=2)

    assert list(benchmark.metrics.all()) == [first, second, third]


def test_a_metric_knows_its_direction():
    assert MetricFactory.build(direction="higher").higher_is_better is True
    assert MetricFactory.build(direction="lower").higher_is_better is False


def test_a_test_set_is_named_by_its_key_in_the_private_store():
    test_set = TestSetFactory(benchmark=BenchmarkFactory(slug="medvidbench"), version=2)

    assert test_set.file_name == f"testsets/medvidbench/v2-{test_set.checksum[:12]}.json"
    assert str(test_set) == "medvidbench test set v2"


def test_the_rubric_checksum_is_the_sha256_of_the_prompt():
    benchmark = BenchmarkFactory.build(judge_rubric="Score {prediction}.")

    assert benchmark.judge_rubric_checksum == (
        "ed260e2f296d640774c87664e726f952fbfb3bd4f2397abbff1632072a5c5c51"
    )


def test_factories_make_valid_rows():
    metric = MetricFactory()
    test_set = TestSetFactory()

    assert list(Metric.objects.all()) == [metric]
    assert list(TestSet.objects.all()) == [test_set]
    assert Benchmark.objects.count() == 2


def test_a_prediction_length_limit_below_one_character_is_refused():
    with pytest.raises(IntegrityError), transaction.atomic():
        BenchmarkFactory(max_prediction_chars=0)


def test_medvidbench_accepts_predictions_of_up_to_20000_characters():
    from plugins.medvidbench.definition import MEDVIDBENCH

    assert MEDVIDBENCH.max_prediction_chars == 20_000
    assert Benchmark.objects.create(slug="fresh", name="Fresh").max_prediction_chars == 20_000


def test_an_unknown_ranking_method_is_refused():
    with pytest.raises(IntegrityError), transaction.atomic():
        BenchmarkFactory(ranking_method="borda")


def test_clean_checks_the_ranking_order_against_the_benchmarks_metrics():
    benchmark = BenchmarkFactory()
    MetricFactory(benchmark=benchmark, key="IoU")
    benchmark.ranking_method = "lexicographic"

    with pytest.raises(ValidationError) as refused:
        benchmark.clean()
    assert refused.value.message_dict == {
        "ranking_order": ["The lexicographic method needs an order: at least one metric key."]
    }

    benchmark.ranking_order = ["IoU", "ACC@0.5"]
    with pytest.raises(ValidationError) as refused:
        benchmark.clean()
    assert refused.value.message_dict == {
        "ranking_order": [
            "The ranking order names ['ACC@0.5'], which is not among the metrics ranked: ['IoU']."
        ]
    }

    benchmark.ranking_order = ["IoU"]
    benchmark.clean()
    assert benchmark.is_lexicographic
    assert benchmark.ranking_order_text == "IoU"
