"""The materialised boards: recompute_board, the published rows of spec 7, scope, highlights,
pending judge metrics, verification and imports, and the would-be rank of evaluate-only runs."""

import itertools
from datetime import UTC, datetime

import pytest
from django.utils import timezone

from benchmark.enums import RankingScope, TieMethod
from benchmark.services import ensure_plugin_benchmark, update_benchmark, update_metric
from core.exceptions import DomainError, InvalidTransition, VerificationRefused
from core.models import AuditEvent
from submissions import services, tasks
from submissions.enums import (
    VERIFICATION_NEEDS_REASON,
    BoardKind,
    EvaluationStatus,
    VerificationStatus,
)
from submissions.models import BoardEntry, Submission
from submissions.selectors import board_rows, would_be_rank
from tests.accounts.factories import UserFactory
from tests.verifying.factories import rerun_report, within_evidence

from .factories import EvaluationFactory, SubmissionFactory, scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SPEC_7_TOP = [
    ("uAI-NEXUS-MedVLM-1.0b-4B-RL", 1.9),
    ("uAI-NEXUS-MedVLM-1.0c-4B-SFT", 2.1),
    ("uAI-NEXUS-MedVLM-1.0b-4B-SFT", 3.7),
    ("uAI-NEXUS-MedVLM-1.0d-4B-SFT", 3.9),
    ("uAI-NEXUS-MedVLM-1.0a-7B-RL", 4.7),
    ("uAI-NEXUS-MedVLM-1.0a-7B-SFT", 6.7),
    ("GPT-5.4", 7.4),
]
JUDGE = ("DVC_llm", "VS_llm", "RC_llm")


@pytest.fixture
def medvidbench_definition():
    """MedVidBench with its metrics and policy, no test set (imports need none)."""
    return ensure_plugin_benchmark("medvidbench")


@pytest.fixture
def benchmark(medvidbench):
    """MedVidBench with the small test set, for the tests that submit and score a file."""
    return medvidbench


def import_rows(benchmark, rows):
    for row in rows:
        services.import_published_result(
            benchmark,
            model_name=row.model_name,
            values=row.values,
            verified_at=datetime(
                row.published_on.year, row.published_on.month, row.published_on.day, tzinfo=UTC
            ),
            is_baseline=row.is_baseline,
        )


def values(**overrides):
    """All ten metrics at 0.5, with some overridden."""
    base = dict.fromkeys(
        [
            "CVS_acc",
            "NAP_acc",
            "SA_acc",
            "STG_mIoU",
            "TAG_mIoU@0.3",
            "TAG_mIoU@0.5",
            "DVC_F1",
            *JUDGE,
        ],
        0.5,
    )
    return {**base, **overrides}


def board_names(benchmark, board):
    return [
        (entry.submission.model_name, entry.rank)
        for entry in BoardEntry.objects.filter(benchmark=benchmark, board=board)
        .select_related("submission")
        .order_by("rank")
    ]


def test_the_published_rows_rank_as_spec_7_states(medvidbench_definition, published_rows):
    import_rows(medvidbench_definition, published_rows)

    entries = services.recompute_board(medvidbench_definition)

    top = [(entry.submission.model_name, round(entry.mean_rank, 1)) for entry in entries[:7]]
    assert top == SPEC_7_TOP
    assert entries[0].wins == 6
    assert [entry.rank for entry in entries] == list(range(1, 16))
    assert {entry.board for entry in entries} == {BoardKind.OFFICIAL}


def test_imported_rows_are_verified_baselines_marked_and_dated(
    medvidbench_definition, published_rows
):
    import_rows(medvidbench_definition, published_rows)

    imported = Submission.objects.filter(benchmark=medvidbench_definition).order_by("pk")
    assert {submission.source for submission in imported} == {"imported"}
    assert {submission.verification_status for submission in imported} == {"verified"}
    assert [s.model_name for s in imported if s.is_baseline] == [
        "GPT-4.1",
        "Gemini-2.5-Flash",
        "VideoChat-R1.5-7B",
        "Qwen2.5VL-7B",
        "Qwen2.5VL-7B-Surg-CholecT50",
        "Qwen3VL-4B",
        "GPT-5.4",
        "Gemini-3.1-flash-lite",
        "Qwen3.5-4B",
    ]
    dates = {s.model_name: s.verified_at.date().isoformat() for s in imported}
    assert dates["uAI-NEXUS-MedVLM-1.0d-4B-SFT"] == "2026-05-15"
    assert set(dates.values()) == {"2026-04-15", "2026-05-15"}
    run = imported[0].evaluations.get()
    assert (run.status, run.test_set, run.requested_by) == (EvaluationStatus.COMPLETE, None, None)
    assert run.metrics["CVS_acc"] == 0.018
    actions = list(
        AuditEvent.objects.filter(
            object_id=str(run.pk), action__startswith="submissions.evaluation"
        )
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == [
        "submissions.evaluation.queued",
        "submissions.evaluation.scoring",
        "submissions.evaluation.scored",
        "submissions.evaluation.complete",
    ]


def test_an_import_refuses_unknown_metrics_and_a_taken_name(medvidbench_definition):
    when = datetime(2026, 4, 15, tzinfo=UTC)
    with pytest.raises(DomainError, match="no metric BLEU"):
        services.import_published_result(
            medvidbench_definition, model_name="X", values={"BLEU": 1.0}, verified_at=when
        )
    services.import_published_result(
        medvidbench_definition, model_name="X", values={"CVS_acc": 0.5}, verified_at=when
    )
    with pytest.raises(DomainError, match="already exists"):
        services.import_published_result(
            medvidbench_definition, model_name="x", values={"CVS_acc": 0.5}, verified_at=when
        )
    assert Submission.objects.count() == 1


def test_global_scope_ranks_over_both_boards(medvidbench_definition):
    benchmark = medvidbench_definition
    scored_entry(benchmark, "Official-A", values(CVS_acc=0.9), verification_status="verified")
    scored_entry(benchmark, "Official-B", values(CVS_acc=0.1), verification_status="verified")
    scored_entry(benchmark, "Community-C", values(CVS_acc=0.5))

    services.recompute_board(benchmark)

    assert board_names(benchmark, BoardKind.OFFICIAL) == [("Official-A", 1), ("Official-B", 3)]
    assert board_names(benchmark, BoardKind.COMMUNITY) == [("Community-C", 2)]


def test_per_board_scope_ranks_each_board_alone_and_a_policy_change_recomputes(
    medvidbench_definition, django_capture_on_commit_callbacks
):
    benchmark = medvidbench_definition
    scored_entry(benchmark, "Official-A", values(CVS_acc=0.9), verification_status="verified")
    scored_entry(benchmark, "Official-B", values(CVS_acc=0.1), verification_status="verified")
    scored_entry(benchmark, "Community-C", values(CVS_acc=0.5))
    services.recompute_board(benchmark)

    with django_capture_on_commit_callbacks(execute=True):
        update_benchmark(benchmark, actor=None, ranking_scope=RankingScope.PER_BOARD)

    assert board_names(benchmark, BoardKind.OFFICIAL) == [("Official-A", 1), ("Official-B", 2)]
    assert board_names(benchmark, BoardKind.COMMUNITY) == [("Community-C", 1)]


def test_tie_method_and_rounding_come_from_the_benchmark(medvidbench_definition):
    benchmark = medvidbench_definition
    # Equal at 3 decimals on CVS_acc, different at full precision; C is below both.
    scored_entry(benchmark, "A", values(CVS_acc=0.9001))
    scored_entry(benchmark, "B", values(CVS_acc=0.9004))
    scored_entry(benchmark, "C", values(CVS_acc=0.1))

    def cvs_mean_ranks():
        return {
            entry.submission.model_name: round(entry.mean_rank * 10)
            for entry in services.recompute_board(benchmark)
        }

    # Nine metrics tie everywhere (rank 1 each); CVS_acc: A and B share 1 ("min"), C gets 3.
    assert cvs_mean_ranks() == {"A": 10, "B": 10, "C": 12}
    update_benchmark(benchmark, actor=None, tie_method=TieMethod.DENSE)
    assert cvs_mean_ranks() == {"A": 10, "B": 10, "C": 11}
    update_benchmark(benchmark, actor=None, ranking_decimals=None)
    assert cvs_mean_ranks() == {"A": 11, "B": 10, "C": 12}


def test_pending_judge_metrics_rank_last_and_are_marked(medvidbench_definition):
    benchmark = medvidbench_definition
    scored_entry(benchmark, "Judged", values(CVS_acc=0.1))
    scored_entry(
        benchmark,
        "Pending",
        values(CVS_acc=0.9, DVC_llm=None, VS_llm=None, RC_llm=None),
        status=EvaluationStatus.SCORED,
    )

    entries = {entry.submission.model_name: entry for entry in services.recompute_board(benchmark)}

    # Pending: rank 1 on CVS_acc, 1 on the six ties, 2 (last) on each judge metric.
    assert entries["Pending"].mean_rank == pytest.approx((1 + 6 + 3 * 2) / 10)
    assert entries["Judged"].mean_rank == pytest.approx((2 + 6 + 3 * 1) / 10)
    assert (entries["Pending"].judge_pending, entries["Judged"].judge_pending) == (True, False)
    assert [entry.submission.model_name for entry in services.recompute_board(benchmark)] == [
        "Judged",
        "Pending",
    ]


def test_best_and_second_best_are_marked_per_board(medvidbench_definition):
    benchmark = medvidbench_definition
    scored_entry(benchmark, "A", values(CVS_acc=0.9, NAP_acc=None))
    scored_entry(benchmark, "B", values(CVS_acc=0.9, NAP_acc=0.2))
    scored_entry(benchmark, "C", values(CVS_acc=0.3, NAP_acc=0.1))
    scored_entry(benchmark, "D", values(CVS_acc=0.1, NAP_acc=0.3))
    scored_entry(benchmark, "Verified", values(CVS_acc=0.1), verification_status="verified")

    entries = {entry.submission.model_name: entry for entry in services.recompute_board(benchmark)}

    def marks(name, key):
        return entries[name].highlights.get(key)

    assert [marks(name, "CVS_acc") for name in "ABCD"] == ["best", "best", "second", None]
    assert [marks(name, "NAP_acc") for name in "ABCD"] == [None, "second", None, "best"]
    # The official board is its own table: its single row holds every best value there.
    assert marks("Verified", "CVS_acc") == "best"


def test_a_run_that_gains_scores_updates_the_board_on_commit(
    benchmark, perfect_predictions, django_capture_on_commit_callbacks
):
    submission = services.create_submission(
        benchmark,
        owner=UserFactory(),
        details=services.SubmissionDetails(model_name="Fresh"),
        predictions=perfect_predictions,
    )
    assert not BoardEntry.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        services.score_evaluation(submission.evaluations.get())

    entry = BoardEntry.objects.get()
    assert (entry.submission, entry.board, entry.rank, entry.judge_pending) == (
        submission,
        BoardKind.COMMUNITY,
        1,
        True,
    )


def test_the_newest_scored_run_is_shown(medvidbench_definition):
    submission = scored_entry(medvidbench_definition, "Rerun", values(CVS_acc=0.1))
    newer = EvaluationFactory(
        submission=submission, status=EvaluationStatus.COMPLETE, metrics=values(CVS_acc=0.7)
    )
    EvaluationFactory(submission=submission, status=EvaluationStatus.QUEUED)  # newest, no scores

    (entry,) = services.recompute_board(medvidbench_definition)

    assert (entry.evaluation, entry.values["CVS_acc"]) == (newer, 0.7)


def test_failed_and_evaluate_only_runs_are_never_on_a_board(medvidbench_definition):
    benchmark = medvidbench_definition
    scored_entry(benchmark, "Shown", values())
    scored_entry(benchmark, "Private", values(), publish=False)
    failed = SubmissionFactory(benchmark=benchmark, model_name="Broken")
    EvaluationFactory(
        submission=failed, status=EvaluationStatus.FAILED, error_code="internal_error"
    )

    entries = services.recompute_board(benchmark)

    assert [entry.submission.model_name for entry in entries] == ["Shown"]


VERIFICATION_PAIRS = list(itertools.product(VerificationStatus, VerificationStatus))
V = VerificationStatus


def scored_entry_run(submission):
    return EvaluationFactory(
        submission=submission,
        status=EvaluationStatus.COMPLETE,
        metrics=submission.evaluations.first().metrics,
        scored_at=timezone.now(),
    )


def expected_refusal(current, new, *, upload, evidence, note):
    """What the writer must refuse for this move, or None: the transition map, then the
    evidence a move to verified needs (an upload: a done re-run within the tolerance, and only
    from `verifying`; the maintainers' own result: a note when re-verified after a withdrawal or
    rejection, a re-run when it went through the workflow)."""
    if new not in current.allowed_next:
        return InvalidTransition
    if new != V.VERIFIED:
        return None
    if current == V.VERIFYING:
        return None if evidence else VerificationRefused
    if upload:
        return VerificationRefused
    if current in (V.WITHDRAWN, V.REJECTED) and not note:
        return VerificationRefused
    return None


@pytest.mark.parametrize("upload", [True, False], ids=["upload", "maintainer_result"])
@pytest.mark.parametrize("evidence", [True, False], ids=["rerun_within", "no_rerun"])
@pytest.mark.parametrize("note", ["checked", ""], ids=["note", "no_note"])
@pytest.mark.parametrize(
    ("current", "new"), VERIFICATION_PAIRS, ids=[f"{a}->{b}" for a, b in VERIFICATION_PAIRS]
)
def test_verification_accepts_exactly_the_allowed_moves_with_their_evidence(
    medvidbench_definition, current, new, upload, evidence, note
):
    submission = scored_entry(
        medvidbench_definition,
        "Entry",
        values(),
        verification_status=current,
        is_baseline=not upload,
    )
    if evidence:
        rerun = rerun_report(submission)
    before = AuditEvent.objects.count()
    refusal = expected_refusal(current, new, upload=upload, evidence=evidence, note=note)
    reason = "not reproduced" if new in VERIFICATION_NEEDS_REASON else ""
    if refusal is None:
        services.set_verification_status(submission, new, actor=None, note=note, reason=reason)
        submission.refresh_from_db()
        assert submission.verification_status == new
        assert (submission.verified_at is not None) == (new == V.VERIFIED)
        assert submission.verification_reason == reason
        event = AuditEvent.objects.first()
        data = {"from": current.value, "to": new.value, "note": note, "reason": reason}
        if new == V.VERIFIED and current == V.VERIFYING:
            data["evidence"] = within_evidence(rerun)
        elif new == V.VERIFIED:
            data["evidence"] = {
                "summary": "the maintainers' own result (baseline)",
                "kind": "maintainer_result",
            }
        assert (event.action, event.data) == (f"submissions.verification.{new.value}", data)
        assert AuditEvent.objects.count() == before + 1
    else:
        with pytest.raises(refusal):
            services.set_verification_status(submission, new, actor=None, note=note, reason=reason)
        submission.refresh_from_db()
        assert submission.verification_status == current
        assert AuditEvent.objects.count() == before


@pytest.mark.parametrize(
    ("rerun", "force", "note", "message"),
    [
        (None, False, "", "has no re-run"),
        ({"status": "queued"}, False, "", "is queued"),
        ({"status": "running"}, False, "", "is running"),
        ({"status": "failed"}, False, "", "is failed"),
        ({"within": False}, False, "", "beyond the tolerance of 0.01 on CVS_acc"),
        ({"within": False}, True, "", "Say in the note why"),
        ({"stale": True}, False, "", "now ranked by run"),
    ],
    ids=["none", "queued", "running", "failed", "outside", "forced_without_note", "stale"],
)
def test_an_upload_in_verifying_is_verified_only_on_its_newest_reruns_report(
    medvidbench_definition, rerun, force, note, message
):
    submission = scored_entry(
        medvidbench_definition, "Entry", values(), verification_status=V.VERIFYING
    )
    if rerun is not None and rerun.get("stale"):
        rerun_report(submission)
        scored_entry_run(submission)  # scored again after the re-run compared the old run
    elif rerun is not None:
        rerun_report(submission, **rerun)

    with pytest.raises(VerificationRefused, match=message):
        services.set_verification_status(submission, V.VERIFIED, actor=None, force=force)

    submission.refresh_from_db()
    assert (submission.verification_status, submission.verified_at) == (V.VERIFYING, None)
    assert board_names(medvidbench_definition, BoardKind.OFFICIAL) == []


def test_a_forced_verify_with_a_note_records_what_was_outside(medvidbench_definition):
    submission = scored_entry(
        medvidbench_definition, "Entry", values(), verification_status=V.VERIFYING
    )
    rerun = rerun_report(submission, within=False)

    services.set_verification_status(
        submission, V.VERIFIED, actor=None, force=True, note="their server's sampling changed"
    )

    event = AuditEvent.objects.first()
    assert event.data["evidence"] == {
        "summary": f"re-run {rerun.pk}: verified despite the report (their server's sampling "
        "changed)",
        "rerun": rerun.pk,
        "evaluation": submission.evaluations.get().pk,
        "compared": 1,
        "pending": 0,
        "tolerance": 0.01,
        "forced": True,
        "outside": ["CVS_acc"],
    }


def test_only_the_newest_rerun_counts(medvidbench_definition):
    submission = scored_entry(
        medvidbench_definition, "Entry", values(), verification_status=V.VERIFYING
    )
    rerun_report(submission)  # an older re-run was within the tolerance
    newest = rerun_report(submission, within=False)

    with pytest.raises(VerificationRefused, match=f"Re-run {newest.pk} differs"):
        services.set_verification_status(submission, V.VERIFIED, actor=None)


def test_an_evaluate_only_entry_cannot_be_verified():
    submission = SubmissionFactory(publish=False)
    with pytest.raises(InvalidTransition, match="evaluate-only"):
        services.set_verification_status(submission, VerificationStatus.VERIFIED, actor=None)


def test_verifying_moves_an_entry_to_the_official_board_on_commit(
    medvidbench_definition, django_capture_on_commit_callbacks
):
    benchmark = medvidbench_definition
    submission = scored_entry(
        benchmark, "Promoted", values(), verification_status=VerificationStatus.VERIFYING
    )
    rerun_report(submission)
    services.recompute_board(benchmark)
    assert board_names(benchmark, BoardKind.COMMUNITY) == [("Promoted", 1)]

    with django_capture_on_commit_callbacks(execute=True):
        services.set_verification_status(submission, VerificationStatus.VERIFIED, actor=None)

    assert board_names(benchmark, BoardKind.OFFICIAL) == [("Promoted", 1)]
    assert board_names(benchmark, BoardKind.COMMUNITY) == []


def test_a_metric_label_change_recomputes_the_board(
    medvidbench_definition, django_capture_on_commit_callbacks
):
    scored_entry(medvidbench_definition, "A", values())
    first = services.recompute_board(medvidbench_definition)[0].computed_at
    metric = medvidbench_definition.metrics.get(key="CVS_acc")

    with django_capture_on_commit_callbacks(execute=True):
        update_metric(metric, actor=None, label="CVS accuracy")

    assert BoardEntry.objects.get().computed_at > first


def test_the_task_recomputes_a_board(medvidbench_definition):
    scored_entry(medvidbench_definition, "A", values())
    assert tasks.task_recompute_board(medvidbench_definition.pk) == 1
    assert tasks.task_recompute_board(999_999) == -1
    assert BoardEntry.objects.count() == 1


def test_the_would_be_rank_is_computed_for_the_owner_only(medvidbench_definition):
    benchmark = medvidbench_definition
    owner = UserFactory()
    scored_entry(benchmark, "Top", values(CVS_acc=0.9), verification_status="verified")
    scored_entry(benchmark, "Bottom", values(CVS_acc=0.1))
    private = scored_entry(benchmark, "Private", values(CVS_acc=0.5), publish=False, owner=owner)
    services.recompute_board(benchmark)

    rank = would_be_rank(private, viewer=owner)

    assert (rank.rank, rank.out_of, rank.board) == (2, 3, BoardKind.COMMUNITY)
    assert would_be_rank(private, viewer=UserFactory(is_staff=True)) is None
    assert would_be_rank(private, viewer=None) is None
    published = Submission.objects.get(model_name="Bottom")
    assert would_be_rank(published, viewer=published.owner) is None
    # Nobody's board shows it.
    assert [row.model_name for row in board_rows(benchmark, board=BoardKind.COMMUNITY)] == [
        "Bottom"
    ]


def test_under_the_per_board_scope_the_would_be_rank_is_among_community_rows(
    medvidbench_definition,
):
    benchmark = medvidbench_definition
    update_benchmark(benchmark, actor=None, ranking_scope=RankingScope.PER_BOARD)
    owner = UserFactory()
    scored_entry(benchmark, "Top", values(CVS_acc=0.9), verification_status="verified")
    scored_entry(benchmark, "Bottom", values(CVS_acc=0.1))
    private = scored_entry(benchmark, "Private", values(CVS_acc=0.5), publish=False, owner=owner)
    services.recompute_board(benchmark)

    rank = would_be_rank(private, viewer=owner)

    assert (rank.rank, rank.out_of) == (1, 2)


# A lexicographic board (issue 14) -----------------------------------------------------------------


def test_a_lexicographic_benchmark_ranks_its_board_by_the_order(
    medvidbench_definition, django_capture_on_commit_callbacks
):
    benchmark = medvidbench_definition
    # STG_mIoU first: B and C tie at 3 decimals (0.7001, 0.7004), CVS_acc breaks it; A has the
    # best mean rank but the lowest STG_mIoU.
    scored_entry(benchmark, "A", values(STG_mIoU=0.1, CVS_acc=0.9, NAP_acc=0.9, SA_acc=0.9))
    scored_entry(benchmark, "B", values(STG_mIoU=0.7001, CVS_acc=0.2))
    scored_entry(benchmark, "C", values(STG_mIoU=0.7004, CVS_acc=0.3))
    services.recompute_board(benchmark)
    assert [name for name, _ in board_names(benchmark, BoardKind.COMMUNITY)] == ["A", "C", "B"]

    with django_capture_on_commit_callbacks(execute=True):
        update_benchmark(
            benchmark,
            actor=None,
            ranking_method="lexicographic",
            ranking_order=["STG_mIoU", "CVS_acc"],
        )

    assert board_names(benchmark, BoardKind.COMMUNITY) == [("C", 1), ("B", 2), ("A", 3)]
    # The mean rank and wins are still stored, computed as always ("min" ties). Ranks on
    # STG_mIoU, CVS_acc, NAP_acc, SA_acc, then six metrics all share at 1: A 3, 1, 1, 1 (sum
    # 12, nine won); B 1, 3, 2, 2 (14, seven); C 1, 2, 2, 2 (13, seven).
    stored = {
        entry.submission.model_name: (entry.mean_rank, entry.wins)
        for entry in BoardEntry.objects.filter(benchmark=benchmark).select_related("submission")
    }
    assert stored == {"A": (1.2, 9), "B": (1.4, 7), "C": (1.3, 7)}


def test_the_would_be_rank_follows_the_lexicographic_order(medvidbench_definition):
    benchmark = medvidbench_definition
    update_benchmark(
        benchmark, actor=None, ranking_method="lexicographic", ranking_order=["CVS_acc"]
    )
    scored_entry(benchmark, "Published", values(CVS_acc=0.6, NAP_acc=0.1))
    services.recompute_board(benchmark)
    owner = UserFactory()
    mine = scored_entry(benchmark, "Mine", values(CVS_acc=0.4), publish=False, owner=owner)

    place = would_be_rank(mine, viewer=owner)

    # Mine wins nine metrics (mean rank 1.1) but CVS_acc alone orders the board.
    assert (place.rank, place.out_of, place.mean_rank) == (2, 2, 1.1)
