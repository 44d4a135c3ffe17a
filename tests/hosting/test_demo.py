"""The queue's part of the demo: `load_demo` with the stand-in model's URL queues a hosted
evaluation of each demo clinical QA model (the stand-in playing back its file, as `manage.py
standin_model` serves it); the worker's runs turn them into entries evaluated by Podium with
the models' accuracies; the demo account's quota is untouched; a second load queues nothing; a
newcomer's own request to a demo stand-in (answering as a published demo entry, byte for byte)
lands on the board."""

import pytest

from hosting import runner
from hosting.enums import RequestStatus
from hosting.models import HostedRequest
from submissions.demo import DEMO_USERNAME, load_plugin_demo
from submissions.enums import BoardKind, SubmissionSource
from submissions.models import BoardEntry
from submissions.services import evaluations_left_today, recompute_board, score_evaluation
from tests.accounts.factories import UserFactory
from verifying.demo import demo_answer_tables
from verifying.standin import StandinModel

from .conftest import run, score_entry, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EXPECTED_ACCURACY = {"demo-strong": 0.9, "demo-good": 0.75, "demo-fair": 0.55, "demo-weak": 0.3}


def test_load_demo_queues_the_demo_models_and_the_worker_turns_them_into_entries(
    plugin, private_dir, tmp_path, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    tables = demo_answer_tables(None, lambda plugin: 1, frames_root=private_dir, only="clinicalqa")
    assert sorted(tables) == [
        f"standin-clinicalqa-{kind}" for kind in ("fair", "good", "strong", "weak")
    ]
    demo_user = UserFactory(username=DEMO_USERNAME)
    lines = []
    with StandinModel(models=tables) as standin:
        with capture(execute=True):
            summary = load_plugin_demo(
                plugin, tmp_path / "demo", user=demo_user, log=lines.append,
                standin_model_url=standin.base_url,
            )  # fmt: skip
        requests = list(HostedRequest.objects.order_by("pk"))
        assert [(r.model_name, r.status, r.endpoint.model) for r in requests] == [
            (name, RequestStatus.QUEUED, f"standin-clinicalqa-{name.removeprefix('demo-')}")
            for name in EXPECTED_ACCURACY
        ]
        assert summary.submitted == 0  # nothing uploaded: the models come through the queue
        assert any("queued hosted evaluations of the stand-in model" in line for line in lines)

        for request in requests:
            with capture(execute=True):
                runner.run_request(request.pk)

    accuracies = {}
    for request in HostedRequest.objects.order_by("pk"):
        assert request.status == RequestStatus.DONE, request.message
        assert request.submission.source == SubmissionSource.HOSTED
        accuracies[request.model_name] = score_evaluation(
            request.submission.evaluations.get()
        ).metrics["accuracy"]
    assert accuracies == EXPECTED_ACCURACY
    assert evaluations_left_today(demo_user, summary.benchmark) == 5  # the demo's, not theirs

    with capture(execute=True):
        load_plugin_demo(
            plugin, tmp_path / "demo", user=demo_user, standin_model_url="x", log=print
        )
    assert HostedRequest.objects.count() == 4


def test_a_newcomers_request_to_a_demo_standin_lands_on_the_board(
    plugin, private_dir, tmp_path, django_capture_on_commit_callbacks
):
    """`make run`: a newcomer points a request at a stand-in the demo's own entries came from;
    its answers are byte for byte demo-good's published ones, which the copy rule does not
    refuse (docs/hosted.md, "The copy rule")."""
    capture = django_capture_on_commit_callbacks
    tables = demo_answer_tables(None, lambda plugin: 1, frames_root=private_dir, only="clinicalqa")
    with StandinModel(models=tables) as standin:
        with capture(execute=True):
            summary = load_plugin_demo(
                plugin, tmp_path / "demo", user=UserFactory(username=DEMO_USERNAME),
                log=print, standin_model_url=standin.base_url,
            )  # fmt: skip
        for request in HostedRequest.objects.order_by("pk"):
            score_entry(run(request, capture), capture)
        newcomer = UserFactory()
        request = submit(
            summary.benchmark, newcomer, base_url=standin.base_url,
            model="standin-clinicalqa-good", name="Newcomer-7B",
        )  # fmt: skip

        request = run(request, capture)

    assert (request.state, request.failure) == (RequestStatus.DONE, ""), request.message
    demo_good = HostedRequest.objects.get(model_name="demo-good").submission
    assert request.submission.predictions_sha256 == demo_good.predictions_sha256
    assert score_entry(request, capture).metrics["accuracy"] == 0.75
    recompute_board(summary.benchmark)
    row = BoardEntry.objects.get(submission=request.submission)
    assert (row.board, request.submission.owner) == (BoardKind.COMMUNITY, newcomer)
