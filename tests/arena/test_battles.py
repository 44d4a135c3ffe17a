"""Battles end to end against the loopback stand-in judge (its deterministic pairwise mode, the
real openai client over HTTP, real PostgreSQL): the position-swap rule on real prompts, battles
stored and exported, the ratings written and overlaid on the board with their intervals, the
verdict cache, unusable verdicts retried then dropped, a rating left pending with its reason,
entries leaving and rejoining the boards, the entry page and the tab. Jobs are run here with
`run_job`, every on-commit hook executed."""

import json
import re
from html import unescape
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command

from arena.enums import FitStatus, ItemState, JobStatus, Shown
from arena.models import Battle, BattleJob, CategoryFit
from arena.services import on_board_recomputed, rerun_battles, run_job
from core.models import AuditEvent
from judging.models import JudgeEndpoint, Verdict
from judging.standin import Faults
from submissions import owner_actions
from submissions.models import BoardEntry, CategoryRating
from tests.accounts.factories import maintainer_user

from .conftest import CATEGORY, SLUG, demo_rows

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EXPORT_KEYS = [
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
]
NO_IDEA = "I do not know; ask a doctor."
# The Open-ended tab's page: the board's queries (a tab's page rows in two, their keys in the
# tab's order, then the rows with their submissions) and the tab note's four (fit, newest jobs,
# judge endpoint, judge models), and the latest snapshot its citation names (issue 33).
QUERIES_ON_THE_RATING_TAB = 11


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def hooks(django_capture_on_commit_callbacks):
    """A context in which every on-commit callback runs (the hooks, the ratings, the board)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def entered(enter, hooks):
    def build(name, kind="good", **options):
        with hooks():
            return enter(name, kind, **options)

    return build


@pytest.fixture
def run_all(hooks):
    """Run every queued battle job to its end here; returns them."""

    def run():
        finished = []
        for job_id in BattleJob.objects.filter(status=JobStatus.QUEUED).values_list(
            "pk", flat=True
        ):
            with hooks():
                finished.append(run_job(job_id))
        return finished

    return run


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def export(client, category=CATEGORY):
    response = client.get(f"/api/v1/benchmarks/{SLUG}/battles.jsonl?category={category}")
    body = b"".join(response.streaming_content).decode()
    return response, [json.loads(line) for line in body.splitlines()]


def test_the_position_swap_rule_end_to_end(entered, run_all, demo_files):
    strong = {row["id"]: row["answer"] for row in demo_rows(demo_files, "strong")}
    reference_like = strong["oe-004"]
    first = entered("first", "strong", answers={"oe-004": NO_IDEA})
    second = entered(
        "second",
        "weak",
        answers={"oe-001": strong["oe-001"], "oe-002": NO_IDEA, "oe-004": reference_like},
    )

    (job,) = run_all()

    assert job.status == JobStatus.DONE
    battles = {battle.question: battle for battle in Battle.objects.filter(job=job)}
    assert len(battles) == 16
    # The very same answer: each round prefers the answer shown first, so it is a tie.
    same = battles["oe-001"]
    assert (same.round1_reading, same.round2_reading, same.winner) == ("first", "first", "tie")
    # The first entry (model B) clearly better: it wins both rounds, whichever position.
    better_b = battles["oe-002"]
    assert better_b.winner == "model_b"
    assert (better_b.reading_with_a_first, better_b.reading_with_b_first) == ("second", "first")
    # The newcomer (model A) clearly better.
    better_a = battles["oe-004"]
    assert better_a.winner == "model_a"
    assert (better_a.reading_with_a_first, better_a.reading_with_b_first) == ("first", "second")
    for battle in battles.values():
        assert (battle.model_a_id, battle.model_b_id) == (second.pk, first.pk)
        assert battle.round2_first != battle.round1_first
        assert battle.judge_model == "standin-judge"
        assert battle.round1_verdict.endswith(("[[A]]", "[[B]]"))
        assert len(battle.round1_prompt_sha256) == len(battle.round2_prompt_sha256) == 64
    assert job.message == "16 battles judged."
    assert (job.battles_judged, job.battles_dropped, job.items_failed) == (16, 0, 0)


def test_battles_are_exported_as_rate_battles_reads_them_and_rate_to_the_boards_numbers(
    entered, run_all, client, tmp_path, demo_files
):
    references = [
        record["reference"]
        for record in json.loads(demo_files.test_set.read_text(encoding="utf-8"))
        if record["category"] == "open_ended"
    ]
    for name, kind in (("strong", "strong"), ("good", "good"), ("weak", "weak")):
        entered(name, kind)
    run_all()

    response, rows = export(client)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/jsonl; charset=utf-8"
    assert response["Content-Disposition"] == (
        'attachment; filename="clinicalqa-open_ended-battles.jsonl"'
    )
    stored = list(Battle.objects.order_by("id").select_related("model_a", "model_b"))
    assert len(rows) == len(stored) == 48
    for row, battle in zip(rows, stored, strict=True):
        assert list(row) == EXPORT_KEYS
        shown = {Shown.MODEL_A: battle.model_a.model_name, Shown.MODEL_B: battle.model_b.model_name}
        assert row == {
            "model_a": battle.model_a.model_name,
            "model_b": battle.model_b.model_name,
            "winner": battle.winner,
            "category": CATEGORY,
            "question": battle.question,
            "round1_first": shown[battle.round1_first],
            "round1_verdict": battle.round1_reading,
            "round2_first": shown[battle.round2_first],
            "round2_verdict": battle.round2_reading,
            "judge": "standin-judge",
            "judged_at": battle.created_at.isoformat(),
        }
    body = "\n".join(json.dumps(row) for row in rows)
    assert "[[" not in body  # no raw verdict
    assert not any(reference[:40] in body for reference in references)  # no ground truth

    path = tmp_path / "battles.jsonl"
    path.write_text(body + "\n", encoding="utf-8")
    out = StringIO()
    call_command(
        "rate_battles", str(path), "--format", "json", "--rounds", "1000", "--seed", "0", stdout=out
    )
    rated = json.loads(out.getvalue())["ratings"]
    on_board = {
        rating.submission.model_name: {
            "rating": rating.rating,
            "ci_low": rating.ci_low,
            "ci_high": rating.ci_high,
            "battles": rating.battles,
        }
        for rating in CategoryRating.objects.select_related("submission")
    }
    assert on_board == rated
    assert list(rated) == ["strong", "good", "weak"]


def test_the_ratings_are_overlaid_on_the_board_with_intervals_and_the_tab_says_how(
    entered, run_all, client
):
    for name, kind in (("strong", "strong"), ("good", "good"), ("weak", "weak")):
        entered(name, kind)
    run_all()

    fit = CategoryFit.objects.get()
    assert (fit.status, fit.battles, fit.rated, fit.reason) == (FitStatus.RATED, 48, 3, "")
    ratings = {
        rating.submission.model_name: rating
        for rating in CategoryRating.objects.select_related("submission")
    }
    board = {
        entry.submission.model_name: entry
        for entry in BoardEntry.objects.select_related("submission")
    }
    for name, rating in ratings.items():
        assert board[name].values["open_ended_rating"] == rating.rating
        assert board[name].intervals["open_ended_rating"] == [rating.ci_low, rating.ci_high]
        assert board[name].rating_battles == {"open_ended_rating": 32}
        assert board[name].category_ranks[CATEGORY] == list(ratings).index(name) + 1

    page = client.get(f"/b/{SLUG}/community/?category={CATEGORY}").content.decode()

    strong = ratings["strong"]
    spread = f"+{strong.ci_high - strong.rating:.0f}/-{strong.rating - strong.ci_low:.0f}"
    assert f"{strong.rating:.0f} {spread} 32 battles" in text(page)
    assert (
        "48 battles between 3 entries, judged by standin-judge: each battle shows the two "
        "answers twice, the positions swapped, and a preference that changes with the positions "
        "is a tie. Bradley-Terry ratings on the Elo scale, centred on 1000, with 95% intervals "
        "from 1,000 bootstrap rounds (seed 0)."
    ) in text(page)
    assert "The demo's stand-in judge is the judge here" in text(page)
    assert f'href="/api/v1/benchmarks/{SLUG}/battles.jsonl?category={CATEGORY}"' in page
    assert "python manage.py rate_battles battles.jsonl --rounds 1000 --seed 0" in page


def test_a_pairwise_prompt_judged_once_is_never_paid_again(entered, run_all, standin, demo_files):
    entered("first", "strong")
    entered("second", "weak")
    run_all()
    calls = standin.calls
    weak = demo_rows(demo_files, "weak")
    mc = next(row for row in weak if row["id"] == "mc-001")

    # The same answers under another name (a file differing by a space the letter rule drops):
    # every prompt of its battles against the first entry is one the judge answered already.
    third = entered("third", "weak", answers={"mc-001": mc["answer"] + " "})
    job = BattleJob.objects.get(submission=third)
    assert sorted(opponent["model_name"] for opponent in job.opponents) == ["first", "second"]
    run_all()

    job.refresh_from_db()
    against_first = job.items.filter(opponent__model_name="first")
    assert against_first.count() == 32
    assert set(against_first.values_list("from_cache", flat=True)) == {True}
    # Only the battles against the second entry were new prompts (and some of those repeat too).
    assert standin.calls - calls == job.items.filter(from_cache=False).count()
    assert standin.calls - calls <= 32
    assert Verdict.objects.filter(rubric_version="pairwise").count() == len(standin.prompt_calls)


def test_unusable_verdicts_are_retried_then_the_battle_is_dropped_never_guessed(
    entered, run_all, standin, client, clinicalqa
):
    entered("first", "strong")
    entered("second", "weak")
    standin.configure(Faults(rate_malformed=0.5, seed=4))

    (job,) = run_all()

    failed = list(job.items.filter(state=ItemState.FAILED))
    assert failed
    assert {item.attempts for item in failed} == {2}  # the endpoint's max_attempts
    assert all(item.last_error.startswith("no verdict in the reply:") for item in failed)
    assert job.items.filter(state=ItemState.DONE, attempts=2).exists()  # retried, then usable
    dropped = {(item.opponent_id, item.question) for item in failed}
    stored = set(Battle.objects.values_list("model_b_id", "question"))
    assert dropped.isdisjoint(stored)
    assert len(stored) + len(dropped) == 16
    assert (job.battles_judged, job.battles_dropped) == (len(stored), len(dropped))
    assert job.message == (
        f"{len(stored)} battles judged, {len(dropped)} dropped (no usable verdict after 2 "
        "attempts; not rated, never guessed)."
    )
    page = text(client.get(f"/b/{SLUG}/community/?category={CATEGORY}").content.decode())
    assert f"{len(dropped)} battles were dropped: the judge gave no usable verdict" in page

    # A maintainer runs them again: only the dropped battles are judged, now without faults.
    standin.configure(Faults())
    rerun = rerun_battles(job, actor=maintainer_user())
    assert rerun.rerun_of == job
    assert rerun.battles_total == len(dropped)
    run_all()
    assert Battle.objects.count() == 16


def test_battles_without_a_finite_rating_leave_the_entries_pending_with_the_reason(
    entered, run_all, client, demo_files
):
    no_answers = {f"oe-{number:03d}": NO_IDEA for number in range(1, 17)}
    entered("knows", "strong")
    entered("clueless", "weak", answers=no_answers)

    run_all()

    assert set(Battle.objects.values_list("winner", flat=True)) == {"model_b"}
    fit = CategoryFit.objects.get()
    assert fit.status == FitStatus.PENDING
    assert fit.pending_models == ["clueless", "knows"]
    assert "model 'knows' never lost or tied" in fit.reason
    assert not CategoryRating.objects.exists()
    assert {entry.values["open_ended_rating"] for entry in BoardEntry.objects.all()} == {None}
    html = client.get(f"/b/{SLUG}/community/?category={CATEGORY}").content.decode()
    assert "Rating pending for clueless and knows: no group of models is larger" in text(html)
    assert html.count('<td class="num rating pending"') == 2


def test_ratings_follow_entries_leaving_and_rejoining_the_boards(entered, run_all, hooks, client):
    for name, kind in (("strong", "strong"), ("good", "good"), ("weak", "weak")):
        entered(name, kind)
    run_all()
    before = dict(CategoryRating.objects.values_list("submission__model_name", "rating"))
    weak = BattleJob.objects.get(submission__model_name="weak").submission

    with hooks():
        owner_actions.set_published(weak, publish=False, actor=weak.owner)

    fit = CategoryFit.objects.get()
    assert (fit.battles, fit.rated) == (16, 2)
    assert sorted(CategoryRating.objects.values_list("submission__model_name", flat=True)) == [
        "good",
        "strong",
    ]
    _, rows = export(client)
    assert len(rows) == 16
    assert {row["model_a"] for row in rows} | {row["model_b"] for row in rows} == {"strong", "good"}

    with hooks():
        owner_actions.set_published(weak, publish=True, actor=weak.owner)

    assert dict(CategoryRating.objects.values_list("submission__model_name", "rating")) == before
    assert BattleJob.objects.filter(submission=weak).count() == 1  # its battles are kept, not rerun


def test_a_board_change_that_moves_no_entry_rates_nothing(entered, run_all, clinicalqa):
    entered("strong", "strong")
    entered("weak", "weak")
    run_all()
    stored = AuditEvent.objects.filter(action="submissions.ratings.stored").count()
    computed = CategoryFit.objects.get().computed_at

    on_board_recomputed(clinicalqa.pk)

    assert AuditEvent.objects.filter(action="submissions.ratings.stored").count() == stored
    assert CategoryFit.objects.get().computed_at == computed


def test_the_entry_page_shows_its_battles_per_opponent(entered, run_all, client):
    first = entered("first", "strong")
    second = entered("second", "weak")
    run_all()
    won = Battle.objects.filter(winner="model_b").count()
    tied = Battle.objects.filter(winner="tie").count()
    lost = Battle.objects.filter(winner="model_a").count()

    page = text(client.get(f"/b/{SLUG}/entries/{first.pk}/").content.decode())

    assert "Battles: Open-ended" in page
    assert f"{won} won, {tied} tied, {lost} lost, each battle judged twice" in page
    assert f"Opponent Won Tied Lost second {won} {tied} {lost}" in page
    other = text(client.get(f"/b/{SLUG}/entries/{second.pk}/").content.decode())
    assert f"Opponent Won Tied Lost first {lost} {tied} {won}" in other


def test_the_export_names_its_errors(clinicalqa, client):
    missing = client.get(f"/api/v1/benchmarks/{SLUG}/battles.jsonl")
    closed = client.get(f"/api/v1/benchmarks/{SLUG}/battles.jsonl?category=close_ended")
    nowhere = client.get("/api/v1/benchmarks/nope/battles.jsonl?category=open_ended")

    assert missing.status_code == 400
    assert missing.json()["errors"] == {"category": ["This field is required."]}
    assert closed.status_code == 404
    assert closed.json()["detail"] == (
        "Demo clinical QA has no rating category 'close_ended' (its rating categories: open_ended)."
    )
    assert nowhere.status_code == 404
    response, rows = export(client)
    assert (response.status_code, rows) == (200, [])


def test_a_judge_unreachable_past_the_outage_limit_fails_the_job_and_stores_nothing(
    entered, run_all, clinicalqa
):
    entered("first", "strong")
    entered("second", "weak")
    JudgeEndpoint.objects.filter(benchmark=clinicalqa).update(base_url="http://127.0.0.1:9/v1")
    # Nothing listens on the discard port: every call fails transiently until the outage limit.
    (job,) = run_all()

    assert job.status == JobStatus.FAILED
    assert job.message.startswith("The judge endpoint was unreachable")
    assert job.message.endswith(
        "No battle was stored from this job; running it again pays only for what is not cached."
    )
    assert not Battle.objects.exists()


@pytest.mark.parametrize("entries", [2, 4])
def test_the_rating_tab_takes_a_fixed_number_of_queries(
    entered, run_all, client, django_assert_num_queries, entries
):
    for name in ["strong", "good", "fair", "weak"][:entries]:
        entered(name, name)
    run_all()
    url = f"/b/{SLUG}/community/?category={CATEGORY}"

    with django_assert_num_queries(QUERIES_ON_THE_RATING_TAB):
        response = client.get(url)
    assert response.status_code == 200
