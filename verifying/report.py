"""The end of a re-run: its answers as a predictions file, scored; its captions judged with the
benchmark's judge endpoint and the verdict cache; and the discrepancy report against the
entry's self-reported result (docs/verification.md)."""

from __future__ import annotations

import hashlib
from typing import Any

from benchmark.plugins import plugin_for
from benchmark.scoring.rubric import JudgeOutcome, RubricError
from inference.client import EndpointError
from judging.client import ENDPOINT_NAME as JUDGE_ENDPOINT
from judging.client import JudgeClient, Outcome, judge_many
from judging.models import Verdict
from judging.services import active_endpoint as active_judge_endpoint
from judging.services import judge_unavailable_reason
from submissions.models import Submission
from submissions.selectors import newest_scored_run

from .config import backoff, outage
from .models import RerunJob

BULK_BATCH = 1000


def judge_captions(
    job: RerunJob, test_set: Any, predictions: Any
) -> tuple[JudgeOutcome | None, str]:
    """The judge metrics of the re-run's answers (the benchmark plugin's judge: MedVidBench's
    captions) with the benchmark's active judge endpoint,
    verdicts taken from and added to the judge's cache; (None, why) when it cannot run. The
    judge runs here, in the job's last slice: a re-run's captions are a few hundred prompts."""
    benchmark = job.submission.benchmark
    reason = judge_unavailable_reason(benchmark)
    if reason:
        return None, reason
    endpoint = active_judge_endpoint(benchmark)
    assert endpoint is not None
    try:
        rubric = benchmark.rubric()
    except RubricError as error:
        return None, f"The judge rubric cannot be used: {error}."
    judge = plugin_for(benchmark).judge
    if judge is None:
        return None, f"{benchmark.name} has no judge step."
    items = judge.items(test_set, predictions)
    prompts = {item.key: item.prompt(rubric) for item in items}
    hashes = {key: hashlib.sha256(prompt.encode()).hexdigest() for key, prompt in prompts.items()}
    cached: dict[str, dict[str, int]] = {}
    unique = sorted(set(hashes.values()))
    for start in range(0, len(unique), BULK_BATCH):
        cached.update(
            Verdict.objects.filter(
                model=endpoint.model,
                rubric_version=rubric.version,
                prompt_sha256__in=unique[start : start + BULK_BATCH],
            ).values_list("prompt_sha256", "scores")
        )
    to_send: dict[str, str] = {}  # prompt hash -> the key it is sent under
    for key, digest in hashes.items():
        if digest not in cached:
            to_send.setdefault(digest, key)
    new: list[Verdict] = []

    def on_outcomes(outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            if outcome.scores is None:
                continue
            digest = hashes[outcome.key]
            cached[digest] = outcome.scores
            new.append(
                Verdict(
                    model=endpoint.model,
                    rubric_version=rubric.version,
                    prompt_sha256=digest,
                    scores=outcome.scores,
                    answer=outcome.answer,
                    prompt_tokens=outcome.prompt_tokens,
                    completion_tokens=outcome.completion_tokens,
                    latency_ms=outcome.latency_ms,
                    endpoint=endpoint,
                )
            )

    if to_send:
        config = endpoint.config()
        client = JudgeClient(config)
        try:
            judge_many(
                [(key, prompts[key]) for key in to_send.values()],
                client=client,
                rubric=rubric,
                on_outcomes=on_outcomes,
                concurrency=config.concurrency,
                max_attempts=config.max_attempts,
                backoff=backoff(),
                outage=outage(JUDGE_ENDPOINT),
            )
        except EndpointError as error:
            return None, str(error)
        finally:
            client.close()
        if new:
            Verdict.objects.bulk_create(
                new,
                update_conflicts=True,
                unique_fields=["model", "rubric_version", "prompt_sha256"],
                update_fields=["model"],
            )
    verdicts = {key: cached.get(digest) for key, digest in hashes.items()}
    outcome = judge.outcome(test_set, items, verdicts, rubric)
    note = f"Judged by {endpoint.model}: {len(to_send)} prompts sent, the rest from the cache."
    if outcome.unavailable:
        note += f" No verdict for {', '.join(outcome.unavailable)}: pending."
    return outcome, note


def build_report(
    submission: Submission, rerun_metrics: dict[str, Any], *, failed_items: int = 0
) -> dict[str, Any]:
    """The discrepancy report: for each of the benchmark's metrics, in column order, the
    self-reported value (the entry's newest scored run), the re-run's, the difference (re-run
    minus self-reported) and whether it is within the benchmark's tolerance; a metric missing
    on either side is "pending" (not comparable). `all_within`: at least one metric compared
    and every compared one within the tolerance (pending metrics do not block)."""
    benchmark = submission.benchmark
    tolerance = benchmark.verification_tolerance
    run = newest_scored_run(submission)
    own = run.metrics if run is not None else {}
    rows = []
    for metric in benchmark.metrics.all():
        self_value, rerun_value = own.get(metric.key), rerun_metrics.get(metric.key)
        if self_value is None or rerun_value is None:
            difference, within, status = None, None, "pending"
        else:
            difference = rerun_value - self_value
            # A hair of float noise on a difference equal to the tolerance is not a failure.
            within = abs(difference) <= tolerance + 1e-12
            status = "within" if within else "outside"
        rows.append(
            {
                "metric": metric.key,
                "label": metric.label,
                "self_reported": self_value,
                "rerun": rerun_value,
                "difference": difference,
                "within": within,
                "status": status,
            }
        )
    compared = [row for row in rows if row["within"] is not None]
    return {
        "tolerance": tolerance,
        "evaluation": run.pk if run is not None else None,
        "rows": rows,
        "compared": len(compared),
        "pending": len(rows) - len(compared),
        "failed_items": failed_items,
        "all_within": bool(compared) and all(row["within"] for row in compared),
    }
