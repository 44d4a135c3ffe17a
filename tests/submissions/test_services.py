import itertools
import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from core import private_files
from core.exceptions import DomainError, InvalidPredictions, InvalidTransition, QuotaExceeded
from core.models import AuditEvent
from submissions import services
from submissions.enums import EVALUATION_TRANSITIONS, EvaluationStatus, FailureCode
from submissions.models import Evaluation, Submission
from submissions.services import SubmissionDetails
from tests.accounts.factories import UserFactory

from .factories import EvaluationFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
ALL_PAIRS = list(itertools.product(EvaluationStatus, EvaluationStatus))


@pytest.mark.parametrize(("current", "new"), ALL_PAIRS, ids=[f"{a}->{b}" for a, b in ALL_PAIRS])
def test_the_state_machine_accepts_exactly_the_allowed_moves(current, new):
    failed_code = FailureCode.INTERNAL_ERROR if current == EvaluationStatus.FAILED else ""
    evaluation = EvaluationFactory(status=current, error_code=failed_code)
    before = AuditEvent.objects.count()
    code = FailureCode.INTERNAL_ERROR if new == EvaluationStatus.FAILED else ""
    if new in EVALUATION_TRANSITIONS[current]:
        services.set_evaluation_status(evaluation, new, error_code=code)
        evaluation.refresh_from_db()
        assert evaluation.status == new
        assert AuditEvent.objects.count() == before + 1
        event = AuditEvent.objects.first()
        assert (event.action, event.data["from"], event.data["to"]) == (
            f"submissions.evaluation.{new.value}",
            current.value,
            new.value,
        )
    else:
        with pytest.raises(InvalidTransition):
            services.set_evaluation_status(evaluation, new, error_code=code)
        evaluation.refresh_from_db()
        assert evaluation.status == current
        assert AuditEvent.objects.count() == before


def test_each_state_stamps_its_time():
    evaluation = EvaluationFactory()
    for state in (EvaluationStatus.QUEUED, EvaluationStatus.SCORING, EvaluationStatus.SCORED):
        services.set_evaluation_status(evaluation, state)
    evaluation.refresh_from_db()
    assert evaluation.queued_at <= evaluation.scoring_started_at <= evaluation.scored_at


def details(name="MyModel", **kwargs):
    return SubmissionDetails(model_name=name, institution="Lab", contact_email="a@b.org", **kwargs)


def test_a_valid_upload_is_stored_queued_and_scored(
    benchmark, perfect_predictions, private_dir, django_capture_on_commit_callbacks
):
    owner = UserFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        submission = services.create_submission(
            benchmark, owner=owner, details=details(), predictions=perfect_predictions
        )
    assert len(callbacks) == 1  # the scoring task, queued on commit
    assert private_files.read(submission.predictions_file) == perfect_predictions
    assert (private_dir / submission.predictions_file).read_bytes() == perfect_predictions
    assert submission.predictions_file.startswith(f"predictions/{benchmark.slug}/")
    evaluation = submission.evaluations.get()
    assert evaluation.status == EvaluationStatus.QUEUED

    services.score_evaluation(evaluation)
    evaluation.refresh_from_db()
    assert evaluation.status == EvaluationStatus.SCORED
    assert evaluation.attempts == 1
    assert evaluation.metrics["TAG_mIoU@0.3"] == 1.0
    assert evaluation.metrics["CVS_acc"] == 1.0
    assert evaluation.metrics["VS_llm"] is None
    assert evaluation.scorer_version == evaluation.result["scorer_version"]


def test_scoring_twice_yields_one_result(benchmark, perfect_predictions):
    submission = services.create_submission(
        benchmark, owner=UserFactory(), details=details(), predictions=perfect_predictions
    )
    evaluation = submission.evaluations.get()
    services.score_evaluation(evaluation)
    events = AuditEvent.objects.count()
    services.score_evaluation(evaluation)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.attempts) == (EvaluationStatus.SCORED, 1)
    assert AuditEvent.objects.count() == events
    assert Evaluation.objects.count() == 1


def test_an_interrupted_run_is_scored_again(benchmark, perfect_predictions):
    submission = services.create_submission(
        benchmark, owner=UserFactory(), details=details(), predictions=perfect_predictions
    )
    evaluation = submission.evaluations.get()
    services.set_evaluation_status(evaluation, EvaluationStatus.SCORING)
    Evaluation.objects.filter(pk=evaluation.pk).update(attempts=1)
    services.score_evaluation(evaluation)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.attempts) == (EvaluationStatus.SCORED, 2)


def test_a_run_interrupted_too_often_fails_with_a_message(benchmark, perfect_predictions):
    submission = services.create_submission(
        benchmark, owner=UserFactory(), details=details(), predictions=perfect_predictions
    )
    evaluation = submission.evaluations.get()
    services.set_evaluation_status(evaluation, EvaluationStatus.SCORING)
    Evaluation.objects.filter(pk=evaluation.pk).update(attempts=services.MAX_SCORING_ATTEMPTS)
    services.score_evaluation(evaluation)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.error_code) == (
        EvaluationStatus.FAILED,
        FailureCode.TOO_MANY_ATTEMPTS,
    )


def test_a_file_altered_after_upload_fails_the_run_not_the_worker(benchmark, perfect_predictions):
    submission = services.create_submission(
        benchmark, owner=UserFactory(), details=details(), predictions=perfect_predictions
    )
    (Path(settings.PODIUM_PRIVATE_DIR) / submission.predictions_file).write_text("[]")
    evaluation = services.score_evaluation(submission.evaluations.get())
    assert evaluation.status == EvaluationStatus.FAILED
    assert evaluation.error_code == FailureCode.INVALID_PREDICTIONS
    assert "expected 5 rows" in evaluation.error_message


def stored_files(private_dir: Path) -> list[Path]:
    return sorted((private_dir / "predictions").rglob("*.json"))


def test_a_misaligned_file_is_rejected_and_nothing_is_stored(
    benchmark, predictions_for, private_dir
):
    bad = predictions_for(["a", "b", "c", "d", "e"]).replace(b'"tal"', b'"stg"', 1)
    with pytest.raises(InvalidPredictions) as caught:
        services.create_submission(
            benchmark, owner=UserFactory(), details=details(), predictions=bad
        )
    assert caught.value.messages[0].startswith("row 0, field 'qa_type': expected 'tal'")
    assert Submission.objects.count() == 0
    assert stored_files(private_dir) == []


def test_an_oversized_file_is_rejected(benchmark, perfect_predictions):
    benchmark.max_upload_mb = 1
    big = b" " * (1024 * 1024 + 1)
    with pytest.raises(InvalidPredictions, match="accepts at most 1 MB"):
        services.create_submission(
            benchmark, owner=UserFactory(), details=details(), predictions=big
        )


def test_a_published_model_name_is_unique_per_benchmark(
    benchmark, perfect_predictions, private_dir
):
    services.create_submission(
        benchmark, owner=UserFactory(), details=details("Same"), predictions=perfect_predictions
    )
    # Other files (the same file from another account would be refused as a copy first).
    with pytest.raises(DomainError, match="already exists"):
        services.create_submission(
            benchmark,
            owner=UserFactory(),
            details=details("same"),
            predictions=perfect_predictions + b"\n",
        )
    assert len(stored_files(private_dir)) == 1
    # Evaluate-only entries never publish, so their names may repeat.
    services.create_submission(
        benchmark,
        owner=UserFactory(),
        details=details("Same", publish=False),
        predictions=perfect_predictions + b" ",
    )


def test_the_daily_quota_is_enforced(benchmark, perfect_predictions):
    benchmark.daily_submission_limit = 2
    benchmark.save()
    owner = UserFactory()
    for name in ("A", "B"):
        services.create_submission(
            benchmark, owner=owner, details=details(name), predictions=perfect_predictions
        )
    assert services.evaluations_left_today(owner, benchmark) == 0
    with pytest.raises(QuotaExceeded, match="used all 2 evaluations"):
        services.create_submission(
            benchmark, owner=owner, details=details("C"), predictions=perfect_predictions
        )
    assert services.evaluations_left_today(UserFactory(), benchmark) == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs row locks (PostgreSQL)")
def test_twenty_parallel_uploads_with_a_limit_of_five_accept_exactly_five(
    benchmark, perfect_predictions
):
    owner = UserFactory()
    outcomes = []
    barrier = threading.Barrier(20)

    def upload(number):
        barrier.wait()
        try:
            services.create_submission(
                benchmark,
                owner=owner,
                details=details(f"M{number}"),
                predictions=perfect_predictions,
            )
            outcomes.append("accepted")
        except QuotaExceeded:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["accepted"] * 5 + ["refused"] * 15
    assert Evaluation.objects.filter(requested_by=owner).count() == 5


def test_a_maintainers_reruns_of_other_entries_do_not_use_their_quota(benchmark):
    from submissions.services import evaluations_used_today
    from tests.accounts.factories import UserFactory
    from tests.submissions.factories import EvaluationFactory

    maintainer = UserFactory(is_staff=True)
    EvaluationFactory.create_batch(3, submission__benchmark=benchmark, requested_by=maintainer)
    EvaluationFactory(
        submission__benchmark=benchmark, submission__owner=maintainer, requested_by=maintainer
    )

    assert evaluations_used_today(maintainer, benchmark) == 1


def test_an_evaluate_only_entry_cannot_be_nominated():
    from core.exceptions import InvalidTransition
    from submissions.enums import VerificationStatus
    from submissions.services import set_verification_status
    from tests.submissions.factories import SubmissionFactory

    with pytest.raises(InvalidTransition, match="evaluate-only"):
        set_verification_status(
            SubmissionFactory(publish=False), VerificationStatus.NOMINATED, actor=None
        )


def test_the_length_limit_is_the_benchmarks_and_the_scorer_applies_it_too(
    benchmark, predictions_for, private_dir
):
    """The limit is read from the Benchmark row (edited in the admin, audited) on upload, and
    again when a run is scored: a run of a file accepted under a higher limit fails with the
    same row and field instead of reaching the judge."""
    from benchmark.services import update_benchmark

    upload = predictions_for(["a", "b", "c", "d", "x" * 12])
    accepted = services.create_submission(
        benchmark, owner=UserFactory(), details=details("Twelve"), predictions=upload
    )
    update_benchmark(benchmark, actor=None, max_prediction_chars=11)

    with pytest.raises(InvalidPredictions) as caught:
        services.validate_predictions(benchmark, upload)
    run = services.score_evaluation(accepted.evaluations.get())

    message = (
        "row 4, field 'prediction': is 12 characters long; this benchmark accepts at most 11 "
        "characters per prediction"
    )
    assert caught.value.messages == [message]
    assert (run.state, run.error_code, run.error_message) == (
        EvaluationStatus.FAILED,
        FailureCode.INVALID_PREDICTIONS,
        message,
    )
    change = AuditEvent.objects.get(action="benchmark.benchmark.updated")
    assert change.data["changes"]["max_prediction_chars"] == {"from": 20_000, "to": 11}
