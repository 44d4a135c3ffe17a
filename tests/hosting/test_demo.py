"""The queue's part of the demo: `load_demo` with the stand-in model's URL queues a hosted
evaluation of each demo clinical QA model (the stand-in playing back its file, as `manage.py
standin_model` serves it); the worker's runs turn them into entries evaluated by Podium with
the models' accuracies; the demo account's quota is untouched; a second load queues nothing."""

import pytest

from hosting import runner
from hosting.enums import RequestStatus
from hosting.models import HostedRequest
from submissions.demo import DEMO_USERNAME, load_plugin_demo
from submissions.enums import SubmissionSource
from submissions.services import evaluations_left_today, score_evaluation
from tests.accounts.factories import UserFactory
from verifying.demo import demo_answer_tables
from verifying.standin import StandinModel

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
