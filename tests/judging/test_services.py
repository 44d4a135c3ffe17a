"""The judge job end to end against the stand-in judge on loopback: items, verdicts, the cache,
faults, failure and recovery, and the published metrics."""

import pytest

from benchmark.scoring import load_predictions
from benchmark.scoring.judge import aggregate, build_items
from benchmark.selectors import active_testset, load_scoring_testset
from core.exceptions import InvalidTransition, JudgeUnavailable
from judging import services
from judging.enums import ItemState, JobStatus
from judging.models import JudgeEndpoint, JudgeItem, JudgeJob, Verdict
from judging.standin import Faults, deterministic_verdict
from submissions.enums import EvaluationStatus
from submissions.models import Evaluation, Submission
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# The caption test set (conftest): DVC sample 1 matches two events at all three thresholds (6
# items, 2 distinct prompts), sample 2 one event at 0.3 and 0.5 (IoU 2/3: 2 items, 1 prompt),
# sample 3 has no answer; one video summary is empty; both region captions are answered.
ITEMS = 6 + 2 + 1 + 2
PROMPTS = 2 + 1 + 1 + 2


def expected_metrics(benchmark, submission):
    """What the stand-in's deterministic verdicts must aggregate to (the aggregation itself is
    checked by hand-computed values in tests/benchmark/scoring/test_judge.py)."""
    test_set = load_scoring_testset(active_testset(benchmark))
    predictions = load_predictions(submission.predictions_path.read_bytes(), test_set)
    rubric = benchmark.rubric()
    items = build_items(test_set, predictions)
    verdicts = {item.key: deterministic_verdict(item.prompt(rubric)) for item in items}
    return aggregate(test_set, items, verdicts, rubric).metrics


def run(job):
    return services.run_job(job.pk)


def test_starting_builds_the_items_of_section_5_and_moves_the_run_to_judging(scored_run):
    job = services.start_judge(scored_run, enqueue=False)

    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.JUDGING
    assert job.items_total == ITEMS
    by_metric = {
        metric: job.items.filter(metric=metric).count()
        for metric in ("DVC_llm", "VS_llm", "RC_llm")
    }
    assert by_metric == {"DVC_llm": 8, "VS_llm": 1, "RC_llm": 2}
    assert sorted(
        job.items.filter(metric="DVC_llm", sample_index=1).values_list("threshold", flat=True)
    ) == [0.3, 0.3, 0.5, 0.5, 0.7, 0.7]
    assert job.rubric_version == scored_run.submission.benchmark.judge_rubric_version
    prompt = job.items.get(metric="VS_llm").prompt
    assert "predicted video summary" in prompt
    assert "**Prediction:** The surgeon dissects tissue." in prompt


def test_a_job_judges_every_item_publishes_the_metrics_and_completes_the_run(scored_run, standin):
    job = services.start_judge(scored_run, enqueue=False)

    job = run(job)

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.DONE
    assert scored_run.state == EvaluationStatus.COMPLETE
    assert standin.calls == PROMPTS  # identical prompts in a job are sent once
    assert (job.items_done, job.items_failed, job.calls) == (ITEMS, 0, PROMPTS)
    assert job.prompt_tokens > 0
    assert job.completion_tokens > 0
    expected = expected_metrics(scored_run.submission.benchmark, scored_run.submission)
    for name in ("DVC_llm", "VS_llm", "RC_llm"):
        assert scored_run.metrics[name] == expected[name]
        assert 1.0 <= scored_run.metrics[name] <= 5.0
    assert scored_run.result["counts"]["DVC_llm"] == {"scored": 8, "total": 8}
    assert set(scored_run.result["per_dataset"]["DVC_llm"]) == {"AVOS", "CoPESD"}
    # The automatic metrics are untouched.
    assert scored_run.metrics["TAG_mIoU@0.3"] == 1.0


def test_the_board_shows_the_judge_metrics_once_published(
    scored_run, django_capture_on_commit_callbacks
):
    from submissions.models import BoardEntry

    entry = BoardEntry.objects.get(submission=scored_run.submission)
    assert entry.judge_pending
    assert entry.values["VS_llm"] is None

    with django_capture_on_commit_callbacks(execute=True):
        run(services.start_judge(scored_run, enqueue=False))

    entry = BoardEntry.objects.get(submission=scored_run.submission)
    assert not entry.judge_pending
    assert entry.values["VS_llm"] is not None


def test_a_rerun_of_a_finished_job_makes_no_call(scored_run, standin):
    run(services.start_judge(scored_run, enqueue=False))
    scored_run.refresh_from_db()
    standin.reset_counters()

    job = services.rerun_judge(scored_run, actor=UserFactory(is_staff=True))
    job = run(job)

    job.refresh_from_db()
    assert standin.calls == 0
    assert job.state == JobStatus.DONE
    assert job.items_cached == ITEMS
    rerun = job.evaluation
    rerun.refresh_from_db()
    assert rerun.pk != scored_run.pk
    assert rerun.metrics == scored_run.metrics


def test_the_cache_serves_another_submission_with_the_same_answers(scored_run, standin, upload):
    run(services.start_judge(scored_run, enqueue=False))
    standin.reset_counters()
    submission = create_submission(
        scored_run.submission.benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Copycat"),
        predictions=upload(),
    )
    evaluation = score_evaluation(submission.evaluations.get())

    run(services.start_judge(evaluation, enqueue=False))

    evaluation.refresh_from_db()
    assert standin.calls == 0
    assert evaluation.state == EvaluationStatus.COMPLETE
    assert Verdict.objects.count() == PROMPTS


@pytest.mark.parametrize(
    "faults",
    [
        Faults(fail_first=2, fail_kind="500"),
        Faults(fail_first=1, fail_kind="malformed"),
        Faults(fail_first=1, fail_kind="out_of_range"),
        Faults(fail_first=2, fail_kind="drop"),
        Faults(fail_first=3, fail_kind="429", retry_after=0.01),
        Faults(burst_429=5, retry_after=0.05),
        Faults(fail_first=1, fail_kind="hang", hang_seconds=1.5),
    ],
    ids=["500s", "malformed", "out-of-range", "dropped", "429s", "429-burst", "timeouts"],
)
def test_faults_are_retried_and_every_item_is_judged(scored_run, standin, faults):
    JudgeEndpoint.objects.update(timeout_seconds=0.5)
    standin.faults = faults
    job = services.start_judge(scored_run, enqueue=False)

    job = run(job)

    job.refresh_from_db()
    assert job.state == JobStatus.DONE
    assert job.items_failed == 0
    retries = faults.fail_first * PROMPTS + faults.burst_429
    assert standin.calls == PROMPTS + retries
    assert job.calls == standin.calls
    attempts = sum(JudgeItem.objects.filter(job=job).values_list("attempts", flat=True))
    assert attempts == PROMPTS + retries
    assert (
        job.evaluation.metrics["VS_llm"]
        == expected_metrics(scored_run.submission.benchmark, scored_run.submission)["VS_llm"]
    )


def test_an_item_failing_every_attempt_is_excluded_and_counted(scored_run, standin):
    JudgeEndpoint.objects.update(max_attempts=2)
    # One of the two region captions always answers prose; every other prompt is judged.
    job = services.start_judge(scored_run, enqueue=False)
    bad = job.items.filter(metric="RC_llm").order_by("sample_index").first()
    standin.faults = Faults()
    original = standin.faults.outcome

    def outcome(prompt, **kwargs):
        return "malformed" if prompt == bad.prompt else original(prompt, **kwargs)

    standin.faults.outcome = outcome  # type: ignore[method-assign]

    job = run(job)

    job.refresh_from_db()
    assert job.state == JobStatus.DONE
    assert job.items_failed == 1
    bad.refresh_from_db()
    assert bad.state == ItemState.FAILED
    assert bad.attempts == 2
    assert "unreadable verdict (no score for R2, R3, R8, R5, R4)" in bad.last_error
    evaluation = job.evaluation
    assert evaluation.result["counts"]["RC_llm"] == {"scored": 1, "total": 2}
    assert job.outcome["counts"]["RC_llm"] == {"items": 2, "judged": 1, "failed": 1}


def test_a_judge_that_never_answers_fails_the_job_and_leaves_the_metrics_pending(
    scored_run, standin
):
    JudgeEndpoint.objects.update(max_attempts=3)
    standin.faults = Faults(fail_first=99, fail_kind="500")
    job = services.start_judge(scored_run, enqueue=False)

    job = run(job)

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.FAILED
    assert "could be judged after 3 attempts each" in job.message
    assert "HTTP 500" in job.message
    assert scored_run.state == EvaluationStatus.SCORED
    assert scored_run.metrics["VS_llm"] is None
    assert services.active_job(scored_run) is None

    # Once the endpoint recovers, judging again completes the run.
    standin.faults = Faults()
    job = run(services.start_judge(scored_run, enqueue=False))
    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.COMPLETE


def test_a_refusing_endpoint_stops_the_job_at_once(scored_run):
    JudgeEndpoint.objects.update(base_url="http://127.0.0.1:9/v1", max_attempts=2)
    job = run(services.start_judge(scored_run, enqueue=False))

    job.refresh_from_db()
    assert job.state == JobStatus.FAILED
    assert "connection failed" in job.message


def test_no_endpoint_means_no_job_and_a_clear_reason(scored_run):
    JudgeEndpoint.objects.all().delete()

    with pytest.raises(JudgeUnavailable, match="No LLM judge endpoint is configured"):
        services.start_judge(scored_run)
    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.SCORED
    assert scored_run.metrics["DVC_llm"] is None


def test_a_missing_api_key_is_refused_without_naming_the_variable(
    scored_run, settings, monkeypatch
):
    # The reason reaches submitters (their judge panel, the API): which variable the key comes
    # from, and whether it is set, is for the superusers' endpoint admin only.
    settings.PODIUM_JUDGE_KEY_ENV_ALLOWLIST = ["PODIUM_TEST_JUDGE_KEY"]
    monkeypatch.delenv("PODIUM_TEST_JUDGE_KEY", raising=False)
    JudgeEndpoint.objects.update(api_key_env="PODIUM_TEST_JUDGE_KEY")

    with pytest.raises(JudgeUnavailable) as refused:
        services.start_judge(scored_run)

    assert str(refused.value) == (
        "The judge endpoint 'stand-in' has no API key configured, so the caption metrics stay "
        "pending until a superuser configures one."
    )


def test_a_run_that_is_not_scored_cannot_be_judged(scored_run):
    job = run(services.start_judge(scored_run, enqueue=False))
    evaluation = job.evaluation
    evaluation.refresh_from_db()

    with pytest.raises(InvalidTransition):
        services.start_judge(evaluation)


def test_starting_twice_returns_the_same_job(scored_run):
    first = services.start_judge(scored_run, enqueue=False)
    second = services.start_judge(Evaluation.objects.get(pk=scored_run.pk), enqueue=False)

    assert first.pk == second.pk
    assert JudgeJob.objects.count() == 1


def test_a_time_slice_hands_the_job_back_and_the_next_run_continues(
    scored_run, standin, django_capture_on_commit_callbacks
):
    JudgeEndpoint.objects.update(concurrency=1)
    standin.faults = Faults(latency=0.2)
    job = services.start_judge(scored_run, enqueue=False)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.run_job(job.pk, time_budget=0.3)

    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED
    assert len(callbacks) == 1  # queued again
    done_first = job.items.exclude(state=ItemState.PENDING).count()
    assert 0 < done_first < ITEMS
    standin.faults = Faults()

    services.run_job(job.pk)

    job.refresh_from_db()
    assert job.state == JobStatus.DONE
    assert standin.calls == PROMPTS  # nothing judged twice
    assert job.runs == 2


def test_a_job_held_by_a_live_worker_is_left_alone(scored_run):
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, worker="elsewhere:1")
    JudgeJob.objects.filter(pk=job.pk).update(heartbeat_at=services.timezone.now())

    assert services.run_job(job.pk) is None


def test_the_reaper_requeues_a_job_whose_worker_stopped_beating(
    scored_run, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_JUDGE_STALE_SECONDS = 0
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, worker="dead:1", heartbeat_at=services.timezone.now(), runs=1
    )

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert services.reap_stale_jobs() == 1

    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED
    assert len(callbacks) == 1


def test_the_reaper_fails_a_job_picked_up_too_often(
    scored_run, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_JUDGE_STALE_SECONDS = 0
    settings.PODIUM_JUDGE_MAX_RUNS = 2
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, worker="dead:1", heartbeat_at=services.timezone.now(), runs=2
    )

    with django_capture_on_commit_callbacks(execute=True):
        services.reap_stale_jobs()

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.FAILED
    assert "stopped too many times" in job.message
    assert scored_run.state == EvaluationStatus.SCORED


def test_auto_start_judges_a_run_right_after_scoring(
    judged_benchmark, upload, submitter, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        submission = create_submission(
            judged_benchmark,
            owner=submitter,
            details=SubmissionDetails(model_name="Auto"),
            predictions=upload(),
        )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        score_evaluation(submission.evaluations.get())

    evaluation = Submission.objects.get(pk=submission.pk).evaluations.get()
    assert evaluation.state == EvaluationStatus.JUDGING
    assert JudgeJob.objects.filter(evaluation=evaluation, status=JobStatus.QUEUED).exists()
    assert callbacks  # the job was queued on commit


def test_cancelling_hands_the_run_back(scored_run):
    job = services.start_judge(scored_run, enqueue=False)

    services.cancel_job(job, actor=UserFactory(is_staff=True))

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.CANCELLED
    assert scored_run.state == EvaluationStatus.SCORED
    assert services.run_job(job.pk) is None
