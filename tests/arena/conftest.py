"""Fixtures for the battles: the demo clinical QA benchmark (its open-ended category is rated
from battles) with its demo test set, the stand-in judge on loopback as its judge endpoint, and
a function that enters and scores an entry with the demo models' answers (or variations).
Real PostgreSQL, the real openai client over HTTP, no mocks."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import pytest
from django.core.management import call_command

from benchmark.models import Benchmark
from benchmark.selectors import clear_parsed_testsets
from benchmark.services import import_testset
from judging.services import configure_endpoint
from judging.standin import StandinJudge
from plugins.clinicalqa import demo
from plugins.clinicalqa.plugin import plugin
from submissions.models import Submission
from submissions.services import SubmissionDetails, create_submission, score_evaluation
from tests.accounts.factories import UserFactory

SLUG = "clinicalqa"
CATEGORY = "open_ended"
KINDS = ("strong", "good", "fair", "weak")


@pytest.fixture
def private_dir(settings, tmp_path):
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    clear_parsed_testsets()
    yield settings.PODIUM_PRIVATE_DIR
    clear_parsed_testsets()


@pytest.fixture
def demo_files(tmp_path):
    return plugin.write_demo(tmp_path / "demo")


@pytest.fixture
def standin():
    with StandinJudge() as judge:
        yield judge


@pytest.fixture
def clinicalqa(private_dir, demo_files, standin) -> Benchmark:
    """The demo clinical QA benchmark from its definition, its demo test set active and the
    stand-in judge as its active judge endpoint (2 attempts a call, 4 in flight)."""
    call_command("setup_benchmarks", verbosity=0)
    benchmark = Benchmark.objects.get(slug=SLUG)
    import_testset(benchmark, demo_files.test_set)
    configure_endpoint(
        benchmark,
        name="stand-in",
        base_url=standin.base_url,
        model="standin-judge",
        api_key_env="",
        concurrency=4,
        max_attempts=2,
        timeout_seconds=5.0,
    )
    return benchmark


def demo_rows(demo_files, kind: str) -> list[dict]:
    """A demo model's predictions rows."""
    path = next(entry.predictions for entry in demo_files.hosted if entry.model_name.endswith(kind))
    return json.loads(path.read_text(encoding="utf-8"))


def facts_of(kind: str) -> dict:
    return dict(next(model for model in demo.MODELS if model.kind == kind).facts)


@pytest.fixture
def enter(clinicalqa, demo_files) -> Callable[..., Submission]:
    """A function: enter and score an entry named `name` answering as demo model `kind`, with
    `answers` (question id -> text) replacing some of its answers; `publish` as the form's."""

    def build(
        name: str,
        kind: str = "good",
        *,
        answers: Mapping[str, str] | None = None,
        publish: bool = True,
    ) -> Submission:
        rows = demo_rows(demo_files, kind)
        for row in rows:
            if answers and row["id"] in answers:
                row["answer"] = answers[row["id"]]
        submission = create_submission(
            clinicalqa,
            owner=UserFactory(),
            details=SubmissionDetails(
                model_name=name,
                institution="Podium tests",
                publish=publish,
                model_facts=facts_of(kind),
            ),
            predictions=json.dumps(rows).encode(),
        )
        score_evaluation(submission.evaluations.get())
        submission.refresh_from_db()
        return submission

    return build
