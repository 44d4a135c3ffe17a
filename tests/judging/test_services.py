"""The judge job end to end against the stand-in judge on loopback: items, verdicts, the cache,
faults, failure and recovery, and the published metrics."""

import threading
import time

import pytest
from django.contrib.auth.models import Permission

from benchmark.selectors import active_testset, load_scoring_testset
from core import private_files, workers
from core.exceptions import DomainError, InvalidTransition, JudgeUnavailable
from core.hooks import resolved
from inference import lifecycle
from judging import services
from judging.enums import ItemState, JobStatus
from judging.models import JudgeEndpoint, JudgeItem, JudgeJob, Verdict
from judging.standin import Faults, StandinJudge, deterministic_verdict
from plugins.medvidbench.scoring import load_predictions
from plugins.medvidbench.scoring.judge import aggregate, build_items
from submissions.enums import EvaluationStatus
from submissions.models import Evaluation, Notification, NotificationKind, Submission
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory
from verifying.services import reap_dead_workers_reruns

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
    predictions = load_predictions(private_files.read(submission.predictions_file), test_set)
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
    submission = create_submission(  # the same person's second entry with the same file
        scored_run.submission.benchmark,
        owner=scored_run.submission.owner,
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
    # Only answers are attempts: a transport failure (429, 5xx, a drop, a timeout) costs none.
    unusable = (
        faults.fail_first * PROMPTS if faults.fail_kind in ("malformed", "out_of_range") else 0
    )
    attempts = sum(JudgeItem.objects.filter(job=job).values_list("attempts", flat=True))
    assert attempts == PROMPTS + unusable
    assert (
        job.evaluation.metrics["VS_llm"]
        == expected_metrics(scored_run.submission.benchmark, scored_run.submission)["VS_llm"]
    )


def hold_with_one_bad_item(scored_run, standin):
    """A job where one of the two region captions always answers prose (2 attempts): held."""
    JudgeEndpoint.objects.update(max_attempts=2)
    job = services.start_judge(scored_run, enqueue=False)
    bad = job.items.filter(metric="RC_llm").order_by("sample_index").first()
    standin.faults = Faults()
    original = standin.faults.outcome

    def outcome(prompt, **kwargs):
        return "malformed" if prompt == bad.prompt else original(prompt, **kwargs)

    standin.faults.outcome = outcome  # type: ignore[method-assign]
    run(job)
    job.refresh_from_db()
    bad.refresh_from_db()
    return job, bad


def test_an_item_failing_every_attempt_holds_the_job_and_publishes_nothing(scored_run, standin):
    job, bad = hold_with_one_bad_item(scored_run, standin)

    scored_run.refresh_from_db()
    assert job.state == JobStatus.HELD
    assert job.items_failed == 1
    assert bad.state == ItemState.FAILED
    assert bad.attempts == 2
    assert "unreadable verdict (no score for R2, R3, R8, R5, R4)" in bad.last_error
    assert job.message.startswith("1 of 11 items got no usable verdict after 2 attempts each")
    assert job.outcome["counts"]["RC_llm"] == {"items": 2, "judged": 1, "failed": 1}
    # Nothing over a subset: the run still waits, every judge metric pending.
    assert scored_run.state == EvaluationStatus.JUDGING
    assert [scored_run.metrics[name] for name in ("DVC_llm", "VS_llm", "RC_llm")] == [None] * 3
    assert services.run_job(job.pk) is None  # a held job is not picked up again


def test_the_submitter_is_told_that_a_held_judgement_waits_for_a_maintainer(
    scored_run, standin, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job, _ = hold_with_one_bad_item(scored_run, standin)

    assert job.state == JobStatus.HELD
    notification = Notification.objects.get(kind=NotificationKind.JUDGE_HELD)
    assert (notification.recipient, notification.kind) == (
        scored_run.submission.owner,
        "judge_held",
    )
    assert notification.message.startswith(
        "The LLM judge got no usable verdict for 1 of 11 caption items of "
    )
    assert "the maintainers will either accept the judgement without those items" in (
        notification.message
    )


def test_a_maintainer_accepts_a_held_judgement_and_the_board_says_what_it_excludes(
    scored_run, standin, django_capture_on_commit_callbacks, client
):
    from core.models import AuditEvent
    from submissions.models import BoardEntry

    job, _ = hold_with_one_bad_item(scored_run, standin)
    maintainer = UserFactory(is_staff=True)
    maintainer.user_permissions.add(Permission.objects.get(codename="rerun_judgejob"))

    with django_capture_on_commit_callbacks(execute=True):
        services.accept_partial_judgement(job, actor=maintainer, note="one caption is gibberish")

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.DONE
    assert "RC_llm over 1 of 2 items" in job.message
    assert scored_run.state == EvaluationStatus.COMPLETE
    assert scored_run.result["counts"]["RC_llm"] == {"scored": 1, "total": 2}
    assert scored_run.result["counts"]["VS_llm"] == {"scored": 1, "total": 1}
    expected = expected_metrics(scored_run.submission.benchmark, scored_run.submission)
    assert scored_run.metrics["VS_llm"] == expected["VS_llm"]
    assert scored_run.metrics["DVC_llm"] == expected["DVC_llm"]
    entry = BoardEntry.objects.get(submission=scored_run.submission)
    assert entry.values["RC_llm"] == scored_run.metrics["RC_llm"]
    assert entry.judged_over == {"RC_llm": {"judged": 1, "items": 2}}
    board = client.get("/b/medvidbench/community/").content.decode()
    rc_llm = f"{scored_run.metrics['RC_llm']:.3f}"
    assert f'{rc_llm} <small class="judged-over">over 1 of 2 items</small></td>' in board
    assert board.count('class="judged-over"') == 1  # VS_llm and DVC_llm are over every item
    event = AuditEvent.objects.get(action="judging.job.partial_accepted")
    assert (event.actor, event.data["excluded"], event.data["note"]) == (
        maintainer,
        {"RC_llm": 1},
        "one caption is gibberish",
    )


def test_accepting_a_partial_judgement_needs_a_maintainer_a_note_and_a_held_job(
    scored_run, standin
):
    job, _ = hold_with_one_bad_item(scored_run, standin)
    maintainer = UserFactory(is_staff=True)
    maintainer.user_permissions.add(Permission.objects.get(codename="rerun_judgejob"))

    with pytest.raises(DomainError, match="Only a maintainer may accept"):
        services.accept_partial_judgement(job, actor=UserFactory(is_staff=True), note="fine")
    with pytest.raises(DomainError, match="Say why"):
        services.accept_partial_judgement(job, actor=maintainer, note="  ")
    job.refresh_from_db()
    assert job.state == JobStatus.HELD
    services.cancel_job(job, actor=maintainer)
    with pytest.raises(InvalidTransition, match="this one is cancelled"):
        services.accept_partial_judgement(job, actor=maintainer, note="fine")
    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.SCORED
    assert scored_run.metrics["RC_llm"] is None


def test_publishing_over_a_subset_without_acceptance_is_refused(scored_run, standin):
    from submissions.judge_step import publish_judge_metrics

    job, _ = hold_with_one_bad_item(scored_run, standin)
    outcome = services.jobs._judgement(job).outcome

    with pytest.raises(InvalidTransition, match="RC_llm lacks 1"):
        publish_judge_metrics(scored_run, outcome)
    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.JUDGING


@pytest.mark.parametrize(
    "faults",
    [Faults(fail_first=3, fail_kind="500"), Faults(fail_first=3, fail_kind="drop")],
    ids=["500s", "dropped"],
)
def test_transport_failures_beyond_the_attempts_budget_fail_no_item(scored_run, standin, faults):
    JudgeEndpoint.objects.update(max_attempts=2)
    standin.faults = faults

    job = run(services.start_judge(scored_run, enqueue=False))

    job.refresh_from_db()
    assert job.state == JobStatus.DONE
    assert job.items_failed == 0
    assert standin.calls == PROMPTS * 4
    assert (job.unreachable_since, job.next_try_at, job.last_transient_error) == (None, None, "")
    expected = expected_metrics(scored_run.submission.benchmark, scored_run.submission)
    assert job.evaluation.metrics == {**job.evaluation.metrics, **expected}


def probes_allowed(seconds: float, *, base: float, cap: float) -> int:
    """How many probes the outage's schedule (inference.client.Outage) lets start in an outage
    of `seconds`: the first after `base`, each next one at least min(cap, max(base, time
    down)) after the one before."""
    count, at = 0, base
    while at <= seconds:
        count += 1
        at += min(cap, max(base, at))
    return count


def test_a_judge_refusing_connections_for_a_while_fails_no_item_and_is_probed_not_hammered(
    scored_run, standin
):
    JudgeEndpoint.objects.update(max_attempts=2)
    port = standin.port
    back = StandinJudge(port=port)
    down = []  # when it went down and when it was back (monotonic)

    def start_again():
        back.start()
        down.append(time.monotonic())

    down.append(time.monotonic())
    standin.stop()  # connection refused until it is back on the same port
    restart = threading.Timer(1.5, start_again)
    restart.start()
    try:
        job = run(services.start_judge(scored_run, enqueue=False))
    finally:
        restart.join()
        back.stop()

    job.refresh_from_db()
    assert job.state == JobStatus.DONE
    assert job.items_failed == 0
    assert back.calls == PROMPTS
    # While it was down: the calls in flight, then one probe at a time with growing waits
    # (from 0.01 s up to 0.2 s in the test settings: about 12 in 1.5 s), not every item
    # retrying on its own. The allowance follows how long it was really down: on a loaded
    # machine the restart comes late, and the probes go on meanwhile as they should.
    refused = job.calls - PROMPTS
    assert 1 <= refused <= 4 + probes_allowed(down[1] - down[0], base=0.01, cap=0.2) + 1
    expected = expected_metrics(scored_run.submission.benchmark, scored_run.submission)
    assert job.evaluation.metrics == {**job.evaluation.metrics, **expected}


def test_a_judge_down_longer_than_the_outage_limit_fails_the_job_with_metrics_pending(
    scored_run, standin, settings
):
    settings.PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS = 1
    JudgeEndpoint.objects.update(max_attempts=3)
    standin.faults = Faults(fail_first=999, fail_kind="500")
    job = services.start_judge(scored_run, enqueue=False)

    job = run(job)

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.FAILED
    assert job.message.startswith("The judge endpoint was unreachable from ")
    assert " UTC for 1 s (the limit is 1 s): HTTP 500: " in job.message
    assert "The stand-in judge failed on purpose." in job.message
    assert job.message.endswith(
        ". Nothing was published: the caption metrics stay pending, and judging again pays "
        "only for what is not cached."
    )
    assert job.items_failed == 0
    assert job.items.filter(state=ItemState.PENDING).count() == ITEMS
    assert scored_run.state == EvaluationStatus.SCORED
    assert scored_run.metrics["VS_llm"] is None
    assert services.active_job(scored_run) is None

    # Once the endpoint recovers, judging again completes the run.
    standin.faults = Faults()
    job = run(services.start_judge(scored_run, enqueue=False))
    scored_run.refresh_from_db()
    assert scored_run.state == EvaluationStatus.COMPLETE


def test_an_unreachable_address_is_an_outage_that_ends_at_the_limit(scored_run, settings):
    settings.PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS = 0.5
    JudgeEndpoint.objects.update(base_url="http://127.0.0.1:9/v1", max_attempts=2)
    job = run(services.start_judge(scored_run, enqueue=False))

    job.refresh_from_db()
    assert job.state == JobStatus.FAILED
    assert "was unreachable from" in job.message
    assert "connection failed" in job.message
    assert job.items_failed == 0


def test_an_outage_carries_over_into_the_next_time_slice(
    scored_run, standin, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_JUDGE_OUTAGE_PROBE_SECONDS = 0.2
    settings.PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS = 60
    standin.faults = Faults(fail_first=999, fail_kind="500")
    job = services.start_judge(scored_run, enqueue=False)

    with django_capture_on_commit_callbacks(execute=False):
        services.run_job(job.pk, time_budget=1.5)

    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED
    assert job.items.filter(state=ItemState.PENDING).count() == ITEMS
    assert job.unreachable_since is not None
    assert job.next_try_at > job.unreachable_since
    assert job.last_transient_error == "HTTP 500: The stand-in judge failed on purpose."
    since = job.unreachable_since

    settings.PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS = (
        services.timezone.now() - since
    ).total_seconds() + 0.5
    with django_capture_on_commit_callbacks(execute=False):
        services.run_job(job.pk, time_budget=5)

    job.refresh_from_db()
    assert job.state == JobStatus.FAILED  # the outage's clock went on from the first slice
    assert f"unreachable from {since:%Y-%m-%d %H:%M} UTC" in job.message


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


def test_a_job_runs_for_as_many_time_slices_as_it_needs(
    scored_run, settings, django_capture_on_commit_callbacks
):
    """Only a dead worker counts against PODIUM_JUDGE_MAX_RUNS: a large job handed back at the
    end of each of many slices is never failed as "stopped too many times"."""
    settings.PODIUM_JUDGE_MAX_RUNS = 2
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(runs=25)

    with django_capture_on_commit_callbacks(execute=True):
        services.run_job(job.pk)

    job.refresh_from_db()
    assert (job.state, job.runs, job.interruptions) == (JobStatus.DONE, 26, 0)


def test_a_job_that_never_finishes_fails_at_its_last_time_slice(
    scored_run, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_JOB_MAX_SLICES = 25
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(runs=25)

    with django_capture_on_commit_callbacks(execute=True):
        assert services.run_job(job.pk) is None

    job.refresh_from_db()
    scored_run.refresh_from_db()
    assert job.state == JobStatus.FAILED
    assert job.message == (
        "A judge job ran for 25 time slices without finishing, the most one may use "
        "(PODIUM_JOB_MAX_SLICES); nothing was published from it."
    )
    assert scored_run.state == EvaluationStatus.SCORED


def test_a_stale_job_claimed_again_counts_one_interruption(scored_run, settings):
    settings.PODIUM_JUDGE_STALE_SECONDS = 0
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, worker="dead:1", heartbeat_at=services.timezone.now(), runs=1
    )

    claimed = lifecycle.claim(services.JUDGE_JOBS, job.pk)

    assert (claimed.state, claimed.runs, claimed.interruptions) == (JobStatus.RUNNING, 2, 1)


def test_every_worker_reaps_dead_workers_jobs_but_only_the_schedule_requeues_lost_tasks(
    scored_run, settings, django_capture_on_commit_callbacks
):
    registered = {resolved(reaper) for reaper in workers._reapers}
    assert {services.reap_dead_workers_jobs, reap_dead_workers_reruns} <= registered
    settings.PODIUM_TASK_SEND_GRACE_SECONDS = 0
    job = services.start_judge(scored_run, enqueue=False)  # queued, as if its task was lost

    with django_capture_on_commit_callbacks(execute=False):
        assert services.reap_dead_workers_jobs() == 0  # the watchdog's few-second round
    with django_capture_on_commit_callbacks(execute=False):
        # The minute's Schedule sends it again (tests/judging/test_lost_tasks.py).
        assert services.reap_stale_jobs() == 1

    job.refresh_from_db()
    assert job.state == JobStatus.QUEUED


def test_the_reaper_fails_a_job_picked_up_too_often(
    scored_run, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_JUDGE_STALE_SECONDS = 0
    settings.PODIUM_JUDGE_MAX_RUNS = 2
    job = services.start_judge(scored_run, enqueue=False)
    JudgeJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING,
        worker="dead:1",
        heartbeat_at=services.timezone.now(),
        runs=2,
        interruptions=1,
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
