"""Categories (tabs), rating columns and model facts (issue 15, points 3 and 4), on the toy
benchmark with two categories and every model fact (`categories.py`), registered for the test
only: the definition's rows, the one writer of ratings, the overlay on the board and its
pending state, the ranks per category (ties included), the tabs on the page, the API's
`category` and facts parameters, and the facts on the form, the API and the owner's edit.
Real PostgreSQL, Django's test client, no mocks."""

import csv
import io
import json
import math
import re
from datetime import UTC, datetime
from html import unescape
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from api.rankings_serializers import RankingRowSerializer
from benchmark.facts import FACTS
from benchmark.models import Benchmark, Category
from benchmark.plugins import registered
from benchmark.scoring.ranking import RankingPolicy
from benchmark.selectors import clear_parsed_testsets
from benchmark.services import ensure_benchmark, ensure_plugin_benchmark, import_testset
from core.exceptions import InvalidFact, InvalidRatings
from core.models import AuditEvent
from submissions import services
from submissions.boards import category_ranking
from submissions.models import BoardEntry, CategoryRating, Submission
from submissions.ratings import RatingValue, store_ratings
from submissions.services import SubmissionDetails
from tests.accounts.factories import UserFactory
from tests.submissions.pages import parse_table

from .categories import JUDGE_NOTE, KEY, TOY_CATEGORIES
from .categories import plugin as categories_plugin
from .plugin import plugin as toy_plugin

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LABELS = ["cat", "dog", "bird", "cat", "dog", "cat", "bird", "dog", "cat", "bird"]
SHARP = ["cat", "cat", "cat", "cat", "dog", "cat", "bird", "dog", "cat", "bird"]  # 0.8
BLUNT = ["dog", "dog", "bird", "dog", "dog", "cat", "dog", "dog", "cat", "dog"]  # 0.6
FACTS_ALPHA = {
    "type": "fine-tuned",
    "parameters": 7.0,
    "licence": "apache-2.0",
    "precision": "bfloat16",
    "domain_specific": "yes",
}
FACTS_BRAVO = {
    "type": "pretrained",
    "parameters": 0.5,
    "licence": "mit",
    "precision": "float16",
    "domain_specific": "no",
}
FACTS_CHARLIE = {
    "type": "preference-tuned",
    "licence": "proprietary",
    "precision": "int4",
    "domain_specific": "no",
}
FORM = {
    "institution": "Toy Lab",
    "contact_email": "toy@example.org",
    "model_url": "https://example.org/toy",
    "label_case": "exact",
}
COMPUTED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def rows(labels):
    return [{"row": index, "label": label} for index, label in enumerate(labels)]


def as_bytes(value) -> bytes:
    return json.dumps(value).encode()


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def private_dir(settings, tmp_path):
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    clear_parsed_testsets()
    yield settings.PODIUM_PRIVATE_DIR
    clear_parsed_testsets()


@pytest.fixture
def ground_truth(tmp_path) -> Path:
    path = tmp_path / "toy-testset.json"
    path.write_text(json.dumps([{"label": label} for label in LABELS]), encoding="utf-8")
    return path


@pytest.fixture
def plugin():
    with registered(categories_plugin) as found:
        yield found


@pytest.fixture
def benchmark(plugin, private_dir, ground_truth):
    benchmark = ensure_plugin_benchmark(KEY)
    import_testset(benchmark, ground_truth)
    return benchmark


def entry(benchmark, labels, name, facts, *, label_case="exact", owner=None) -> Submission:
    """An entry submitted and scored through the services (the form's path)."""
    submission = services.create_submission(
        benchmark,
        owner=owner or UserFactory(),
        details=SubmissionDetails(
            model_name=name,
            institution=f"{name} Lab",
            contact_email="lab@example.org",
            model_url=f"https://example.org/{name.lower()}",
            options={"label_case": label_case},
            model_facts=dict(facts),
        ),
        predictions=as_bytes(rows(labels)),
    )
    services.score_evaluation(submission.evaluations.get())
    return submission


@pytest.fixture
def three(benchmark):
    """Alpha and Charlie answer alike (0.8; Charlie in upper case, so its file differs),
    Bravo worse (0.6)."""
    alpha = entry(benchmark, SHARP, "Alpha", FACTS_ALPHA)
    bravo = entry(benchmark, BLUNT, "Bravo", FACTS_BRAVO)
    charlie = entry(
        benchmark,
        [label.upper() for label in SHARP],
        "Charlie",
        FACTS_CHARLIE,
        label_case="casefold",
    )
    return alpha, bravo, charlie


@pytest.fixture
def rated(benchmark, three):
    alpha, bravo, _ = three
    store_ratings(
        benchmark,
        "open",
        {
            alpha.pk: RatingValue(1040.4, 1021.2, 1059.6, 12),
            bravo.pk: RatingValue(959.6, 940.5, 978.9, 12),
        },
        computed_at=COMPUTED,
        note="toy battles",
    )
    services.recompute_board(benchmark)
    return three


def board_entry(submission) -> BoardEntry:
    return BoardEntry.objects.get(submission=submission)


# --- the definition's rows ----------------------------------------------------------------------


def test_ensure_benchmark_creates_the_categories_rating_metric_and_settings(plugin):
    benchmark = ensure_plugin_benchmark(KEY)

    categories = list(benchmark.categories.all())
    assert [
        (c.key, c.label, c.ranking, c.metric_keys, c.position, c.judge_note) for c in categories
    ] == [
        ("closed", "Close-ended", "metrics", ["accuracy", "macro_accuracy"], 1, ""),
        ("open", "Open-ended", "rating", ["preference"], 2, JUDGE_NOTE),
    ]
    assert categories[1].description == (
        "Each picture described in words; answers compared two at a time."
    )
    assert list(benchmark.metrics.filter(is_rating=True).values_list("key", flat=True)) == [
        "preference"
    ]
    assert benchmark.model_facts == [
        "type",
        "parameters",
        "licence",
        "precision",
        "domain_specific",
    ]
    assert benchmark.fact_keys == benchmark.model_facts
    assert (
        benchmark.pairwise_opponents,
        benchmark.pairwise_questions,
        benchmark.rating_anchor,
        benchmark.rating_bootstrap_rounds,
        benchmark.rating_seed,
    ) == (3, None, "", 1000, 7)
    assert (
        benchmark.hosted_evaluation,
        benchmark.hosted_max_tokens,
        benchmark.hosted_requests_per_minute,
    ) == (False, 2_000_000, 600)
    (event,) = AuditEvent.objects.filter(action="benchmark.benchmark.created")
    assert event.data["categories"] == ["closed", "open"]
    # Idempotent: a second run changes and audits nothing.
    ensure_plugin_benchmark(KEY)
    assert AuditEvent.objects.count() == 1


def test_the_categories_follow_the_definition_their_texts_only_with_overwrite(plugin):
    from dataclasses import replace

    benchmark = ensure_plugin_benchmark(KEY)
    closed, open_ = TOY_CATEGORIES.categories
    edited = replace(
        TOY_CATEGORIES,
        # The open tab first, its text edited; the closed tab's metrics narrowed.
        categories=(
            replace(open_, label="Free text", judge_note="GPT-5 is the judge here"),
            replace(closed, metrics=("accuracy",)),
        ),
    )

    ensure_benchmark(edited)

    rows = {c.key: c for c in benchmark.categories.all()}
    assert (rows["open"].position, rows["closed"].position) == (1, 2)
    assert rows["closed"].metric_keys == ["accuracy"]
    assert (rows["open"].label, rows["open"].judge_note) == ("Open-ended", JUDGE_NOTE)
    event = AuditEvent.objects.filter(action="benchmark.benchmark.updated").get()
    assert event.data["categories_updated"] == {
        "open": ["position"],
        "closed": ["metric_keys", "position"],
    }

    ensure_benchmark(edited, overwrite=True)
    assert benchmark.categories.get(key="open").label == "Free text"
    assert benchmark.categories.get(key="open").judge_note == "GPT-5 is the judge here"

    ensure_benchmark(replace(edited, categories=edited.categories[:1]), overwrite=True)
    assert list(benchmark.categories.values_list("key", flat=True)) == ["open"]
    last = AuditEvent.objects.filter(action="benchmark.benchmark.updated").first()
    assert last.data["categories_removed"] == ["closed"]


def test_setup_benchmarks_makes_the_categories_and_the_admin_shows_them(plugin, admin_client):
    call_command("setup_benchmarks", verbosity=0)
    benchmark = Benchmark.objects.get(slug=KEY)

    page = admin_client.get(reverse("admin:benchmark_benchmark_change", args=[benchmark.pk]))

    content = text(page.content.decode())
    assert page.status_code == 200
    assert (
        "Close-ended (closed): accuracy, macro_accuracy, ranked by the category's metrics"
        in content
    )
    assert (
        f"Open-ended (open): preference, ranked by its pairwise rating, highest first; {JUDGE_NOTE}"
        in content
    )
    # Shown, not edited: no input for the settings.
    assert 'name="pairwise_opponents"' not in page.content.decode()
    assert 'name="model_facts"' not in page.content.decode()


def test_every_fact_key_has_its_vocabulary():
    from benchmark.definitions import MODEL_FACT_KEYS

    assert tuple(FACTS) == MODEL_FACT_KEYS


# --- the one writer of ratings ------------------------------------------------------------------


def test_store_ratings_replaces_the_category_audits_and_refreshes_the_board(
    benchmark, three, django_capture_on_commit_callbacks
):
    alpha, bravo, charlie = three
    services.recompute_board(benchmark)
    assert board_entry(alpha).values["preference"] is None

    with django_capture_on_commit_callbacks(execute=True):
        first = store_ratings(
            benchmark,
            "open",
            {
                bravo.pk: RatingValue(1010.0, 990.0, 1030.0, 4),
                alpha.pk: RatingValue(990.0, None, None, 4),
            },
            computed_at=COMPUTED,
        )
    assert [(row.submission_id, row.rating) for row in first] == [
        (bravo.pk, 1010.0),
        (alpha.pk, 990.0),
    ]
    assert board_entry(bravo).values["preference"] == 1010.0
    assert board_entry(bravo).intervals["preference"] == [990.0, 1030.0]
    assert board_entry(alpha).intervals["preference"] is None

    with django_capture_on_commit_callbacks(execute=True):
        store_ratings(
            benchmark,
            "open",
            {charlie.pk: RatingValue(1001.5, 980.0, 1020.0, 8)},
            computed_at=COMPUTED,
            note="round 2",
        )

    assert list(CategoryRating.objects.values_list("submission_id", "rating", "battles")) == [
        (charlie.pk, 1001.5, 8)
    ]
    # Replaced: the entries not given are pending again.
    assert board_entry(alpha).values["preference"] is None
    assert "preference" not in board_entry(alpha).rating_battles
    assert board_entry(charlie).rating_battles == {"preference": 8}
    events = list(AuditEvent.objects.filter(action="submissions.ratings.stored").order_by("pk"))
    assert [event.data for event in events] == [
        {
            "category": "open",
            "entries": 2,
            "removed": 0,
            "computed_at": COMPUTED.isoformat(),
            "note": "",
        },
        {
            "category": "open",
            "entries": 1,
            "removed": 2,
            "computed_at": COMPUTED.isoformat(),
            "note": "round 2",
        },
    ]
    assert events[0].target_repr == "Toy with categories"


@pytest.mark.parametrize(
    ("category", "value", "message"),
    [
        (
            "nope",
            RatingValue(1000.0),
            "Toy with categories has no category 'nope'; its categories: closed, open.",
        ),
        (
            "closed",
            RatingValue(1000.0),
            "Category 'closed' of Toy with categories is ranked by its metrics, not by a rating: it takes no ratings.",
        ),
        ("open", RatingValue(math.nan), "field 'rating': expected a finite number, got nan."),
        (
            "open",
            RatingValue(1000.0, 990.0, None),
            "an interval has both ends (ci_low and ci_high) or neither",
        ),
        ("open", RatingValue(1000.0, 1010.0, 990.0), "ci_low (1010.0) is above ci_high (990.0)."),
        (
            "open",
            RatingValue(1000.0, math.inf, 1e9),
            "field 'ci_low': expected a finite number, got inf.",
        ),
        (
            "open",
            RatingValue(1000.0, battles=-1),
            "field 'battles': expected a whole number >= 0, got -1.",
        ),
    ],
)
def test_store_ratings_refuses_what_it_cannot_store_and_writes_nothing(
    benchmark, three, category, value, message
):
    alpha = three[0]
    store_ratings(benchmark, "open", {alpha.pk: RatingValue(1000.0)}, computed_at=COMPUTED)

    with pytest.raises(InvalidRatings) as raised:
        store_ratings(benchmark, category, {alpha.pk: value}, computed_at=COMPUTED)

    assert message in str(raised.value)
    assert list(CategoryRating.objects.values_list("rating", flat=True)) == [1000.0]
    assert AuditEvent.objects.filter(action="submissions.ratings.stored").count() == 1


def test_store_ratings_refuses_an_entry_of_another_benchmark(benchmark, three, ground_truth):
    with registered(toy_plugin):
        other = ensure_plugin_benchmark("toy-classification")
        import_testset(other, ground_truth)
        stranger = entry(other, SHARP, "Stranger", {})

    with pytest.raises(InvalidRatings, match=rf"Entries #{stranger.pk} are not entries of Toy"):
        store_ratings(
            benchmark,
            "open",
            {three[0].pk: RatingValue(1000.0), stranger.pk: RatingValue(990.0)},
            computed_at=COMPUTED,
        )
    assert not CategoryRating.objects.exists()


# --- the board: overlay, pending, category ranks ------------------------------------------------


def test_the_rating_overlays_the_board_with_its_interval_and_a_pending_one_ranks_last(rated):
    alpha, _, charlie = rated

    assert board_entry(alpha).values["preference"] == 1040.4
    assert board_entry(alpha).intervals["preference"] == [1021.2, 1059.6]
    assert board_entry(alpha).rating_battles == {"preference": 12}
    assert board_entry(charlie).values["preference"] is None
    assert "preference" not in board_entry(charlie).intervals
    assert {
        e.submission.model_name: e.category_ranks
        for e in BoardEntry.objects.select_related("submission")
    } == {
        # Closed: Alpha and Charlie tie on both metrics, the name decides; Bravo is worse.
        # Open: by rating, the pending Charlie last.
        "Alpha": {"closed": 1, "open": 1},
        "Charlie": {"closed": 2, "open": 3},
        "Bravo": {"closed": 3, "open": 2},
    }
    # The overview ranks every metric, the rating included (Charlie's pending one ranks last).
    assert [e.submission.model_name for e in BoardEntry.objects.order_by("rank")] == [
        "Alpha",
        "Charlie",
        "Bravo",
    ]
    assert board_entry(alpha).model_facts == FACTS_ALPHA


def test_equal_ratings_share_no_rank_the_name_decides_and_pending_ones_go_by_name(benchmark, three):
    alpha, bravo, charlie = three
    services.recompute_board(benchmark)
    # No battles yet: everyone pending, by name.
    assert [board_entry(s).category_ranks["open"] for s in (alpha, bravo, charlie)] == [1, 2, 3]

    store_ratings(
        benchmark,
        "open",
        {
            charlie.pk: RatingValue(1000.0),
            bravo.pk: RatingValue(1000.0),
            alpha.pk: RatingValue(990.0),
        },
        computed_at=COMPUTED,
    )
    services.recompute_board(benchmark)

    assert [board_entry(s).category_ranks["open"] for s in (bravo, charlie, alpha)] == [1, 2, 3]


def test_a_metrics_category_keeps_the_part_of_a_lexicographic_order_it_has():
    closed = Category(key="closed", label="Closed", metric_keys=["macro_accuracy", "accuracy"])
    policy = RankingPolicy(method="lexicographic", order=("accuracy_cat", "accuracy"))
    from benchmark.models import Metric

    metrics = [Metric(key=key) for key in ("accuracy", "macro_accuracy", "accuracy_cat")]

    specs, kept = category_ranking(closed, metrics, policy)
    assert [spec.key for spec in specs] == ["macro_accuracy", "accuracy"]
    assert kept == RankingPolicy(method="lexicographic", order=("accuracy",))
    _, fallback = category_ranking(
        closed, metrics, RankingPolicy(method="lexicographic", order=("accuracy_cat",))
    )
    assert fallback == RankingPolicy(method="mean_rank")


def test_the_rank_intervals_hold_the_rating_still(benchmark, three):
    from submissions.intervals import compute_rank_intervals

    alpha, bravo, charlie = three
    # Alpha and Charlie score alike on every replicate (the same answers): only the rating
    # tells them apart, and it is not the test set's to resample.
    store_ratings(
        benchmark,
        "open",
        {
            charlie.pk: RatingValue(1100.0),
            alpha.pk: RatingValue(1000.0),
            bravo.pk: RatingValue(900.0),
        },
        computed_at=COMPUTED,
    )
    services.recompute_board(benchmark)

    assert compute_rank_intervals(benchmark) == 3

    assert (board_entry(charlie).rank, board_entry(alpha).rank) == (1, 2)
    # Held still, Charlie's rating keeps it above Alpha in every replicate (a rating missing
    # from the replicates would leave them tied, and the name would put Alpha first).
    assert board_entry(alpha).rank_best == 2
    assert board_entry(charlie).rank_best == 1


# --- the board page -----------------------------------------------------------------------------


def community(client, query=""):
    response = client.get(f"/b/{KEY}/community/{query}")
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def tabs(content):
    nav = re.search(r'<nav class="category-tabs"[^>]*>(.*?)</nav>', content, re.S)
    assert nav, "no category tabs"
    return re.findall(r'<a href="([^"]*)"( aria-current="page")?>([^<]*)</a>', nav.group(1))


def test_the_board_has_an_overview_tab_and_a_tab_per_category(client, rated):
    overview = community(client)

    assert tabs(overview) == [
        ("?", ' aria-current="page"', "Overview"),
        ("?category=closed", "", "Close-ended"),
        ("?category=open", "", "Open-ended"),
    ]
    table = parse_table(overview, "board")
    heading = [cell[1].removesuffix(" ▲") for cell in table.rows[0]]
    assert heading == [
        "Rank", "Model", "Team", "Facts", "accuracy", "macro_accuracy", "accuracy_bird",
        "accuracy_cat", "accuracy_dog", "Rating", "Date",
    ]  # fmt: skip
    alpha_row = table.rows[1]
    assert alpha_row[1][1].startswith("Alpha")
    assert alpha_row[3] == ("facts", "fine-tuned 7B apache-2.0 bfloat16 domain-specific")
    assert alpha_row[9] == ("num rating best", "1040 +19/-19 12 battles")
    charlie = table.rows[2]
    assert charlie[3] == ("facts", "preference-tuned proprietary int4 general")
    assert charlie[9] == ("num rating pending", "rating pending battles not run yet")
    assert 'title="rating pending: battles not run yet"' in overview
    assert 'title="95% interval 1021\N{EN DASH}1060"' in overview


def test_a_rating_tab_shows_its_judge_its_column_and_ranks_by_rating(client, rated):
    content = community(client, "?category=open")

    assert tabs(content)[2] == ("?category=open", ' aria-current="page"', "Open-ended")
    page = text(content)
    assert (
        f"Open-ended Each picture described in words; answers compared two at a time. {JUDGE_NOTE}"
        in page
    )
    assert '<p class="judge-note">Llama-3.1-70B-Instruct is the judge here</p>' in content
    assert "This tab is ranked by its rating, highest first" in page
    table = parse_table(content, "board")
    assert [cell[1].removesuffix(" ▲") for cell in table.rows[0]] == [
        "Rank", "Model", "Team", "Facts", "Rating", "Date",
    ]  # fmt: skip
    assert [(row[0][1], row[1][1].split()[0], row[4][1]) for row in table.rows[1:]] == [
        ("1st1", "Alpha", "1040 +19/-19 12 battles"),
        ("2nd2", "Bravo", "960 +19/-19 12 battles"),
        ("3rd3", "Charlie", "rating pending battles not run yet"),
    ]
    # The tab's rank has no mean rank beside it, and no rank interval or tier.
    assert "avg " not in page
    # Its links keep the tab: a column's sort, the downloads.
    assert 'href="?category=open&amp;sort=preference&amp;dir=desc"' in content
    assert "rankings.csv?board=community&amp;category=open&amp;sort=rank" in content


def test_a_metrics_tab_has_its_columns_and_its_ranks(client, rated):
    content = community(client, "?category=closed")

    table = parse_table(content, "board")
    assert [cell[1].removesuffix(" ▲") for cell in table.rows[0]] == [
        "Rank", "Model", "Team", "Facts", "accuracy", "macro_accuracy", "Date",
    ]  # fmt: skip
    assert [(row[0][1], row[1][1].split()[0]) for row in table.rows[1:]] == [
        ("1st1", "Alpha"),
        ("2nd2", "Charlie"),
        ("3rd3", "Bravo"),
    ]
    assert "judge-note" not in content
    # Sorted the other way: the worst first, by the tab's rank.
    reversed_rows = parse_table(community(client, "?category=closed&sort=rank&dir=desc"), "board")
    assert [row[1][1].split()[0] for row in reversed_rows.rows[1:]] == ["Bravo", "Charlie", "Alpha"]


def test_an_unknown_category_is_404_naming_the_categories(client, rated):
    response = client.get(f"/b/{KEY}/community/?category=nope")

    assert response.status_code == 404


def test_the_facts_filter_the_board_in_the_query_and_keep_the_tab(client, rated):
    content = community(client, "?category=open&domain_specific=no")

    table = parse_table(content, "board")
    assert [row[1][1].split()[0] for row in table.rows[1:]] == ["Bravo", "Charlie"]
    assert '<select id="board-domain_specific" name="domain_specific">' in content
    assert '<option value="no" selected>no</option>' in content
    assert '<input type="hidden" name="category" value="open">' in content
    # The tabs keep the filter, and so do the downloads.
    assert ("?domain_specific=no", "", "Overview") in tabs(content)
    assert "category=open&amp;sort=rank&amp;direction=asc&amp;domain_specific=no" in content
    only = parse_table(community(client, "?type=fine-tuned&precision=bfloat16"), "board")
    assert [row[1][1].split()[0] for row in only.rows[1:]] == ["Alpha"]
    # A value no fact takes is ignored, as an unknown tag is.
    everyone = parse_table(community(client, "?type=bogus"), "board")
    assert len(everyone.rows) == 4


def names(content):
    return [row[1][1].split()[0] for row in parse_table(content, "board").rows[1:]]


def test_the_size_range_filters_the_board_by_parameter_count(client, rated):
    """Issue 32, point 6: Alpha has 7B, Bravo 0.5B, Charlie no size. A range keeps the rows
    inside it (its ends included), leaves out a row without a size, takes either end open,
    puts ends given the wrong way round in order, and ignores what is not a size."""
    assert names(community(client, "?size_min=1")) == ["Alpha"]
    assert names(community(client, "?size_max=7")) == ["Alpha", "Bravo"]
    assert names(community(client, "?size_min=0.5&size_max=0.5")) == ["Bravo"]
    assert names(community(client, "?size_min=10&size_max=1")) == ["Alpha"]
    assert names(community(client, "?size_min=8")) == []
    lots = community(client, "?size_min=lots&type=huge")
    assert len(names(lots)) == 3
    # Ignored, and said so (issue 32's second walk: dropped silently).
    assert (
        "Model type 'huge' is not one of pretrained, fine-tuned, preference-tuned; ignored. "
        "Size from 'lots' is not a number of billions (e.g. 7 or 0.5); ignored."
    ) in text(lots)
    content = community(client, "?size_min=1&size_max=10&type=fine-tuned")
    assert names(content) == ["Alpha"]
    assert 'name="size_min" value="1"' in content
    assert 'name="size_max" value="10"' in content
    # The sort links and the downloads keep the range.
    assert "size_min=1&amp;size_max=10" in content
    assert re.search(r"rankings\.csv\?[^\"]*size_min=1&amp;size_max=10", content)
    # Only where the benchmark asks for the parameter count.
    with registered(toy_plugin):
        toy = ensure_plugin_benchmark("toy-classification")
    assert 'name="size_min"' not in client.get(f"/b/{toy.slug}/").content.decode()


def test_the_rankings_filter_on_the_size_range(rated):
    page = rankings({"board": "all", "size_min": "1"}).json()
    assert [row["model"] for row in page["results"]] == ["Alpha"]
    assert [
        row["model"] for row in rankings({"board": "all", "size_max": "7.0"}).json()["results"]
    ] == ["Alpha", "Bravo"]
    everyone = rankings({"board": "all", "size_min": "", "size_max": ""}).json()
    assert len(everyone["results"]) == 3
    assert rankings({"board": "all", "size_min": "x"}, status=400).json()["errors"] == {
        "size_min": ["A valid number is required."]
    }
    csv_rows = rankings({"board": "all", "size_min": "1"}, suffix="-csv").content.decode()
    assert len(csv_rows.strip().splitlines()) == 2  # the header and Alpha


def test_a_size_range_on_a_benchmark_without_the_parameter_count_is_404(private_dir, ground_truth):
    with registered(toy_plugin):
        ensure_plugin_benchmark("toy-classification")
        response = APIClient().get(
            reverse("api:rankings", args=["toy-classification"]), {"size_min": "7"}
        )

    assert response.status_code == 404
    assert response.json()["detail"] == (
        "Toy classification asks for no model fact 'parameters' (it asks for: none)."
    )


def test_a_benchmark_without_categories_has_no_tabs_nor_facts(client, private_dir, ground_truth):
    with registered(toy_plugin):
        toy = ensure_plugin_benchmark("toy-classification")
        import_testset(toy, ground_truth)
        entry(toy, SHARP, "Plain", {})
        services.recompute_board(toy)
        content = client.get("/b/toy-classification/community/").content.decode()

    assert "category-tabs" not in content
    assert 'class="facts"' not in content
    assert "board-type" not in content
    assert client.get("/b/toy-classification/community/?category=open").status_code == 404


def test_a_category_tab_reads_the_same_queries_for_one_entry_and_three(benchmark, client, settings):
    settings.PODIUM_BOARD_CACHE_SECONDS = 0

    def count():
        services.recompute_board(benchmark)
        with CaptureQueriesContext(connection) as queries:
            community(client, "?category=open")
        return len(queries)

    entry(benchmark, SHARP, "Alpha", FACTS_ALPHA)
    one = count()
    entry(benchmark, BLUNT, "Bravo", FACTS_BRAVO)
    entry(benchmark, [x.upper() for x in SHARP], "Charlie", FACTS_CHARLIE, label_case="casefold")
    assert count() == one


# --- the API ------------------------------------------------------------------------------------


def rankings(params, *, suffix="", status=200):
    response = APIClient().get(reverse(f"api:rankings{suffix}", args=[KEY]), params)
    assert response.status_code == status, response.content
    return response


def test_the_rankings_take_a_category_and_carry_its_ranks_and_rating(rated):
    page = rankings({"board": "all", "category": "open"}).json()

    assert (page["category"], page["metrics"]) == ("open", ["preference"])
    results = page["results"]
    assert [(row["model"], row["category_rank"], row["rank"]) for row in results] == [
        ("Alpha", 1, 1),
        ("Bravo", 2, 3),
        ("Charlie", 3, 2),
    ]
    assert results[0]["metrics"] == {
        "preference": {
            "value": 1040.4,
            "ranked_value": 1040.4,
            "rank": 1,
            "interval": [1021.2, 1059.6],
            "battles": 12,
        }
    }
    assert results[2]["metrics"]["preference"] == {
        "value": None,
        "ranked_value": None,
        "rank": 3,
        "interval": None,
        "battles": None,
    }
    assert results[0]["category_ranks"] == {"closed": 1, "open": 1}
    assert results[0]["model_facts"] == FACTS_ALPHA
    documented = set(RankingRowSerializer().fields)
    assert {frozenset(row) for row in results} == {frozenset(documented)}
    overview = rankings({"board": "all"}).json()
    assert overview["category"] is None
    assert [row["category_rank"] for row in overview["results"]] == [None, None, None]
    assert "battles" not in overview["results"][0]["metrics"]["accuracy"]


def test_an_unknown_category_or_column_is_404_and_a_bad_fact_value_400_saying_what_there_is(
    rated,
):
    # Well formed, but not this benchmark's: 404, as the board page's unknown tab.
    unknown = rankings({"category": "nope"}, status=404).json()
    assert unknown == {
        "detail": "Toy with categories has no category 'nope' (its categories: closed, open).",
        "code": "not_found",
    }
    # Not a value the schema allows: 400.
    bad = rankings({"type": "distilled"}, status=400).json()
    assert bad["errors"] == {
        "type": [
            'Model type: expected one of pretrained, fine-tuned, preference-tuned, got "distilled".'
        ]
    }
    sort = rankings({"category": "open", "sort": "accuracy"}, status=404).json()
    assert sort["detail"] == (
        "Toy with categories has no column 'accuracy' on category 'open': sort by one of: "
        "rank, model, team, date, preference."
    )


def test_a_fact_filter_on_a_benchmark_without_facts_is_404(private_dir, ground_truth):
    with registered(toy_plugin):
        ensure_plugin_benchmark("toy-classification")
        response = APIClient().get(
            reverse("api:rankings", args=["toy-classification"]), {"precision": "int8"}
        )

    assert response.status_code == 404
    assert response.json()["detail"] == (
        "Toy classification asks for no model fact 'precision' (it asks for: none)."
    )


def test_the_rankings_filter_on_the_facts(rated):
    page = rankings({"board": "all", "domain_specific": "no", "category": "closed"}).json()

    assert [(row["model"], row["category_rank"]) for row in page["results"]] == [
        ("Charlie", 2),
        ("Bravo", 3),
    ]
    assert "domain_specific=no" in (page["next"] or "domain_specific=no")
    assert [
        row["model"]
        for row in rankings({"board": "all", "precision": "bfloat16"}).json()["results"]
    ] == ["Alpha"]


def test_the_csv_of_a_tab_has_its_columns_then_its_rank_battles_and_facts(rated):
    response = rankings({"board": "all", "category": "open"}, suffix="-csv")

    lines = list(csv.reader(io.StringIO(response.content.decode())))
    header = lines[0]
    assert header[:5] == ["rank", "model", "team", "preference", "date"]
    assert header[-8:] == [
        "interval_note",
        "category_rank",
        "preference_battles",
        "type",
        "parameters",
        "licence",
        "precision",
        "domain_specific",
    ]
    body = [dict(zip(header, line, strict=True)) for line in lines[1:]]
    assert [
        (line["model"], line["category_rank"], line["preference"], line["preference_battles"])
        for line in body
    ] == [
        ("Alpha", "1", "1040.4", "12"),
        ("Bravo", "2", "959.6", "12"),
        ("Charlie", "3", "", ""),
    ]
    assert (body[0]["parameters"], body[2]["parameters"], body[2]["licence"]) == (
        "7.0",
        "",
        "proprietary",
    )
    assert (body[0]["preference_low"], body[0]["preference_high"]) == ("1021.2", "1059.6")
    whole = rankings({"board": "all", "category": "open"}, suffix="-json").json()
    assert [row["model"] for row in whole["results"]] == ["Alpha", "Bravo", "Charlie"]


# --- model facts: the form, the API, the owner's edit -------------------------------------------


def post(client, labels, **fields):
    upload = SimpleUploadedFile("predictions.json", as_bytes(rows(labels)))
    return client.post(f"/b/{KEY}/submit/", {**FORM, **fields, "predictions": upload})


def field_errors(content, name):
    found = re.search(rf'<ul class="errorlist" id="id_{name}_error">(.*?)</ul>', content, re.S)
    return (
        [text(item) for item in re.findall(r"<li>(.*?)</li>", found.group(1), re.S)]
        if found
        else []
    )


def test_the_form_asks_for_the_facts_and_refuses_missing_or_wrong_ones(benchmark, client):
    client.force_login(UserFactory())
    form = client.get(f"/b/{KEY}/submit/").content.decode()
    assert "<legend>Model facts</legend>" in form
    assert '<select name="type"' in form
    assert '<option value="preference-tuned">preference-tuned</option>' in form
    assert re.search(r'<input type="number" name="parameters" step="any"', form)

    response = post(
        client, SHARP, model_name="Faulty", precision="fp8", parameters="-3", licence="x" * 60
    )

    content = response.content.decode()
    assert response.status_code == 200
    assert not Submission.objects.exists()
    assert field_errors(content, "type") == [
        "Model type: required; one of pretrained, fine-tuned, preference-tuned."
    ]
    assert field_errors(content, "precision") == [
        "Precision: 'fp8' is not one of float32, bfloat16, float16, int8, int4."
    ]
    assert field_errors(content, "parameters") == [
        "Parameters: '-3' is not a positive number of billions, e.g. 7 or 0.5."
    ]
    assert field_errors(content, "licence") == [
        "Licence: a short text of at most 50 characters, e.g. apache-2.0, without line breaks "
        "or control characters."
    ]
    assert field_errors(content, "domain_specific") == [
        "Domain-specific: required; one of yes, no."
    ]


def test_the_form_stores_the_facts_and_the_board_shows_them(benchmark, client):
    client.force_login(UserFactory())

    response = post(
        client,
        SHARP,
        model_name="Formed",
        type="fine-tuned",
        parameters="1.3",
        licence=" llama3.1 ",
        precision="int8",
        domain_specific="yes",
    )

    submission = Submission.objects.get()
    assert response.status_code == 302
    assert submission.model_facts == {
        "type": "fine-tuned",
        "parameters": 1.3,
        "licence": "llama3.1",
        "precision": "int8",
        "domain_specific": "yes",
    }
    services.score_evaluation(submission.evaluations.get())
    services.recompute_board(benchmark)
    table = parse_table(community(client), "board")
    assert table.rows[1][3] == ("facts", "fine-tuned 1.3B llama3.1 int8 domain-specific")


def test_the_api_takes_the_facts_and_names_each_refused_one(benchmark):
    _, raw = create_api_token(UserFactory(), name="facts")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    url = reverse("api:submit", args=[KEY])

    def submit(**facts):
        data = {**FORM, "model_name": "Via API", **facts}
        data["predictions"] = SimpleUploadedFile("p.json", as_bytes(rows(SHARP)))
        return api.post(url, data, format="multipart")

    refused = submit(type="distilled", parameters="seven", licence="mit")
    assert refused.status_code == 400
    assert refused.json()["errors"] == {
        "type": ["Model type: 'distilled' is not one of pretrained, fine-tuned, preference-tuned."],
        "parameters": ["Parameters: 'seven' is not a positive number of billions, e.g. 7 or 0.5."],
        "precision": ["Precision: required; one of float32, bfloat16, float16, int8, int4."],
        "domain_specific": ["Domain-specific: required; one of yes, no."],
    }
    assert not Submission.objects.exists()

    created = submit(
        type="pretrained",
        parameters="70B",
        licence="llama3.1",
        precision="float32",
        domain_specific="no",
    )
    assert created.status_code == 201, created.content
    assert created.json()["model_facts"] == {
        "type": "pretrained",
        "parameters": 70.0,
        "licence": "llama3.1",
        "precision": "float32",
        "domain_specific": "no",
    }


def test_the_writer_refuses_facts_the_benchmark_does_not_ask_for(benchmark, ground_truth):
    with pytest.raises(InvalidFact) as raised:
        entry(benchmark, SHARP, "Odd", {**FACTS_ALPHA, "colour": "grey"})
    assert raised.value.problems == {
        "colour": "'colour' is not a model fact this benchmark asks for; it asks for type, "
        "parameters, licence, precision, domain_specific."
    }
    with registered(toy_plugin):
        toy = ensure_plugin_benchmark("toy-classification")
        import_testset(toy, ground_truth)
        with pytest.raises(
            InvalidFact,
            match=r"'type' is not a model fact this benchmark asks for; it asks for none\.",
        ):
            entry(toy, SHARP, "Typed", {"type": "pretrained"})
    assert not Submission.objects.exists()


def test_the_owner_edits_the_facts_audited_and_the_board_follows(
    benchmark, client, django_capture_on_commit_callbacks
):
    owner = UserFactory()
    submission = entry(benchmark, SHARP, "Owned", FACTS_ALPHA, owner=owner)
    services.recompute_board(benchmark)
    client.force_login(owner)
    url = reverse("submissions:edit_details", args=[submission.pk])
    form = client.get(url).content.decode()
    assert '<option value="fine-tuned" selected>fine-tuned</option>' in form
    # The parameter count as it was given ("7"), not the stored float's "7.0".
    assert re.search(r'<input type="number" name="parameters" value="7"[ >]', form)

    data = {
        "institution": submission.institution,
        "model_url": submission.model_url,
        **FACTS_ALPHA,
    }
    refused = client.post(url, {**data, "precision": "fp4"})
    assert refused.status_code == 200
    assert field_errors(refused.content.decode(), "precision") == [
        "Precision: 'fp4' is not one of float32, bfloat16, float16, int8, int4."
    ]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {**data, "precision": "int4", "parameters": ""})

    assert response.status_code == 302
    submission.refresh_from_db()
    expected = {**FACTS_ALPHA, "precision": "int4"}
    del expected["parameters"]
    assert submission.model_facts == expected
    (event,) = AuditEvent.objects.filter(action="submissions.submission.edited")
    assert event.data == {"changes": {"model_facts": {"from": FACTS_ALPHA, "to": expected}}}
    assert board_entry(submission).model_facts == expected


def test_the_benchmark_detail_lists_the_categories_and_facts(plugin, client):
    ensure_plugin_benchmark(KEY)

    body = client.get(reverse("api:benchmark-detail", args=[KEY])).json()

    assert body["categories"] == [
        {
            "key": "closed",
            "label": "Close-ended",
            "description": "The class of each picture, scored against the reference.",
            "judge_note": "",
            "ranking": "metrics",
            "metrics": ["accuracy", "macro_accuracy"],
        },
        {
            "key": "open",
            "label": "Open-ended",
            "description": "Each picture described in words; answers compared two at a time.",
            "judge_note": JUDGE_NOTE,
            "ranking": "rating",
            "metrics": ["preference"],
        },
    ]
    assert body["model_facts"] == ["type", "parameters", "licence", "precision", "domain_specific"]


def test_the_entry_page_shows_the_rating_from_the_board_or_pending(client, rated):
    alpha, _, charlie = rated

    rated_page = text(client.get(f"/b/{KEY}/entries/{alpha.pk}/").content.decode())
    pending_page = text(client.get(f"/b/{KEY}/entries/{charlie.pk}/").content.decode())

    assert "preference Preference rating 1040 [1021, 1060] 1040" in rated_page
    assert "preference Preference rating rating pending battles not run yet 1040" in pending_page
