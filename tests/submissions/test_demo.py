"""load_demo: the demo board from small files, twice."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.roles import can_verify_entries
from benchmark.models import Benchmark, TestSet
from benchmark.services import ensure_plugin_benchmark, import_testset
from core.models import AuditEvent
from plugins.medvidbench.demo_testset import DEMO_FILENAMES, NEW_MODEL
from submissions.demo import (
    DEMO_MAINTAINER_PASSWORD,
    DEMO_MAINTAINER_USERNAME,
    DEMO_PASSWORD,
    DEMO_USERNAME,
)
from submissions.models import BoardEntry, Evaluation, Submission
from submissions.services import evaluations_left_today
from tests.benchmark.factories import small_ground_truth, write_ground_truth

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def demo_dir(tmp_path, records):
    """The demo files, written small: the five-record test set, two answer sets and the new
    model's (the noisy answers, written otherwise)."""
    folder = tmp_path / "demo"
    write_ground_truth(folder / DEMO_FILENAMES["ground_truth"], records)
    # Noisy: the reference answers; prose: nothing a parser reads.
    for kind, answer in (("noisy", None), ("prose", "I am not sure.")):
        rows = [
            {
                "id": "&&".join(
                    record["metadata"][name]
                    for name in (
                        "video_id",
                        "input_video_start_frame",
                        "input_video_end_frame",
                        "fps",
                    )
                ),
                "qa_type": record["qa_type"],
                "prediction": answer or record["conversations"][-1]["value"],
            }
            for record in records
        ]
        (folder / DEMO_FILENAMES[kind]).write_text(json.dumps(rows))
        if kind == "noisy":  # the new model: the same answers in another file (other bytes)
            (folder / DEMO_FILENAMES[NEW_MODEL]).write_text(json.dumps(rows, indent=1))
    return folder


def counts(slug="medvidbench"):
    return (
        Submission.objects.filter(benchmark__slug=slug).count(),
        Evaluation.objects.filter(submission__benchmark__slug=slug).count(),
        BoardEntry.objects.filter(benchmark__slug=slug).count(),
        TestSet.objects.filter(benchmark__slug=slug).count(),
        AuditEvent.objects.count(),
    )


def test_load_demo_builds_a_living_board_and_is_idempotent(
    demo_dir, private_dir, django_user_model
):
    call_command("load_demo", demo_dir=demo_dir, verbosity=0)
    first = counts()
    call_command("load_demo", demo_dir=demo_dir, verbosity=0)

    assert counts() == first
    assert first[:4] == (15 + 3, 15 + 3, 15 + 2, 1)  # three demo entries, one evaluate-only
    # MedSG-Bench's demo, the other installed plugin's: the paper's 22 rows and 3 entries.
    assert counts("medsg-bench")[:4] == (22 + 3, 22 + 3, 22 + 3, 1)
    # The demo clinical QA's: its four demo models come through the hosted evaluation queue,
    # which needs the stand-in model's URL (tests/hosting/test_demo.py); no published rows.
    assert counts("clinicalqa")[:4] == (0, 0, 0, 1)
    board = (
        BoardEntry.objects.filter(benchmark__slug="medvidbench")
        .values_list("board", "submission__model_name")
        .order_by("board", "rank")
    )
    assert [name for kind, name in board if kind == "community"] == [
        "SurgiDemo-7B (synthetic)",
        "ChattyVLM (synthetic)",
    ]
    demo_user = django_user_model.objects.get(username=DEMO_USERNAME)
    assert demo_user.check_password(DEMO_PASSWORD)
    demo_runs = Evaluation.objects.filter(submission__owner=demo_user)
    # MedVidBench's wait for their judge; MedSG-Bench has none, so its are complete.
    assert {
        (run.submission.benchmark.slug, run.status)
        for run in demo_runs.select_related("submission__benchmark")
    } == {("medvidbench", "scored"), ("medsg-bench", "complete")}
    # Loaded by the demo, not requested by the account: it starts with its whole quota.
    assert {run.requested_by for run in demo_runs} == {None}
    for benchmark in Benchmark.objects.all():
        assert evaluations_left_today(demo_user, benchmark) == 5
    maintainer = django_user_model.objects.get(username=DEMO_MAINTAINER_USERNAME)
    assert maintainer.check_password(DEMO_MAINTAINER_PASSWORD)
    assert (maintainer.is_staff, maintainer.is_superuser) == (True, False)
    assert can_verify_entries(maintainer)


def test_load_demo_refuses_to_replace_a_real_test_set(demo_dir, private_dir, tmp_path, records):
    real = write_ground_truth(tmp_path / "real.json", small_ground_truth()[:3])
    import_testset(ensure_plugin_benchmark("medvidbench"), real)

    with pytest.raises(CommandError, match="is not the demo test set"):
        call_command("load_demo", demo_dir=demo_dir, verbosity=0)
    assert Submission.objects.count() == 0
