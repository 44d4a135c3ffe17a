"""A hosted evaluation end to end against the stand-in model on loopback (real HTTP through the
openai client, real PostgreSQL): the questions asked, the answers stored, the entry created and
scored exactly as an upload of the same answers; the failure states (a refused key, an unknown
model, an unreachable endpoint, the token cap, answers refused as an entry); a cancel noticed
mid-run; a time slice that stops mid-way and a next one that asks only what is left; the
pace."""

import json
import time

import pytest

from benchmark.models import Benchmark
from core import private_files
from core.models import AuditEvent
from hosting import runner, selectors, services
from hosting.enums import Failure, ItemState, RequestStatus
from plugins.clinicalqa.rerun import question_text
from submissions.enums import EvaluationStatus, SubmissionSource
from submissions.models import Submission
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory
from verifying.standin import StandinModel

from .conftest import (
    FACTS,
    MODEL,
    closed_port_url,
    demo_file,
    run,
    score_entry,
    submit,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_a_request_becomes_an_entry_scored_exactly_as_an_upload_of_its_answers(
    benchmark, owner, standin, demo_files, test_set, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    request = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["good"])
    assert (request.status, request.items_total) == (RequestStatus.QUEUED, 56)

    request = run(request, capture)

    assert request.state == RequestStatus.DONE
    assert (request.items_done, request.items_failed, request.calls) == (56, 0, 56)
    # Every question asked once, in the plugin's words, to the model the request names.
    received = standin.received
    assert sorted(r.text for r in received) == sorted(question_text(i) for i in test_set.items)
    assert {r.model for r in received} == {MODEL["good"]}
    assert set(standin.key_calls.values()) == {1}
    submission = request.submission
    assert (submission.source, submission.owner, submission.model_name) == (
        SubmissionSource.HOSTED,
        owner,
        "Hosted-7B",
    )
    assert (submission.institution, submission.model_url, submission.publish) == (
        "Hosting lab",
        "https://example.org/hosted",
        True,
    )
    hosted_run = score_entry(request, capture)

    # The same answers uploaded as a file by someone else score the same, bit for bit.
    upload = create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Uploaded twin", publish=False, model_facts=FACTS),
        predictions=demo_file(demo_files, "good").read_bytes(),
    )
    with capture(execute=True):
        uploaded_run = score_evaluation(upload.evaluations.get())
    assert hosted_run.state == uploaded_run.state == EvaluationStatus.COMPLETE
    assert hosted_run.metrics == uploaded_run.metrics == {"accuracy": 0.75}
    assert hosted_run.result["counts"] == uploaded_run.result["counts"]
    assert hosted_run.result["parsed"] == uploaded_run.result["parsed"]
    assert hosted_run.replicates.values == uploaded_run.replicates.values
    # The file Podium wrote: the answers in test-set order, in the benchmark's format.
    rows = json.loads(private_files.read(submission.predictions_file))
    assert [row["id"] for row in rows] == [item.id for item in test_set.items]
    # Its status and audit trail.
    assert request.message.startswith("Evaluated by Podium: 56 of 56 questions answered")
    actions = list(
        AuditEvent.objects.filter(action__startswith="hosting.request.")
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == [
        "hosting.request.created",
        "hosting.request.running",
        "hosting.request.done",
    ]


def test_the_queue_shows_each_category_pending_running_and_finished(
    benchmark, owner, standin, django_capture_on_commit_callbacks, settings
):
    capture = django_capture_on_commit_callbacks
    first = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["strong"], name="A")
    second = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["weak"], name="B")

    def states(request):
        row = next(
            r for r in selectors.queue_rows(benchmark, viewer=None) if r.request_id == request.pk
        )
        return row.position, [(cell.label, cell.text) for cell in row.cells]

    assert states(first) == (1, [("Close-ended", "pending"), ("Open-ended", "pending")])
    assert states(second)[0] == 2

    # A time slice that ends after a few answers: the multiple-choice questions come first.
    standin.latency = 0.02
    run(first, capture, time_budget=0.15)
    position, cells = states(first)
    assert position is None
    assert cells[0][1].startswith("running ")
    assert cells[0][1].endswith("/40")
    assert cells[1] == ("Open-ended", "pending")
    assert states(second)[0] == 1

    standin.latency = 0.0
    run(first, capture)
    assert states(first) == (None, [("Close-ended", "finished"), ("Open-ended", "finished")])


def test_a_time_slice_stops_mid_way_and_the_next_asks_only_what_is_left(
    benchmark, owner, standin, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    standin.latency = 0.03
    request = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["fair"])

    request = run(request, capture, time_budget=0.2)

    assert request.state == RequestStatus.QUEUED  # handed back at the end of its slice
    answered = request.items.exclude(state=ItemState.PENDING).count()
    assert 0 < answered < 56
    assert request.items_done == answered
    assert len(standin.received) == answered  # the answers in flight at the stop were kept

    request = run(request, capture)

    assert request.state == RequestStatus.DONE
    assert request.runs == 2
    assert len(standin.received) == 56
    assert set(standin.key_calls.values()) == {1}  # no question asked twice
    assert request.submission is not None


def test_a_refused_key_fails_the_request_and_publishes_nothing(
    benchmark, owner, tables, django_capture_on_commit_callbacks
):
    with StandinModel(models=tables, api_key="sk-the-right-one") as server:
        request = submit(
            benchmark, owner, base_url=server.base_url, model="gpt-x", api_key=" sk-secret-1 "
        )
        request = run(request, django_capture_on_commit_callbacks)
        sent = set(server.authorizations)

    assert sent == {"Bearer sk-secret-1"}  # the key decrypted, stripped, sent to its own host
    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.KEY_REFUSED)
    assert request.message.startswith("The endpoint refused the API key (HTTP 401): ")
    assert "Nothing was published; submit the request again with a key that may use 'gpt-x'" in (
        request.message
    )
    assert "sk-secret" not in request.message
    assert request.submission is None
    assert not Submission.objects.exists()
    row = selectors.queue_rows(benchmark, viewer=None)[0]
    assert [cell.text for cell in row.cells] == [
        "failed: the endpoint refused the API key (401/403)"
    ] * 2


def test_an_unknown_model_fails_with_model_not_found(
    benchmark, owner, standin, django_capture_on_commit_callbacks
):
    request = submit(benchmark, owner, base_url=standin.base_url, model="no-such-model")
    request = run(request, django_capture_on_commit_callbacks)

    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.MODEL_NOT_FOUND)
    assert request.message.startswith("Model 'no-such-model' not found at the endpoint (HTTP 404)")
    assert not Submission.objects.exists()


def test_an_unreachable_endpoint_fails_once_the_outage_limit_passes(
    benchmark, owner, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_HOSTED_OUTAGE_LIMIT_SECONDS = 0.5
    settings.PODIUM_HOSTED_OUTAGE_PROBE_SECONDS = 0.05
    request = submit(benchmark, owner, base_url=closed_port_url(), model="m")

    request = run(request, django_capture_on_commit_callbacks)

    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.UNREACHABLE)
    assert request.message.startswith("The endpoint is unreachable: The model endpoint was")
    assert request.items_failed == 0  # nothing is counted against the model
    assert not Submission.objects.exists()


@pytest.mark.parametrize(
    "rules", [{"hosted_requests_per_minute": 60_000, "hosted_max_tokens": 300}]
)
def test_the_token_cap_stops_the_request_and_publishes_nothing(
    benchmark, owner, standin, rules, django_capture_on_commit_callbacks
):
    request = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["strong"])
    assert request.max_tokens == 300  # the benchmark's cap, copied onto the request

    request = run(request, django_capture_on_commit_callbacks)

    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.TOKEN_CAP)
    assert request.message.startswith("The token cap of 300 was reached: nothing was published.")
    used = request.prompt_tokens + request.completion_tokens
    # The cap stops new questions; the two in flight may still land.
    assert 300 <= used < 300 + 2 * 60
    assert len(standin.received) < 56
    assert not Submission.objects.exists()


def test_a_cancel_is_noticed_at_the_next_heartbeat(
    benchmark, owner, standin, settings, django_capture_on_commit_callbacks
):
    settings.PODIUM_HOSTED_HEARTBEAT_SECONDS = 0.05
    standin.latency = 0.02
    request = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["good"])
    cancelled = []

    def on_progress(progress):
        if progress.finished >= 4 and not cancelled:
            cancelled.append(services.cancel_request(request, actor=owner))

    with django_capture_on_commit_callbacks(execute=True):
        runner.run_request(request.pk, on_progress=on_progress)
    request.refresh_from_db()

    assert request.state == RequestStatus.CANCELLED
    assert request.message.startswith("Cancelled after ")
    assert len(standin.received) < 56
    assert request.submission is None
    assert not Submission.objects.exists()


@pytest.mark.parametrize("rules", [{"hosted_requests_per_minute": 1200}])
def test_calls_are_paced_at_the_benchmarks_requests_per_minute(
    benchmark, owner, standin, rules, django_capture_on_commit_callbacks
):
    request = submit(
        benchmark, owner, base_url=standin.base_url, model=MODEL["weak"], concurrency=8
    )
    assert request.requests_per_minute == 1200  # one call every 50 ms, whatever the threads

    started = time.monotonic()
    request = run(request, django_capture_on_commit_callbacks)
    took = time.monotonic() - started

    assert request.state == RequestStatus.DONE
    assert took >= 55 * 0.05  # 56 calls, 55 intervals


def test_answers_another_account_published_byte_for_byte_are_accepted_as_an_entry(
    benchmark, owner, standin, django_capture_on_commit_callbacks
):
    """The copy rule is the uploads' (docs/hosted.md, "The copy rule"): an upload of a hosted
    entry's bytes is not refused by it, and answers Podium obtained itself are not a copied
    file, whoever published the same bytes, as a hosted entry or as an upload."""
    capture = django_capture_on_commit_callbacks
    first = run(submit(benchmark, owner, base_url=standin.base_url, model=MODEL["strong"]), capture)
    assert first.state == RequestStatus.DONE
    raw = private_files.read(first.submission.predictions_file)
    uploaded = create_submission(
        benchmark,
        owner=UserFactory(),
        details=SubmissionDetails(model_name="Uploaded", model_facts=FACTS),
        predictions=raw,
    )
    # Another account asks the very same model: the same answers, the same file.
    other = UserFactory()
    twin = submit(benchmark, other, base_url=standin.base_url, model=MODEL["strong"], name="Twin")

    twin = run(twin, capture)

    assert (twin.state, twin.failure) == (RequestStatus.DONE, "")
    published = Submission.objects.filter(publish=True).order_by("pk")
    assert [(entry.model_name, entry.source) for entry in published] == [
        ("Hosted-7B", SubmissionSource.HOSTED),
        ("Uploaded", SubmissionSource.UPLOAD),
        ("Twin", SubmissionSource.HOSTED),
    ]
    assert {entry.predictions_sha256 for entry in published} == {uploaded.predictions_sha256}


def test_a_benchmark_that_stopped_taking_endpoints_fails_the_request(
    benchmark, owner, standin, django_capture_on_commit_callbacks
):
    request = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["strong"])
    # Hosted evaluation turned off (the definition, then `setup_benchmarks --overwrite`)
    # while it waits.
    Benchmark.objects.filter(pk=benchmark.pk).update(hosted_evaluation=False)

    request = run(request, django_capture_on_commit_callbacks)

    assert (request.state, request.failure) == (RequestStatus.FAILED, Failure.NOT_HOSTED)
    assert request.message.startswith("Demo clinical QA no longer evaluates model endpoints.")
    assert standin.received == []


def test_the_answers_being_computed_at_a_slice_end_are_kept_not_asked_again(
    benchmark, owner, standin, django_capture_on_commit_callbacks
):
    """Every call in flight when the slice ends has been sent: the endpoint is computing (and
    billing) its answer. The slice waits for those answers and keeps them; cutting them left
    their questions pending, asked and paid for again in the next slice (CI saw 12 questions
    received for 11 answers kept)."""
    capture = django_capture_on_commit_callbacks
    # The engine looks at the slice's clock at least every second: with answers taking 1.5 s
    # every call sent at the start is still on the network when it sees the slice is over.
    standin.latency = 1.5
    request = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["fair"])

    request = run(request, capture, time_budget=0.1)

    answered = request.items.exclude(state=ItemState.PENDING).count()
    assert answered > 0
    assert len(standin.received) == answered
    standin.latency = 0.0
    request = run(request, capture)
    assert request.state == RequestStatus.DONE
    assert set(standin.key_calls.values()) == {1}  # no question asked twice
