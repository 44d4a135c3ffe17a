"""The engine's abstract bases (`inference.models`): every endpoint, job and item table of its
users inherits them, with the kind's own defaults, and inheriting changed no table."""

from io import StringIO

import pytest
from django.core.management import call_command

from hosting.models import HostedEndpoint
from inference.enums import JobStatus
from inference.keys import keyed_endpoint_models
from inference.models import Endpoint, Item, Job, KeyedEndpoint
from judging.models import JudgeEndpoint, JudgeItem, JudgeJob
from verifying.models import ModelEndpoint, RerunItem, RerunJob

pytestmark = pytest.mark.unit


def test_the_bases_are_abstract_and_every_user_table_inherits_them():
    assert all(base._meta.abstract for base in (Endpoint, KeyedEndpoint, Job, Item))
    assert [issubclass(table, Endpoint) for table in (JudgeEndpoint, ModelEndpoint)] == [True] * 2
    assert (issubclass(JudgeEndpoint, KeyedEndpoint), issubclass(ModelEndpoint, KeyedEndpoint)) == (
        False,
        True,
    )
    assert [issubclass(table, Job) for table in (JudgeJob, RerunJob)] == [True] * 2
    assert [issubclass(table, Item) for table in (JudgeItem, RerunItem)] == [True] * 2


def test_each_kind_keeps_its_own_defaults():
    def defaults(table):
        return {
            name: table._meta.get_field(name).default
            for name in ("concurrency", "max_attempts", "timeout_seconds", "is_active")
        }

    assert defaults(JudgeEndpoint) == {
        "concurrency": 10,
        "max_attempts": 5,
        "timeout_seconds": 30.0,
        "is_active": True,
    }
    assert defaults(ModelEndpoint) == {
        "concurrency": 4,
        "max_attempts": 5,
        "timeout_seconds": 120.0,
        "is_active": True,
    }
    assert (JudgeEndpoint.endpoint_name, ModelEndpoint.endpoint_name) == (
        "judge endpoint",
        "model endpoint",
    )


def test_items_label_the_engines_states_in_their_own_words():
    def labels(table):
        return dict(table._meta.get_field("state").choices)

    assert labels(JudgeItem) == {
        "pending": "Pending",
        "done": "Judged",
        "failed": "No usable answer after every attempt",
    }
    assert labels(RerunItem) == {
        "pending": "Pending",
        "done": "Answered",
        "failed": "Failed after every attempt",
    }
    assert [dict(t._meta.get_field("status").choices) for t in (JudgeJob, RerunJob)] == [
        dict(JobStatus.choices)
    ] * 2


def test_a_jobs_progress_is_counted_from_its_counters():
    job = RerunJob(items_total=8, items_done=3, items_failed=1)
    empty_done = JudgeJob(items_total=0, status=JobStatus.DONE)

    assert (job.items_finished, job.percent, empty_done.percent) == (4, 50, 100)


def test_the_keyed_endpoint_tables_are_found_for_key_rotation():
    assert keyed_endpoint_models() == [HostedEndpoint, ModelEndpoint]


@pytest.mark.django_db
def test_inheriting_the_bases_changed_no_table():
    out = StringIO()

    call_command("makemigrations", "--check", "--dry-run", stdout=out)

    assert out.getvalue().strip() == "No changes detected"
