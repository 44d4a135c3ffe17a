"""Fixtures for hosted evaluation: the demo clinical QA benchmark (two categories, 40
multiple-choice and 16 open-ended questions, hosted evaluation on) with its demo test set
active, registered with the rules a test needs; the stand-in model on loopback playing back
the demo models' files (verifying's StandinModel, as `manage.py standin_model` serves them;
with `api_key` it refuses every other key with a 401); and the steps a test takes: submit,
run a slice, score."""

from __future__ import annotations

import dataclasses
import socket
from typing import Any

import pytest

from benchmark.plugins import registered
from benchmark.selectors import active_testset, clear_parsed_testsets, load_scoring_testset
from benchmark.services import ensure_plugin_benchmark, import_testset
from hosting import runner, services
from plugins.clinicalqa.plugin import plugin as clinicalqa
from submissions.services import SubmissionDetails, score_evaluation
from tests.accounts.factories import UserFactory
from verifying.demo import answer_tables
from verifying.standin import StandinModel

KINDS = ("strong", "good", "fair", "weak")
# The stand-in's model names: one per demo file.
MODEL = {kind: f"demo-{kind}-7b" for kind in KINDS}
# Fast enough for a test (the definition's 600 a minute would take 5.6 s per request).
TEST_RULES = {"hosted_requests_per_minute": 60_000}


class RulesPlugin:
    """The clinical QA plugin with other hosted rules in its definition: registered under the
    same key for a test, as an installed plugin would be (`benchmark.plugins.registered`)."""

    def __init__(self, **changes: Any) -> None:
        self._inner = clinicalqa
        self.definition = dataclasses.replace(clinicalqa.definition, **changes)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def private_dir(settings, tmp_path):
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    clear_parsed_testsets()
    yield settings.PODIUM_PRIVATE_DIR
    clear_parsed_testsets()


@pytest.fixture
def demo_files(tmp_path):
    return clinicalqa.write_demo(tmp_path / "demo")


@pytest.fixture
def rules():
    """The hosted rules of the benchmark (a test overrides this fixture to change them)."""
    return TEST_RULES


@pytest.fixture
def plugin(rules):
    with registered(RulesPlugin(**rules)) as plugin:
        yield plugin


@pytest.fixture
def benchmark(private_dir, demo_files, plugin):
    benchmark = ensure_plugin_benchmark("clinicalqa")
    import_testset(benchmark, demo_files.test_set)
    return benchmark


@pytest.fixture
def test_set(benchmark):
    return load_scoring_testset(active_testset(benchmark))


def demo_file(demo_files, kind: str):
    return next(entry.predictions for entry in demo_files.hosted if entry.model_name.endswith(kind))


@pytest.fixture
def tables(test_set, demo_files, private_dir):
    """The stand-in's answers: each demo model answers as its file does."""
    return answer_tables(
        clinicalqa,
        test_set,
        {MODEL[kind]: demo_file(demo_files, kind).read_bytes() for kind in KINDS},
        private_dir,
        1,
    )


@pytest.fixture
def standin(tables):
    with StandinModel(models=tables) as model:
        yield model


def closed_port_url() -> str:
    """A loopback address nothing listens on: connections are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def owner():
    return UserFactory()


# The model facts the demo clinical QA benchmark asks for (benchmark/facts.py).
FACTS = {
    "type": "fine-tuned",
    "parameters": "7",
    "licence": "apache-2.0",
    "precision": "bfloat16",
    "domain_specific": "yes",
}


def details(name: str = "Hosted-7B", **extra: Any) -> SubmissionDetails:
    return SubmissionDetails(
        model_name=name,
        institution="Hosting lab",
        contact_email="lab@example.org",
        model_url="https://example.org/hosted",
        model_facts=extra.pop("model_facts", dict(FACTS)),
        **extra,
    )


def submit(benchmark, owner, *, base_url: str, model: str, name: str = "Hosted-7B", **options):
    """A request submitted by its owner (not queued: the test runs it)."""
    options.setdefault("concurrency", 2)
    return services.submit_request(
        benchmark,
        owner=owner,
        actor=owner,
        details=details(name, publish=options.pop("publish", True)),
        base_url=base_url,
        model=model,
        enqueue=False,
        **options,
    )


def run(request, capture, **options):
    """One worker slice in the foreground (its on-commit work run)."""
    with capture(execute=True):
        runner.run_request(request.pk, **options)
    request.refresh_from_db()
    return request


def score_entry(request, capture):
    """Score the entry a done request became, as the worker would."""
    submission = request.submission
    with capture(execute=True):
        return score_evaluation(submission.evaluations.get())
