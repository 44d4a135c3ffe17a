"""The public page of one entry (issue 12, points 5 and 6): who sees it, what it says (metrics
with their intervals, rank with its interval and tier, per-dataset values, parse rates, the
judge's details, the charts), and what it never says (anyone's answers, per-sample values)."""

import html as html_text
import json
import re
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from benchmark.models import Benchmark
from submissions.enums import SubmissionSource, VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardEntry, BoardPlacement, RunReplicates, Submission
from submissions.selectors.entry_page import entry_for_viewer, entry_page
from submissions.services import import_published_result
from submissions.verification import set_verification_status
from tests.accounts.factories import UserFactory, maintainer_user
from tests.submissions import intervals_data

# The fixtures of entries with intervals (tests/submissions/intervals_data.py).
interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry
# The rank interval's dash, as the page prints it.
DASH = "\N{EN DASH}"

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def page_of(client, submission):
    url = reverse("submissions:entry", args=[submission.benchmark.slug, submission.pk])
    return client.get(url)


def text_of(response):
    """The page's visible text, tags dropped and whitespace squeezed."""
    html = response.content.decode()
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return html_text.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip())


@pytest.fixture
def board(interval_benchmark, scored_entry):
    """Three published entries (perfect, noisy, prose), their board's rank intervals computed,
    and an evaluate-only entry of `owner`."""
    owner = UserFactory()
    runs = {
        "perfect": scored_entry("Perfect Model", kind="perfect", seed=1),
        "noisy": scored_entry("Noisy Model", kind="noisy", seed=2),
        "prose": scored_entry("Prose Model", kind="prose", seed=3),
        "secret": scored_entry("Secret Model", kind="noisy", seed=4, owner=owner, publish=False),
    }
    compute_rank_intervals(interval_benchmark)
    return {name: run.submission for name, run in runs.items()} | {"owner": owner}


# --- who sees it ---------------------------------------------------------------------------------


def test_a_published_entry_is_everyones_and_an_evaluate_only_one_its_owners_and_maintainers(
    board,
):
    published, secret = board["noisy"], board["secret"]
    stranger = Client()
    stranger.force_login(UserFactory())
    owner = Client()
    owner.force_login(board["owner"])
    maintainer = Client()
    maintainer.force_login(maintainer_user())

    assert page_of(Client(), published).status_code == 200
    assert page_of(stranger, published).status_code == 200
    assert page_of(Client(), secret).status_code == 404
    assert page_of(stranger, secret).status_code == 404
    assert page_of(owner, secret).status_code == 200
    assert page_of(maintainer, secret).status_code == 200
    assert "Secret Model" in text_of(page_of(owner, secret))


def test_a_missing_entry_and_another_benchmarks_entry_404_like_a_hidden_one(board):
    other = Benchmark.objects.create(name="Other", slug="other", is_public=True)
    missing = reverse("submissions:entry", args=["medvidbench", 999_999])
    elsewhere = reverse("submissions:entry", args=[other.slug, board["noisy"].pk])
    assert Client().get(missing).status_code == 404
    assert Client().get(elsewhere).status_code == 404


def test_a_hidden_benchmarks_entries_404_for_everyone_but_maintainers(board, interval_benchmark):
    interval_benchmark.is_public = False
    interval_benchmark.save(update_fields=["is_public"])
    signed_in = Client()
    signed_in.force_login(UserFactory())
    maintainer = Client()
    maintainer.force_login(maintainer_user())
    assert page_of(Client(), board["noisy"]).status_code == 404
    assert page_of(signed_in, board["noisy"]).status_code == 404
    assert page_of(maintainer, board["noisy"]).status_code == 200


def test_the_visibility_selector_agrees_with_the_page(board, interval_benchmark):
    anonymous = AnonymousUser()
    assert entry_for_viewer(interval_benchmark, board["noisy"].pk, viewer=anonymous).pk == (
        board["noisy"].pk
    )
    with pytest.raises(Submission.DoesNotExist):
        entry_for_viewer(interval_benchmark, board["secret"].pk, viewer=anonymous)
    with pytest.raises(Submission.DoesNotExist):
        entry_for_viewer(interval_benchmark, board["secret"].pk, viewer=UserFactory())
    found = entry_for_viewer(interval_benchmark, board["secret"].pk, viewer=board["owner"])
    assert found.pk == board["secret"].pk


# --- what it says --------------------------------------------------------------------------------


def test_the_page_shows_the_details_the_rank_with_its_interval_and_the_metrics_with_theirs(
    board, interval_benchmark
):
    submission = board["noisy"]
    Submission.objects.filter(pk=submission.pk).update(
        team_name="Team Noise",
        authors="A. Author, B. Author",
        institution="Noise Lab",
        paper_url="https://example.org/paper",
        code_url="https://example.org/code",
        model_url="https://example.org/model",
    )
    entry = BoardEntry.objects.get(submission=submission)
    replicates = RunReplicates.objects.get(evaluation=entry.evaluation)

    response = page_of(Client(), submission)

    assert response.status_code == 200
    html = response.content.decode()
    text = text_of(response)
    for expected in ("Team Noise", "A. Author, B. Author", "Noise Lab"):
        assert expected in text
    assert '<a href="https://example.org/paper" rel="nofollow noopener">Paper</a>' in html
    assert '<a href="https://example.org/code" rel="nofollow noopener">Code</a>' in html
    assert '<a href="https://example.org/model" rel="nofollow noopener">Model</a>' in html
    assert entry.rank_best is not None
    assert (
        f"Rank {entry.rank} (95% interval {entry.rank_best}{DASH}{entry.rank_worst}) of 3 (the "
        "Official and Community boards are ranked together), listed on the Community board." in text
    )
    assert f"Community Verification Community Listed {entry.listed_at:%Y-%m-%d}" in text
    metrics = {metric.key: metric for metric in interval_benchmark.metrics.all()}
    low, high = replicates.intervals["CVS_acc"]
    value = entry.evaluation.metrics["CVS_acc"]
    decimals = metrics["CVS_acc"].display_decimals
    assert f"{value:.{decimals}f} [{low:.{decimals}f}, {high:.{decimals}f}]" in text
    # Judge metrics stay pending on this slice (the judge does not run).
    assert re.search(r"DVC_llm .*? pending pending", text)
    # The best values are its own board's, and the table says which board that is.
    assert '<th scope="col" class="num">Best on the Community board</th>' in html
    assert "best on its board" in html


def test_the_board_best_and_the_leader_are_the_boards_own(board):
    page = entry_page(board["prose"])
    leader = BoardEntry.objects.get(benchmark=board["prose"].benchmark, rank=1)
    best = {
        line.key: line.best
        for line in page.metrics
        if line.best is not None  # pending judge metrics have none
    }
    values = BoardEntry.objects.filter(board="community").values_list("values", flat=True)
    assert best["CVS_acc"] == max(row["CVS_acc"] for row in values)
    assert page.leader is not None
    assert page.leader.submission_id == leader.submission_id
    assert entry_page(leader.submission).leader is None  # the leader is not compared to itself


def test_a_judge_metric_accepted_over_a_subset_says_over_how_many_items(board):
    entry = BoardEntry.objects.get(submission=board["noisy"])
    values = {**entry.values, "DVC_llm": 2.5}
    BoardPlacement.objects.filter(pk=entry.pk).update(
        own_values=values, judged_over={"DVC_llm": {"judged": 2460, "items": 2472}}
    )
    run = entry.evaluation
    run.metrics = {**run.metrics, "DVC_llm": 2.5}
    run.save(update_fields=["metrics"])

    text = text_of(page_of(Client(), board["noisy"]))

    assert "2.500 over 2,460 of 2,472 items" in text


def test_entries_in_one_tier_are_said_to_be_statistically_tied(board):
    entry = BoardEntry.objects.get(submission=board["noisy"])
    others = BoardEntry.objects.filter(board=entry.board).exclude(pk=entry.pk)
    BoardPlacement.objects.filter(pk__in=[entry.pk, others[0].pk]).update(tier=7)
    tied_with = others[0].submission.model_name

    text = text_of(page_of(Client(), board["noisy"]))

    assert f"Statistically tied (tier 7) with {tied_with} (rank {others[0].rank}):" in text


def test_an_imported_row_says_it_has_no_interval_and_no_rank_interval(
    board, interval_benchmark, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # the board follows
        imported = import_published_result(
            interval_benchmark,
            model_name="Imported Model",
            values={"CVS_acc": 0.5, "NAP_acc": 0.25, "DVC_llm": 2.438},
            verified_at=datetime(2026, 4, 15, 12, tzinfo=UTC),
        )
    compute_rank_intervals(interval_benchmark, force=True)

    text = text_of(page_of(Client(), imported))
    entry = BoardEntry.objects.get(submission=imported)

    # The chart's line and the table's row.
    assert "CVS_acc 0.500, no interval (imported)" in text
    assert "0.500 no interval (imported) 0.500" in text  # its own value is the board's best
    assert "2.438 no interval (imported)" in text
    assert "Board Official Verification Verified on 2026-04-15" in text
    # MedVidBench ranks both boards together: the import is ranked among the three uploads,
    # whose resamples move its rank although its own values stay fixed.
    assert entry.rank_best is not None
    assert (
        f"Rank {entry.rank} (95% interval {entry.rank_best}{DASH}{entry.rank_worst}) of 4 (the "
        "Official and Community boards are ranked together), listed on the Official board. An "
        "imported row keeps its values in every resample; its rank moves only with the others'."
    ) in text
    assert "Imported result: the caption metrics were judged where it was first published." in text
    assert "Per dataset" not in text  # an import has no per-dataset values


def test_the_per_dataset_breakdown_and_the_parse_rates_are_shown_as_aggregates(board):
    submission = board["prose"]
    result = BoardEntry.objects.get(submission=submission).evaluation.result
    response = page_of(Client(), submission)
    text = text_of(response)

    datasets = sorted({name for values in result["per_dataset"].values() for name in values})
    assert datasets  # the slice spans several datasets
    for dataset in datasets:
        assert dataset in text
    for task, count in result["parsed"].items():
        assert re.search(rf"{task} {count['parsed']} {count['total']} \d+\.\d%", text)


def test_the_page_never_shows_unparsed_answers_or_per_sample_values(board):
    submission = board["prose"]  # the prose model's answers do not parse
    result = BoardEntry.objects.get(submission=submission).evaluation.result
    examples = [example for rows in result["unparsed_examples"].values() for example in rows]
    assert examples  # there are answers that could leak

    html = page_of(Client(), submission).content.decode()

    for example in examples:
        if example["prediction"].strip():
            assert example["prediction"][:40] not in html
        assert example["id"] not in html
    assert "unparsed" not in html
    assert "contributions" not in html


def test_a_pending_entry_without_scores_says_so(interval_benchmark):
    owner = UserFactory()
    from tests.submissions.factories import SubmissionFactory

    submission = SubmissionFactory(benchmark=interval_benchmark, owner=owner, publish=True)
    assert "No scores yet." in text_of(page_of(Client(), submission))


def test_a_verified_entry_is_on_the_official_tab_with_its_date(
    board, django_capture_on_commit_callbacks
):
    submission = board["perfect"]
    # A baseline: the maintainers' own result, verified without the re-run workflow.
    Submission.objects.filter(pk=submission.pk).update(is_baseline=True)
    submission.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):  # the board follows
        set_verification_status(
            submission,
            VerificationStatus.VERIFIED,
            actor=maintainer_user(),
            note="baseline evaluated by the maintainers",
            verified_at=datetime(2026, 11, 2, 9, tzinfo=UTC),
        )
    text = text_of(page_of(Client(), submission))
    assert "Board Official Verification Verified on 2026-11-02 Listed 2026-11-02" in text
    assert "listed on the Official board" in text


# --- the charts ----------------------------------------------------------------------------------


def test_the_charts_are_accessible_svg_with_a_title_a_description_and_a_table(board):
    html = page_of(Client(), board["noisy"]).content.decode()

    for chart in ("metric-bars", "dataset-heatmap"):
        assert f'role="img" aria-labelledby="{chart}-title {chart}-desc"' in html
        assert f'<title id="{chart}-title">' in html
        assert f'<desc id="{chart}-desc">' in html
    assert "<summary>The per-dataset values as a table</summary>" in html
    assert 'class="result entry-metrics-table"' in html
    # The Content-Security-Policy: no style attributes, no style elements, no scripts.
    assert " style=" not in html
    assert "<style" not in html
    assert "<script" not in html


def test_the_page_takes_a_fixed_number_of_queries(
    board, django_assert_num_queries, interval_benchmark, scored_entry
):
    """The benchmark, the entry, the metrics, its board row with its run, the board's rows (one
    query whatever their number), the judge's job and the snapshots of its rank history (its
    places in them cached once read): seven, with three rows or six."""
    client = Client()
    page_of(client, board["noisy"])  # warm the session and the content types
    with django_assert_num_queries(7):
        page_of(client, board["noisy"])
    for seed in range(5, 8):
        scored_entry(f"More {seed}", kind="noisy", seed=seed)
    compute_rank_intervals(interval_benchmark, force=True)
    assert BoardEntry.objects.count() == 6
    with django_assert_num_queries(7):
        page_of(client, board["noisy"])


# --- the link to the comparison with the leader --------------------------------------------------


def test_the_page_links_to_the_comparison_with_the_boards_leader(board):
    leader = BoardEntry.objects.filter(board="community").order_by("rank").first().submission
    compare = reverse("submissions:compare", args=[leader.benchmark.slug])

    html = page_of(Client(), board["prose"]).content.decode()
    leaders_page = page_of(Client(), leader).content.decode()

    assert (
        f'<a href="{compare}?a={board["prose"].pk}&amp;b={leader.pk}">Compare with the '
        f"Community board's leader, {leader.model_name}</a>"
    ) in html
    assert f"{compare}?a=" not in leaders_page  # the leader has no one above it to compare with


def test_no_entry_page_carries_a_reference_answer_or_a_sample_id(board):
    """The test set's answers and its samples' ids never reach the page, for any viewer (a
    maintainer sees the evaluate-only one too). Short answers (a class label such as "tying")
    are left out: they are words the page may use for other reasons."""
    records = intervals_data.interval_records()
    references = [record["conversations"][-1]["value"] for record in records]
    references = [text for text in references if len(text) >= 20]
    sample_ids = [str(record["id"]) for record in records if len(str(record["id"])) >= 8]
    assert len(references) > 100
    assert len(sample_ids) > 100
    maintainer = Client()
    maintainer.force_login(maintainer_user())
    pages = [
        page_of(maintainer, board[name]).content.decode()
        for name in ("perfect", "noisy", "prose", "secret")
    ]

    leaks = [text for text in references + sample_ids for html in pages if text in html]

    assert leaks == []


def test_an_evaluate_only_entry_shows_its_owner_its_runs_intervals_and_no_rank(board):
    secret = board["secret"]
    run = secret.evaluations.get()
    low, high = RunReplicates.objects.get(evaluation=run).intervals["NAP_acc"]
    owner = Client()
    owner.force_login(board["owner"])

    response = page_of(owner, secret)
    text = text_of(response)

    assert "Evaluate only: this entry is not published" in text
    assert "Board none (evaluate only) Verification Evaluate only" in text
    assert f"{run.metrics['NAP_acc']:.3f} [{low:.3f}, {high:.3f}]" in text
    assert "Rank " not in text
    assert 'aria-current="page"' not in response.content.decode()  # no board tab is its own


# --- what its verification rests on (issue 33, point 4) --------------------------------------------


def test_an_imported_row_says_where_its_numbers_were_published(interval_benchmark):
    call_command(
        "add_official_result",
        "--model", "GPT-4o",
        "--values", json.dumps({"CVS_acc": 0.6}),
        "--source", "MedGRPO paper, table 2",
        stdout=StringIO(),
    )  # fmt: skip
    imported = Submission.objects.get(model_name="GPT-4o")

    page = entry_page(imported)
    text = text_of(page_of(Client(), imported))

    assert (page.evidence, page.source) == (None, "MedGRPO paper, table 2")
    assert (
        "Where the numbers come from An imported result: its numbers were published elsewhere "
        "and entered by the maintainers, not scored by Podium. Source: MedGRPO paper, table 2"
    ) in text
    assert "Verification evidence" not in text


def test_an_imported_row_without_a_source_says_none_was_recorded(interval_benchmark):
    imported = import_published_result(
        interval_benchmark,
        model_name="Old Row",
        values={"CVS_acc": 0.5},
        verified_at=datetime(2026, 4, 15, 12, tzinfo=UTC),
    )

    assert entry_page(imported).source == "not recorded"
    assert "Source: not recorded" in text_of(page_of(Client(), imported))


def test_an_entry_evaluated_by_podium_says_its_answers_came_from_podiums_calls(board):
    hosted = board["noisy"]
    Submission.objects.filter(pk=hosted.pk).update(source=SubmissionSource.HOSTED)
    hosted.refresh_from_db()

    text = text_of(page_of(Client(), hosted))

    assert entry_page(hosted).evidence is None
    assert (
        "Where the numbers come from Evaluated by Podium: Podium asked the model's endpoint "
        "every test question itself and scored its answers"
    ) in text


def test_an_unverified_upload_shows_no_evidence_and_no_source(board):
    page = entry_page(board["noisy"])
    text = text_of(page_of(Client(), board["noisy"]))

    assert (page.evidence, page.source) == (None, "")
    assert "Verification evidence" not in text
    assert "Where the numbers come from" not in text
