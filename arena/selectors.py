"""Reads of the battles: who is on the boards for a rating category, the battles the ratings and
the export read, what a rating tab says and an entry's battles for its page.

"On the boards" is what the board lists: a published entry with a scored run
(`submissions.selectors.board_candidates`). Only battles between two such entries are rated and
exported; a battle of an entry that left the boards is kept and counts again if it returns.
Nothing here reads a prompt or a reference answer; the export and the pages never show the
judge's raw replies (docs/ratings.md, "The export").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Q

from benchmark.models import Benchmark, Category
from benchmark.plugins import plugin_for
from judging.services import active_endpoint
from submissions.enums import SubmissionSource
from submissions.models import Evaluation, Submission
from submissions.ratings import EntryBattles, OpponentRecord, RatingTab
from submissions.selectors import board_candidates

from .enums import ACTIVE_JOB_STATES, FitStatus, JobStatus
from .models import Battle, BattleJob, CategoryFit

EXPORT_BATCH = 2000


def rating_categories(benchmark: Benchmark) -> list[Category]:
    """The benchmark's categories ranked by a rating, in tab order."""
    return [category for category in benchmark.categories.all() if category.ranks_by_rating]


def on_the_boards(benchmark: Benchmark) -> dict[int, Evaluation]:
    """Submission id -> the run the board shows, for every entry on the boards."""
    return {run.submission_id: run for run in board_candidates(benchmark)}


def can_battle(submission: Submission) -> bool:
    """An entry whose answers can be read: uploaded with its predictions file (a result imported
    from a paper has none)."""
    return submission.source != SubmissionSource.IMPORTED and bool(submission.predictions_file)


def battles_on_the_boards(
    benchmark: Benchmark, category: str, members: dict[int, str]
) -> list[tuple[str, str, str]]:
    """(model_a, model_b, winner) by model name of every stored battle of `category` between
    two of `members` (submission id -> model name), in storage order."""
    rows = Battle.objects.filter(
        benchmark=benchmark,
        category=category,
        model_a_id__in=list(members),
        model_b_id__in=list(members),
    ).order_by("id")
    return [
        (members[a], members[b], winner)
        for a, b, winner in rows.values_list("model_a_id", "model_b_id", "winner").iterator()
    ]


EXPORT_FIELDS = (
    "model_a",
    "model_b",
    "winner",
    "category",
    "question",
    "round1_first",
    "round1_verdict",
    "round2_first",
    "round2_verdict",
    "judge",
    "judged_at",
)


def export_rows(benchmark: Benchmark, category: str) -> Iterator[dict[str, Any]]:
    """The category's battles between entries on the boards, as the export writes them (one
    JSON object per line, in storage order): `model_a`, `model_b` and `winner` exactly as
    `manage.py rate_battles` reads them, then the question's key, which model each round
    showed first and what the judge's verdict was read as ("first", "second" or "tie", by
    position), the judge model and when it was stored. No raw reply, prompt or reference."""
    names = {
        submission_id: run.submission.model_name
        for submission_id, run in on_the_boards(benchmark).items()
    }
    battles = (
        Battle.objects.filter(
            benchmark=benchmark,
            category=category,
            model_a_id__in=list(names),
            model_b_id__in=list(names),
        )
        .order_by("id")
        .values_list(
            "model_a_id",
            "model_b_id",
            "winner",
            "question",
            "round1_first",
            "round1_reading",
            "round2_reading",
            "judge_model",
            "created_at",
        )
    )
    for a, b, winner, question, first, one, two, judge, created in battles.iterator(
        chunk_size=EXPORT_BATCH
    ):
        shown = {"model_a": names[a], "model_b": names[b]}
        other = "model_b" if first == "model_a" else "model_a"
        yield {
            "model_a": names[a],
            "model_b": names[b],
            "winner": winner,
            "category": category,
            "question": question,
            "round1_first": shown[first],
            "round1_verdict": one,
            "round2_first": shown[other],
            "round2_verdict": two,
            "judge": judge,
            "judged_at": created.isoformat(),
        }


def rate_command(fit: CategoryFit | None, benchmark: Benchmark) -> str:
    """The command that rates the downloaded battles as the board did (with the settings of
    the last fit, else the benchmark's)."""
    fitted = fit is not None and fit.computed_at is not None
    rounds = fit.rounds if fitted else benchmark.rating_bootstrap_rounds
    seed = fit.seed if fitted else benchmark.rating_seed
    anchor = fit.anchor if fitted else benchmark.rating_anchor
    command = f"python manage.py rate_battles battles.jsonl --rounds {rounds} --seed {seed}"
    return command + (f" --anchor {anchor}" if anchor else "")


def _names(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def _judge_line(benchmark: Benchmark) -> str:
    """Why no battle can run, when none can ("" when the judge is there)."""
    endpoint = active_endpoint(benchmark)
    if endpoint is None:
        return (
            "No LLM judge endpoint is configured for this benchmark yet, so no battle is run "
            "and the ratings stay pending; no substitute rating is ever shown."
        )
    if endpoint.missing_key:
        return (
            f"The judge endpoint {endpoint.name!r} has no API key configured, so no battle is "
            "run and the ratings stay pending."
        )
    return ""


def latest_jobs(benchmark: Benchmark, category: str) -> dict[int, BattleJob]:
    """Submission id -> its newest battle job in the category."""
    latest: dict[int, BattleJob] = {}
    jobs = BattleJob.objects.filter(benchmark=benchmark, category=category).order_by(
        "submission_id", "-created_at", "-id"
    )
    for job in jobs:
        latest.setdefault(job.submission_id, job)
    return latest


def rating_tab(benchmark: Benchmark, category: Category) -> RatingTab | None:
    """What a rating tab says under its description: the battles its ratings rest on and who
    judged them, the battles dropped, running or not yet possible, the entries left pending
    and why, and the ratings shown without an interval. None for a benchmark without pairwise
    battles (its ratings are not this app's). A fixed number of queries, whatever the board."""
    if plugin_for(benchmark).pairwise is None:
        return None
    fit = CategoryFit.objects.filter(benchmark=benchmark, category=category.key).first()
    jobs = latest_jobs(benchmark, category.key)
    lines = []
    judge = _judge_line(benchmark)
    if judge:
        lines.append(judge)
    if fit is None or fit.status == FitStatus.WAITING or not fit.battles:
        lines.append(
            "No battles yet: each entry on the boards meets up to "
            f"{benchmark.pairwise_opponents} others, so the first waits for the second."
        )
    else:
        judges = sorted(
            set(
                Battle.objects.filter(
                    benchmark=benchmark,
                    category=category.key,
                    model_a_id__in=fit.members,
                    model_b_id__in=fit.members,
                ).values_list("judge_model", flat=True)
            )
        )
        centre = f"anchored so {fit.anchor} is 1000" if fit.anchor else "centred on 1000"
        lines.append(
            f"{fit.battles:,} battle{'s' if fit.battles != 1 else ''} between {fit.rated} "
            f"entries, judged by {_names(judges) or 'the judge'}: each battle shows the two "
            "answers twice, the positions swapped, and a preference that changes with the "
            "positions is a tie. Bradley-Terry ratings on the Elo scale, "
            f"{centre}, with 95% intervals from {fit.rounds:,} bootstrap rounds (seed "
            f"{fit.seed})."
        )
    if fit is not None and fit.pending_models:
        lines.append(
            f"Rating pending for {_names(list(fit.pending_models))}: {fit.reason}. A loss or a "
            "tie against the others in a later battle gives a finite rating; none is made up."
        )
    if fit is not None and fit.unbounded:
        lines.append(
            f"Shown without an interval: {_names(sorted(fit.unbounded))} (an end of the "
            "interval is unbounded: too many bootstrap rounds left the rating without a "
            "finite value)."
        )
    dropped = sum(job.battles_dropped for job in jobs.values() if job.status == JobStatus.DONE)
    if dropped:
        lines.append(
            f"{dropped:,} battle{'s were' if dropped != 1 else ' was'} dropped: the judge gave "
            "no usable verdict after every attempt. A dropped battle is never guessed; a "
            "maintainer can run it again."
        )
    running = sum(1 for job in jobs.values() if job.status in ACTIVE_JOB_STATES)
    if running:
        lines.append(
            f"Battles are running for {running} entr{'ies' if running != 1 else 'y'}; the "
            "ratings move when they finish."
        )
    return RatingTab(
        lines=tuple(lines),
        battles=fit.battles if fit is not None else 0,
        command=rate_command(fit, benchmark),
    )


def entry_battles(submission: Submission) -> list[EntryBattles]:
    """The entry's battles per rating category it battled in: won, tied and lost against each
    opponent on the boards (an opponent that is not is counted, never named), the battles
    dropped by its newest job and whether its battles are still running."""
    benchmark = submission.benchmark
    categories = rating_categories(benchmark)
    if not categories:
        return []
    on_boards = {
        submission_id: run.submission for submission_id, run in on_the_boards(benchmark).items()
    }
    battles = list(
        Battle.objects.filter(Q(model_a=submission) | Q(model_b=submission))
        .filter(benchmark=benchmark)
        .values_list("category", "model_a_id", "model_b_id", "winner")
    )
    jobs = {
        job.category: job
        for job in BattleJob.objects.filter(submission=submission).order_by("created_at", "id")
    }
    shown = []
    for category in categories:
        records: dict[int, list[int]] = {}
        elsewhere = 0
        for key, a, b, winner in battles:
            if key != category.key:
                continue
            other = b if a == submission.pk else a
            if other not in on_boards:
                elsewhere += 1
                continue
            mine = "model_a" if a == submission.pk else "model_b"
            counts = records.setdefault(other, [0, 0, 0])
            counts[0 if winner == mine else 1 if winner == "tie" else 2] += 1
        job = jobs.get(category.key)
        if not records and not elsewhere and job is None:
            continue
        running = ""
        if job is not None and job.status in ACTIVE_JOB_STATES:
            running = (
                f"Battles running: {job.items_done + job.items_failed:,} of "
                f"{job.items_total:,} judge calls made."
            )
        opponents = sorted(
            (
                OpponentRecord(other, on_boards[other].model_name, *counts)
                for other, counts in records.items()
            ),
            key=lambda record: record.model_name.casefold(),
        )
        shown.append(
            EntryBattles(
                category=category.key,
                label=category.label,
                opponents=tuple(opponents),
                elsewhere=elsewhere,
                dropped=job.battles_dropped if job is not None else 0,
                running=running,
            )
        )
    return shown
