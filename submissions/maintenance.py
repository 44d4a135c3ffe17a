"""Writes on an entry that are not verification moves (those have their one writer,
`services.set_verification_status`): scoring an entry again and correcting the details a board
shows next to it. The admin's actions and change page call these for maintainers, and
`owner_actions.edit_own_entry` for the entry's owner; each is audited with the person who did
it (issue 6, issue 13).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from benchmark.models import Benchmark
from benchmark.selectors import active_testset
from core import audit, private_files
from core.exceptions import DomainError, InvalidTransition

from .board_state import board_changes
from .enums import EvaluationStatus, SnapshotReason, VerificationStatus
from .models import Evaluation, Submission
from .names import clean_names
from .selectors import latest_evaluation
from .services import check_facts, schedule_board_refresh, start_evaluation
from .snapshots import SnapshotRequest

# The details a maintainer may correct: how the entry is presented, never what was scored
# (the predictions file, its checksum, the owner, the benchmark, the model's name) nor where
# it stands (verification, publication).
PRESENTATION_FIELDS = ("institution", "team_name", "authors", "model_url", "paper_url", "code_url")

# A run in one of these states has not been scored yet: a second one would only race it.
RUNS_WAITING = frozenset(
    {EvaluationStatus.RECEIVED, EvaluationStatus.QUEUED, EvaluationStatus.SCORING}
)


def rerun_scoring(submission: Submission, *, actor: Any, note: str = "") -> Evaluation:
    """Score an entry's predictions file again, as a new run against the benchmark's active
    test set (the earlier runs stay as they are; the board shows the newest run with scores
    once this one is scored).

    Refuses (`InvalidTransition`): an entry without a predictions file (an imported published
    result), or whose file is missing on the server; a benchmark without an active test set;
    an entry with a run still waiting to be scored. Creates the run through
    `services.start_evaluation` (queued, audited, handed to the worker on commit) and writes a
    `submissions.submission.rerun_requested` audit row on the entry {evaluation,
    previous_evaluation, test_set_version, note}. Returns the new run.
    """
    with transaction.atomic():
        submission = (
            Submission.objects.select_for_update().select_related("benchmark").get(pk=submission.pk)
        )
        if not submission.predictions_file:
            raise InvalidTransition(
                "This entry has no predictions file (an imported published result): there is "
                "nothing to score again."
            )
        if not private_files.exists(submission.predictions_file):
            raise InvalidTransition("The entry's predictions file is missing on the server.")
        test_set = active_testset(submission.benchmark)
        if test_set is None:
            raise InvalidTransition(f"{submission.benchmark.name} has no active test set.")
        if submission.evaluations.filter(status__in=RUNS_WAITING).exists():
            raise InvalidTransition("A run of this entry is still waiting to be scored.")
        previous = latest_evaluation(submission)
        evaluation = start_evaluation(submission, test_set=test_set, actor=actor)
        audit.record(
            "submissions.submission.rerun_requested",
            actor=actor,
            target=submission,
            evaluation=evaluation.pk,
            previous_evaluation=previous.pk if previous else None,
            test_set_version=test_set.version,
            note=note,
        )
    return evaluation


def update_entry_details(submission: Submission, *, actor: Any, **changes: Any) -> Submission:
    """Correct an entry's presentation details (`PRESENTATION_FIELDS`) and its model facts
    (`model_facts`: the whole set, checked as an upload's by `services.check_facts`, issue 15).

    Any other field is a programming error (`ValueError`); the names (institution, team,
    authors) are normalised and checked as an upload's (`InvalidName`, `submissions.names`),
    a refused fact raises `InvalidFact`, the rest is checked as the model's fields check it
    (`ValidationError`). Saves only the fields whose value changes, writes one
    `submissions.submission.edited` audit row {changes: {field: {from, to}}} and, for a
    published entry, rebuilds the board on commit (it shows these details). Nothing changes,
    nothing is written. Returns the submission as saved. The model name is not a presentation
    field: it and its look-alike key are set once, by the writers that create an entry.
    """
    unknown = sorted(set(changes) - {*PRESENTATION_FIELDS, "model_facts"})
    if unknown:
        raise ValueError(f"not a presentation field of a submission: {', '.join(unknown)}")
    changes = {**changes, **clean_names(changes)}
    if "model_facts" in changes:
        changes["model_facts"] = check_facts(submission.benchmark, changes["model_facts"] or {})
    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission.pk)
        changed = {
            field: {"from": getattr(submission, field), "to": value}
            for field, value in changes.items()
            if getattr(submission, field) != value
        }
        if not changed:
            return submission
        for field, change in changed.items():
            setattr(submission, field, change["to"])
        submission.clean_fields(
            exclude=[field.name for field in Submission._meta.fields if field.name not in changed]
        )
        submission.save(update_fields=list(changed))
        audit.record(
            "submissions.submission.edited", actor=actor, target=submission, changes=changed
        )
        if submission.publish:
            official = submission.verification_status == VerificationStatus.VERIFIED
            schedule_board_refresh(
                submission.benchmark_id,
                SnapshotRequest(
                    SnapshotReason.EDITED,
                    f"{submission.model_name!r}: {', '.join(changed)} corrected",
                )
                if official
                else None,
            )
    return submission


def take_snapshot(benchmark: Benchmark, *, actor: Any, note: str) -> int:
    """A maintainer's snapshot of the benchmark's boards (issue 33), with the `note` saying
    why (required: a snapshot someone asked for is cited for a reason). Asked for in this
    transaction like a change's (`schedule_board_refresh`): the board is rebuilt on commit and
    the build writes the snapshot once its rank intervals are in. Audited as
    `submissions.snapshot.requested`. Returns the board change it is written after."""
    note = note.strip()
    if not note:
        raise DomainError("Say why the snapshot is taken: the note is shown with it.")
    with transaction.atomic():
        schedule_board_refresh(
            benchmark.pk, SnapshotRequest(SnapshotReason.MAINTAINER, "Taken by a maintainer", note)
        )
        audit.record("submissions.snapshot.requested", actor=actor, target=benchmark, note=note)
        return board_changes(benchmark.pk)
