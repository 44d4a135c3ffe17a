"""Writes for submissions and evaluation runs: creating an entry, the quota, imports; scoring is
in `submissions.scoring_runs` and the run's state machine in `submissions.evaluation_status`,
both re-exported here. Each state field has exactly one writer: `set_evaluation_status`,
`set_verification_status` in `submissions.verification`, and `recompute_board` (the
materialised board rows) in `submissions.boards`; both are re-exported here, where the other
apps have always found them."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark.facts import FactsError, check_model_facts
from benchmark.models import Benchmark
from benchmark.plugins import plugin_for
from benchmark.scoring.errors import PredictionsError
from benchmark.selectors import active_testset, load_scoring_testset
from core import audit, private_files
from core.exceptions import (
    DomainError,
    DuplicatePredictions,
    InvalidFact,
    InvalidName,
    InvalidOption,
    InvalidPredictions,
    QuotaExceeded,
)
from core.locks import lock_until_commit

from .board_refresh import (
    enqueue_board_recompute,
    reap_stale_boards,
    refresh_board,
    schedule_board_refresh,
)
from .boards import recompute_board
from .enums import (
    EvaluationStatus,
    FailureCode,
    SubmissionSource,
    VerificationStatus,
)
from .evaluation_status import set_evaluation_status
from .hooks import add_quota_use, quota_uses
from .models import Evaluation, Submission
from .names import (
    clean_names,
    confusable_key,
    published_name_message,
    refuse_published_lookalike,
)
from .scoring_runs import (
    MAX_SCORING_ATTEMPTS,
    TOO_MANY_ATTEMPTS_MESSAGE,
    enqueue_scoring,
    reap_stale_evaluations,
    score_evaluation,
    scoring_heartbeat_seconds,
    scoring_stale_after,
)
from .selectors import own_published_copy, published_copy, published_lookalike
from .verification import (
    Evidence,
    add_verification_listener,
    set_rerun_evidence_check,
    set_verification_status,
    verification_evidence,
)

__all__ = [
    "MAX_SCORING_ATTEMPTS",
    "TOO_MANY_ATTEMPTS_MESSAGE",
    "Evidence",
    "SubmissionDetails",
    "add_quota_use",
    "add_verification_listener",
    "check_facts",
    "create_submission",
    "enqueue_board_recompute",
    "enqueue_scoring",
    "lock_published_file",
    "reap_stale_boards",
    "reap_stale_evaluations",
    "recompute_board",
    "refresh_board",
    "schedule_board_refresh",
    "score_evaluation",
    "scoring_heartbeat_seconds",
    "scoring_stale_after",
    "set_evaluation_status",
    "set_rerun_evidence_check",
    "set_verification_status",
    "verification_evidence",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SubmissionDetails:
    """The form's fields, as plain data (a view, the API and a command build it alike)."""

    model_name: str
    institution: str = ""
    contact_email: str = ""
    model_url: str = ""
    paper_url: str = ""
    code_url: str = ""
    is_challenge_entry: bool = False
    team_name: str = ""
    authors: str = ""
    publish: bool = True
    # The benchmark plugin's options (benchmark/plugins.py: SubmissionOption): key -> value.
    options: dict[str, str] = field(default_factory=dict)
    # The model facts the benchmark asks for (issue 15, benchmark/facts.py): key -> value.
    model_facts: dict[str, Any] = field(default_factory=dict)


# --- quota ------------------------------------------------------------------------------------


def quota_window_start(now: datetime | None = None) -> datetime:
    """The start of the current quota day: midnight UTC."""
    now = now or timezone.now()
    return now.astimezone(timezone.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


# Callbacks (user, benchmark, since) -> how many more evaluations the user asked for on the
# benchmark since `since` (hooks.add_quota_use: the hosted evaluations).
QuotaUse = Callable[[Any, Benchmark, datetime], int]


def evaluations_used_today(user: Any, benchmark: Benchmark) -> int:
    """Evaluations this user requested of their own submissions on this benchmark since
    midnight UTC (cancelled ones and runs the platform itself failed do not count; a
    maintainer's reruns of other people's entries are not theirs to pay for), plus what the
    apps above count (`add_quota_use`: hosted evaluations, each counted when requested)."""
    since = quota_window_start()
    uploads = (
        Evaluation.objects.filter(
            submission__benchmark=benchmark,
            submission__owner=user,
            requested_by=user,
            created_at__gte=since,
        )
        # A hosted entry's run: its request was counted when it was submitted.
        .exclude(submission__source=SubmissionSource.HOSTED)
        .exclude(status=EvaluationStatus.CANCELLED)
        .exclude(
            error_code__in=[
                FailureCode.INTERNAL_ERROR,
                FailureCode.TEST_SET_UNAVAILABLE,
                FailureCode.FILES_UNAVAILABLE,
            ]
        )
        .count()
    )
    return uploads + sum(counter(user, benchmark, since) for counter in quota_uses)


def evaluations_left_today(user: Any, benchmark: Benchmark) -> int:
    return max(0, benchmark.daily_submission_limit - evaluations_used_today(user, benchmark))


# --- submitting ---------------------------------------------------------------------------------


def check_upload_size(benchmark: Benchmark, size: int) -> None:
    """Refuse a file over the benchmark's size cap (`InvalidPredictions`). The form and the API
    call it with the upload's size before reading its content into memory (Django has spooled
    an upload over FILE_UPLOAD_MAX_MEMORY_SIZE to a temporary file by then)."""
    limit = benchmark.max_upload_mb * 1024 * 1024
    if size > limit:
        raise InvalidPredictions(
            f"The file is {size / 1e6:.1f} MB; this benchmark accepts at most "
            f"{benchmark.max_upload_mb} MB."
        )


def check_options(benchmark: Benchmark, options: Mapping[str, str]) -> dict[str, str]:
    """The submission's options as the benchmark's plugin declares them: each required one
    present, each value one of its choices, nothing it does not ask for. Raises
    `InvalidOption` naming the option."""
    declared = plugin_for(benchmark).submission_options
    known = {option.key for option in declared}
    for key in options:
        if key not in known:
            raise InvalidOption(f"{benchmark.name} takes no option {key!r}.", field=key)
    chosen = {}
    for option in declared:
        value = options.get(option.key, "")
        if not value:
            if option.required and option.kind == "declaration":
                raise InvalidOption(
                    f"{benchmark.name} takes entries made under its {option.label.lower()} "
                    f"only; declare it: {option.statement}",
                    field=option.key,
                )
            if option.required:
                raise InvalidOption(
                    f"Choose the {option.label.lower()}: one of {', '.join(option.values)}.",
                    field=option.key,
                )
            continue
        if value not in option.values:
            raise InvalidOption(
                f"{value!r} is not a {option.label.lower()} of {benchmark.name}; choose one of "
                f"{', '.join(option.values)}.",
                field=option.key,
            )
        chosen[option.key] = value
    return chosen


def check_facts(
    benchmark: Benchmark, given: Mapping[str, Any], *, partial: bool = False
) -> dict[str, Any]:
    """The model facts as `benchmark` stores them (`benchmark.facts.check_model_facts` over
    the facts it asks for: each required one present, each value one it takes, nothing it does
    not ask for; with `partial`, missing ones are left out). Raises `InvalidFact` naming the
    first fact at fault, with every refused fact in `problems`."""
    try:
        return check_model_facts(benchmark.fact_keys, given, partial=partial)
    except FactsError as error:
        first = next(iter(error.problems))
        raise InvalidFact(str(error), field=first, problems=error.problems) from None


def validate_predictions(
    benchmark: Benchmark, raw: bytes, options: Mapping[str, str] | None = None
) -> Any:
    """Check an upload against the active test set before anything is stored: its size, then
    the benchmark plugin's strict reading (JSON, every row and field, the benchmark's length
    limit on a prediction).

    Raises `InvalidOption` for an option missing or not offered (`check_options`),
    `InvalidPredictions` with the plugin's row-by-row messages, or `DomainError` when the
    benchmark takes no submissions. Returns the parsed test set it was checked against.
    """
    check_upload_size(benchmark, len(raw))
    # The plugin reads the file with its options: only checked ones reach it (`InvalidOption`).
    options = check_options(benchmark, options or {})
    test_set = active_testset(benchmark)
    if test_set is None:
        raise DomainError(f"{benchmark.name} has no active test set yet; submissions are closed.")
    parsed = load_scoring_testset(test_set)
    try:
        plugin_for(benchmark).check_predictions(
            raw,
            parsed,
            options=options,
            max_prediction_chars=benchmark.max_prediction_chars,
        )
    except PredictionsError as error:
        raise InvalidPredictions(
            [str(problem) for problem in error.problems],
            problems=[
                {"row": problem.row, "field": problem.field, "message": problem.message}
                for problem in error.problems
            ],
            total=error.total,
        ) from None
    return parsed


def create_submission(
    benchmark: Benchmark,
    *,
    owner: Any,
    details: SubmissionDetails,
    predictions: bytes,
    source: SubmissionSource = SubmissionSource.UPLOAD,
) -> Submission:
    """Validate, store and queue a new submission with its first evaluation run.

    Synchronous checks first (the names, normalised and checked by `submissions.names`; the
    plugin's options; the model facts the benchmark asks for, `check_facts`; size, JSON, every
    row against the test set; a published model name that neither is nor looks like another
    published entry's on this benchmark); any failure raises (`InvalidName`, `InvalidFact`,
    `InvalidPredictions`, ...) and stores nothing. The daily quota is checked under a lock on
    the owner's row, so parallel uploads cannot exceed it; the unique index of published
    names' skeletons settles two look-alikes racing, and the copy rule's lock two copies
    racing (`lock_published_file`). On commit the scoring task is queued.
    `source` HOSTED is hosted evaluation's (`hosting.runner`: the file Podium wrote from the
    model's answers), checked, stored and scored exactly as an upload, except the quota (its
    request took its evaluation of the day when it was submitted) and the copy rule (which is
    the uploads', `refuse_published_copy`). Returns the submission, its names as normalised.
    """
    details = replace(details, **clean_names(vars(details)))
    details = replace(details, options=check_options(benchmark, details.options))
    details = replace(details, model_facts=check_facts(benchmark, details.model_facts))
    validate_predictions(benchmark, predictions, details.options)
    checksum = hashlib.sha256(predictions).hexdigest()
    # Early, so a copy is refused before its file is stored; decided again under the lock.
    refuse_published_copy(benchmark, owner, checksum, source=source)
    test_set = active_testset(benchmark)
    # The object first, then the row that names it: a row never points at a missing file.
    # Should the row not be written, the object is deleted again; if the store is down by
    # then, it stays behind unnamed by any row, which is harmless (docs/storage.md).
    stored = private_files.save(
        f"predictions/{benchmark.slug}/{uuid.uuid4().hex}.json", predictions
    )
    try:
        with transaction.atomic():
            # The copy rule's lock first (every writer takes it before any row lock), then the
            # rule, which now sees every entry committed before this one (issue 31, point 4).
            lock_published_file(benchmark, checksum)
            refuse_published_copy(benchmark, owner, checksum, source=source)
            # Lock the owner's row: concurrent uploads by one person queue here, so the count
            # below sees every run committed before this one.
            get_user_model().objects.select_for_update().get(pk=owner.pk)
            hosted = source == SubmissionSource.HOSTED
            if not hosted and evaluations_left_today(owner, benchmark) <= 0:
                raise QuotaExceeded(
                    f"You have used all {benchmark.daily_submission_limit} evaluations for "
                    f"{benchmark.name} today; the count resets at midnight UTC."
                )
            listed = own_published_copy(benchmark, owner, checksum) if details.publish else None
            if listed is not None:
                # The owner's own file, published already under another entry: the same
                # results are listed once, so this one is evaluate-only and points to it
                # (issue 32, point 9; `selectors.own_duplicates` finds it for the pages).
                details = replace(details, publish=False)
            if details.publish:
                refuse_published_lookalike(benchmark, details.model_name)
            submission = Submission.objects.create(
                benchmark=benchmark,
                owner=owner,
                source=source,
                model_name_skeleton=confusable_key(details.model_name),
                predictions_file=stored,
                predictions_sha256=checksum,
                predictions_size=len(predictions),
                **vars(details),
            )
            audit.record(
                "submissions.submission.created",
                actor=owner,
                target=submission,
                **(
                    {"note": f"evaluate-only: the file of the published entry #{listed.pk}"}
                    if listed is not None
                    else {}
                ),
            )
            start_evaluation(submission, test_set=test_set, actor=owner)
    except BaseException as error:
        private_files.delete_unnamed(stored)
        if isinstance(error, IntegrityError):  # a look-alike published meanwhile
            raise _name_taken(benchmark, details.model_name) from None
        raise
    return submission


def refuse_published_copy(
    benchmark: Benchmark,
    owner: Any,
    checksum: str,
    *,
    source: SubmissionSource = SubmissionSource.UPLOAD,
) -> None:
    """The copy rule (docs/hosted.md, "The copy rule"): `DuplicatePredictions` when an uploaded
    file is byte for byte one another account published on this benchmark as an upload; an
    entry is its submitter's own model's predictions. Only published entries count (refusing because of
    someone's evaluate-only entry would tell that it exists); the owner's own earlier files are
    accepted and flagged (`selectors.own_duplicates`).

    Only uploads are held to it, and only uploads count: an entry evaluated by Podium
    (`source` HOSTED) is Podium's record of what an endpoint answered, not a file anyone
    handed in, and two requests to one public model may answer alike; its verification
    weighs a byte-identical published file instead (`verifying.evidence.hosted_evidence`).

    A read: a writer decides it under `lock_published_file`, where no race gets past it."""
    if source != SubmissionSource.UPLOAD:
        return
    copy = published_copy(benchmark, checksum, other_than=owner, sources=[SubmissionSource.UPLOAD])
    if copy is not None:
        raise DuplicatePredictions(
            f"This file is byte for byte the predictions of “{copy.model_name}”, an entry "
            f"another account published on {benchmark.name}. Submit your own model's "
            f"predictions; if “{copy.model_name}” is your model, ask the maintainers to move "
            "that entry to this account. Nothing was stored and your quota is untouched."
        )


def lock_published_file(benchmark: Benchmark, checksum: str) -> None:
    """The copy rule's lock, for a writer inside its transaction that is about to create or
    publish an entry with the file `checksum` on `benchmark`: the lock of (benchmark,
    checksum), held until that transaction ends (`core.locks.lock_until_commit`: PostgreSQL's
    advisory lock; SQLite's IMMEDIATE transaction already holds its write lock). The writer
    then calls `refuse_published_copy`, which sees every entry committed before: two accounts
    publishing the same bytes at once queue here, and the second is refused. Every writer of
    an entry with a file takes it first, before any row lock (`create_submission`,
    `owner_actions.set_published`), so no two writers take locks in opposite orders."""
    lock_until_commit("submissions.published_file", benchmark.pk, checksum)


def _name_taken(benchmark: Benchmark, model_name: str) -> DomainError:
    """The refusal for a published name that lost a race to the unique indexes."""
    existing = published_lookalike(benchmark, model_name)
    if existing is None:
        return DomainError(f"A published entry named {model_name!r} already exists.")
    return InvalidName(published_name_message(model_name, existing, benchmark), field="model_name")


def start_evaluation(submission: Submission, *, test_set: Any, actor: Any) -> Evaluation:
    """Create a run in `received`, queue it, and hand it to the worker when the transaction
    commits. Used for first runs and reruns alike."""
    evaluation = Evaluation.objects.create(
        submission=submission, test_set=test_set, requested_by=actor
    )
    set_evaluation_status(evaluation, EvaluationStatus.QUEUED, actor=actor)
    transaction.on_commit(lambda: enqueue_scoring(evaluation.pk))
    return evaluation


def import_published_result(
    benchmark: Benchmark,
    *,
    model_name: str,
    values: dict[str, float | None],
    verified_at: datetime,
    is_baseline: bool = False,
    actor: Any = None,
    institution: str = "",
    model_url: str = "",
    note: str = "",
    model_facts: Mapping[str, Any] | None = None,
) -> Submission:
    """Put a result published elsewhere (e.g. the official board, spec 7) on the Official board.

    Creates a `Submission` (source imported, published, no predictions file, no owner) and a
    run with the given metric values and no test set, walks the run through the state machine
    (received -> queued -> scoring -> scored -> complete, each step audited, noted as an
    import) and verifies the entry as of `verified_at`, which is also its published date (the
    board's date column, kept when the row is later withdrawn and verified again). Metric keys the benchmark does not
    have are refused (`DomainError`); the names are normalised and checked as an upload's
    (`InvalidName`), and a model name that is or looks like a published entry's is refused;
    metrics not given are missing. The model facts given are checked as an upload's
    (`check_facts`), but the maintainers may not know them all: missing ones stay missing. The
    run requests nothing on anyone's quota. The board is recomputed on commit. Returns the
    submission.
    """
    known = set(benchmark.metrics.values_list("key", flat=True))
    unknown = sorted(set(values) - known)
    if unknown:
        raise DomainError(f"{benchmark.name} has no metric {', '.join(unknown)}.")
    names = clean_names({"model_name": model_name, "institution": institution})
    model_name = names["model_name"]
    facts = check_facts(benchmark, model_facts or {}, partial=True)
    note = note or "imported published result"
    with transaction.atomic():
        refuse_published_lookalike(benchmark, model_name)
        submission = Submission.objects.create(
            benchmark=benchmark,
            source=SubmissionSource.IMPORTED,
            model_name=model_name,
            model_name_skeleton=confusable_key(model_name),
            institution=names["institution"],
            model_url=model_url,
            is_baseline=is_baseline,
            publish=True,
            published_at=verified_at,
            model_facts=facts,
        )
        audit.record("submissions.submission.imported", actor=actor, target=submission, note=note)
        evaluation = Evaluation.objects.create(
            submission=submission,
            metrics={key: values.get(key) for key in known},
            result={"source": "imported"},
        )
        for state in (
            EvaluationStatus.QUEUED,
            EvaluationStatus.SCORING,
            EvaluationStatus.SCORED,
            EvaluationStatus.COMPLETE,
        ):
            set_evaluation_status(evaluation, state, actor=actor, note=note)
        set_verification_status(
            submission, VerificationStatus.VERIFIED, actor=actor, note=note, verified_at=verified_at
        )
    return submission
