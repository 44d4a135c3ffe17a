"""The queue's part of the demo (`make run`): for each plugin demo's `hosted` models (the demo
clinical QA benchmark's four), a hosted evaluation request for the stand-in model that plays
back the model's file (`submissions.demo.standin_model_name`, served by `manage.py
standin_model`), submitted by the demo account. The worker then asks the stand-in every
question, so a newcomer sees the queue fill, run category by category and finish into entries
"evaluated by Podium".

The stand-in is NOT a real model: it plays back the demo predictions. The requests are the
demo's, not the account's: they take nothing from its daily quota (`actor=None`).

`load_demo` (submissions/demo.py) calls `on_demo_loaded` through its hook (HostingConfig.ready),
once per benchmark. Idempotent: a model with an entry, or a request not failed or cancelled,
is not submitted again.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from benchmark.plugins import plugin_for
from submissions.demo import DEMO_USERNAME, DemoLoaded, standin_model_name
from submissions.models import Submission
from submissions.services import SubmissionDetails

from .enums import RequestStatus
from .models import HostedRequest
from .selectors import takes_endpoints
from .services import submit_request

# The demo's requests ask four questions at once: the queue shows each category running.
DEMO_CONCURRENCY = 4
DEMO_CONTACT = "demo@example.org"


def _details(entry: Any) -> SubmissionDetails:
    return SubmissionDetails(
        model_name=entry.model_name,
        institution=entry.institution,
        contact_email=DEMO_CONTACT,
        team_name=entry.team_name,
        publish=entry.publish,
        options=dict(entry.options),
        model_facts=dict(entry.facts),
    )


def _already_there(benchmark: Any, owner: Any, model_name: str) -> bool:
    if Submission.objects.filter(benchmark=benchmark, owner=owner, model_name=model_name).exists():
        return True
    return (
        HostedRequest.objects.filter(benchmark=benchmark, owner=owner, model_name=model_name)
        .exclude(status__in=[RequestStatus.FAILED, RequestStatus.CANCELLED])
        .exists()
    )


def on_demo_loaded(loaded: DemoLoaded) -> None:
    """`load_demo`'s hook: with a stand-in model URL, queue a hosted evaluation of each of the
    plugin demo's `hosted` models not queued or evaluated yet."""
    hosted = loaded.files.hosted
    if not hosted or not loaded.standin_model_url:
        return
    benchmark = loaded.benchmark
    if not takes_endpoints(benchmark):
        loaded.log(f"{benchmark.name} does not evaluate model endpoints; its demo models wait.")
        return
    plugin = plugin_for(benchmark)
    owner = get_user_model().objects.get(username=DEMO_USERNAME)
    queued = []
    for entry in hosted:
        if _already_there(benchmark, owner, entry.model_name):
            continue
        submit_request(
            benchmark,
            owner=owner,
            actor=None,
            details=_details(entry),
            base_url=loaded.standin_model_url,
            model=standin_model_name(plugin.key, entry.predictions),
            concurrency=DEMO_CONCURRENCY,
        )
        queued.append(entry.model_name)
    if queued:
        loaded.log(
            f"{benchmark.name}: queued hosted evaluations of the stand-in model for "
            f"{', '.join(queued)} (the worker asks it every question; see the queue page)."
        )
