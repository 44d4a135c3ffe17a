"""A re-run collects the model's own answers into a predictions file and scores it with the
scorer's strict reader. A model may answer with a control character (a terminal colour code,
a form feed) that a submitted file may not hold: the re-run drops those characters from the
answers it stores in the file instead of failing on its own file."""

import json

import pytest

from core import private_files
from tests.verifying.conftest import answer_table
from verifying import services
from verifying.enums import RerunStatus
from verifying.services import register_endpoint
from verifying.standin import StandinModel

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        (
            "\x1b[1mThe surgeon\x1b[0m dissects\x0c the duct.\x85",
            "[1mThe surgeon[0m dissects the duct.",
        ),
        # A NUL cannot be stored in PostgreSQL: the answer would fail its batch's write.
        ("\x00The surgeon\x00 dissects the duct.", "The surgeon dissects the duct."),
    ],
    ids=["terminal-codes", "nul"],
)
def test_control_characters_in_a_models_answers_do_not_fail_the_rerun(
    access_granted, maintainer, frames_dir, django_capture_on_commit_callbacks, answer, kept
):
    table = answer_table(access_granted, frames_dir)
    summary_key = next(key for key, text in table.items() if text.startswith("The surgeon"))
    table[summary_key] = answer
    with StandinModel(table) as model:
        register_endpoint(
            access_granted,
            actor=maintainer,
            base_url=model.base_url,
            model="surgvlm-7b",
            concurrency=2,
            max_attempts=3,
            timeout_seconds=5.0,
        )
        with django_capture_on_commit_callbacks(execute=True):
            job = services.start_rerun(access_granted, actor=maintainer, enqueue=False)
        with django_capture_on_commit_callbacks(execute=True):
            services.run_job(job.pk)
    job.refresh_from_db()

    assert job.state == RerunStatus.DONE
    written = json.loads(private_files.read(job.predictions_file))
    assert written[4]["prediction"] == kept
    assert job.items.get(sample_index=4).answer == kept
    assert job.report["all_within"] is True
