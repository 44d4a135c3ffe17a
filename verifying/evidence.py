"""What an entry's verification rests on: an upload's newest re-run's discrepancy report, or
for an entry evaluated by Podium (hosted evaluation) the hosted evaluation itself.

`rerun_evidence` is installed into the verification workflow's one writer
(`submissions.verification.set_verification_status`) when the app is ready, so every path to
verified (the admin's bulk action, "Verify from report", a shell) passes the same check:
the entry's newest re-run is done, it was compared with the run the entry is ranked by, and
every compared metric is within the benchmark's tolerance, or the verify is forced with a note
saying why. Refusals are `VerificationRefused`, naming the missing step and the object where it
is taken (the entry, to start a re-run; the re-run, to wait for it or read its report).

An entry evaluated by Podium needs no second re-run (docs/hosted.md): its answers came from
Podium's own calls to the model's endpoint, so its done hosted request, and a run scored from
the file Podium wrote, are the evidence (`hosted_evidence`).
"""

from __future__ import annotations

from typing import Any

from core.exceptions import VerificationRefused
from hosting.selectors import hosted_request_of
from submissions.enums import SubmissionSource, VerificationStatus
from submissions.models import Submission
from submissions.selectors import newest_scored_run, published_copy
from submissions.services import Evidence, set_verification_status

from .enums import RerunStatus
from .models import RerunJob


def newest_rerun(submission: Submission) -> RerunJob | None:
    return submission.reruns.order_by("-created_at", "-id").first()


def hosted_evidence(submission: Submission, *, note: str = "") -> Evidence:
    """The evidence for verifying an entry evaluated by Podium: the done hosted request it came
    from (Podium asked the endpoint every question itself) and a run scored from the file
    Podium wrote, or `VerificationRefused`. No re-run, no tolerance: nothing self-reported is
    compared, the answers are Podium's own record.

    Except when the answers are byte for byte an earlier published entry's of another account:
    the copy rule does not refuse such an entry (two requests to one public model may answer
    alike), but an endpoint can also replay someone else's file, so Podium's calls no longer
    show whose model it is. Then it is verified only with a note saying why (the admin's
    Verify action's note; docs/hosted.md, "The copy rule")."""
    request = hosted_request_of(submission)
    if request is None:
        raise VerificationRefused(
            "The entry says it was evaluated by Podium, but no finished hosted evaluation "
            "produced it; it cannot be verified on that evidence.",
        )
    run = newest_scored_run(submission)
    if run is None:
        raise VerificationRefused(
            f"The entry from hosted evaluation {request.pk} is not scored yet; verify it once "
            "its run has scores.",
        )
    endpoint = request.endpoint
    data: dict[str, Any] = {
        "kind": "hosted",
        "hosted_request": request.pk,
        "evaluation": run.pk,
        "questions": request.items_total,
        "answered": request.items_done,
        "unanswered": request.items_failed,
        "model": endpoint.model,
        "origin": endpoint.origin,
        "tokens": request.tokens,
        "forced": False,
    }
    summary = (
        f"hosted evaluation {request.pk}: Podium asked {endpoint.model} at {endpoint.origin} "
        f"all {request.items_total:,} questions itself ({request.items_done:,} answered), run "
        f"{run.pk} scored from its answers; no re-run needed"
    )
    copy = published_copy(
        submission.benchmark,
        submission.predictions_sha256,
        other_than=submission.owner_id,
        created_before=submission.created_at,
    )
    if copy is None:
        return Evidence(summary, data)
    if not note.strip():
        raise VerificationRefused(
            f"The answers of hosted evaluation {request.pk} are byte for byte those of "
            f"“{copy.model_name}” (entry {copy.pk}), which another account published earlier: "
            "an endpoint may replay another's file, so Podium's calls do not show whose model "
            "this is. Verify it only with a note saying why (for example: both asked the same "
            "public model).",
        )
    data["same_answers_as"] = copy.pk
    return Evidence(f"{summary}; the same answers as entry {copy.pk}, verified ({note})", data)


def rerun_evidence(submission: Submission, *, force: bool = False, note: str = "") -> Evidence:
    """The evidence for verifying `submission` (an upload in `verifying`; an entry evaluated by
    Podium from any state the workflow lets go to verified, `hosted_evidence`), or
    `VerificationRefused`. Reads; called by the writer under its row lock."""
    if submission.source == SubmissionSource.HOSTED:
        return hosted_evidence(submission, note=note)
    job = newest_rerun(submission)
    if job is None:
        raise VerificationRefused(
            "The entry has no re-run: register the model's endpoint and start a re-run, then "
            "verify from its report.",
        )
    if job.state != RerunStatus.DONE:
        raise VerificationRefused(
            f"Re-run {job.pk} is {job.state.label.lower()} ({job.items_finished:,} of "
            f"{job.items_total:,} answers), so there is no report to verify from yet.",
        )
    report = job.report or {}
    run = newest_scored_run(submission)
    if run is None or report.get("evaluation") != run.pk:
        raise VerificationRefused(
            f"Re-run {job.pk} was compared with run {report.get('evaluation')}, but the entry is "
            f"now ranked by run {run.pk if run else 'none'}: re-run the model again.",
        )
    data: dict[str, Any] = {
        "rerun": job.pk,
        "evaluation": run.pk,
        "compared": report.get("compared", 0),
        "pending": report.get("pending", 0),
        "tolerance": report.get("tolerance"),
        "forced": False,
    }
    if report.get("all_within"):
        summary = f"re-run {job.pk}: {data['compared']} metrics within ±{data['tolerance']:g}"
        if data["pending"]:
            summary += f", {data['pending']} pending"
        return Evidence(summary, data)
    outside = [row["metric"] for row in report.get("rows", []) if row.get("within") is False]
    if force and note:
        data.update(forced=True, outside=outside)
        return Evidence(f"re-run {job.pk}: verified despite the report ({note})", data)
    if force:
        raise VerificationRefused(
            "Say in the note why the entry is verified although its report is not in order.",
        )
    raise VerificationRefused(
        f"Re-run {job.pk} differs from the self-reported values beyond the tolerance of "
        f"{report.get('tolerance', 0):g} on {', '.join(outside) or 'no compared metric'}; "
        "read the report, and force the verify with a note only if the difference is explained.",
    )


def verify_from_report(
    job: RerunJob, *, actor: Any, force: bool = False, note: str = ""
) -> Submission:
    """Verify the entry from the report of `job`, which must be its newest re-run; the writer
    checks the report (`rerun_evidence`). The Official board follows on commit."""
    newest = newest_rerun(job.submission)
    if newest is not None and newest.pk != job.pk:
        raise VerificationRefused(f"Re-run {newest.pk} is newer; verify from its report.")
    return set_verification_status(
        job.submission, VerificationStatus.VERIFIED, actor=actor, note=note, force=force
    )
