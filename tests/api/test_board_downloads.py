"""The rankings' filters and the board page's downloads (issue 13, point 11): `q` and `tag`
select the rows the board page's search and tag select (one rule: the page's selector), and
`rankings.json` is every selected row as one attachment, as the CSV is."""

import csv
import io

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient

from submissions import services
from submissions.enums import BoardKind
from submissions.selectors import BoardSort, board_page, parse_board_filter
from tests.submissions.factories import scored_entry
from tests.submissions.pages import values

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def client():
    return APIClient()


@pytest.fixture
def board(medvidbench):
    """Twelve community rows: every third with a paper, every fourth a baseline, teams in two
    spellings of one name."""
    for number in range(12):
        scored_entry(
            medvidbench,
            f"Model-{number:02d}",
            values(CVS_acc=number / 20),
            team_name="Ärzte Lab" if number % 2 else "other team",
            institution="",
            paper_url=f"https://example.org/{number}.pdf" if number % 3 == 0 else "",
            is_baseline=number % 4 == 0,
        )
    services.recompute_board(medvidbench)
    return medvidbench


def url(benchmark, name="rankings"):
    return reverse(f"api:{name}", args=[benchmark.slug])


def models(payload):
    return [row["model"] for row in payload["results"]]


def page_models(benchmark, text, tag, sort=None):
    result = board_page(
        benchmark,
        board=BoardKind.COMMUNITY,
        sort=sort or BoardSort(),
        board_filter=parse_board_filter(text, tag),
        page=1,
        metrics=list(benchmark.metrics.all()),
        page_size=1000,
    )
    return [row.model_name for row in result.rows]


@pytest.mark.parametrize(
    ("text", "tag"),
    [("ärzte", ""), ("ÄRZTE LAB", "paper"), ("", "baseline"), ("model-1", ""), ("zzz", "")],
)
def test_q_and_tag_select_the_rows_the_board_page_selects(client, board, text, tag):
    response = client.get(url(board), {"board": "community", "q": text, "tag": tag})

    assert response.status_code == 200
    payload = response.json()
    assert models(payload) == page_models(board, text, tag)
    assert payload["count"] == len(payload["results"])


def test_a_filtered_page_links_its_next_page_with_the_filter(client, board):
    response = client.get(url(board), {"board": "community", "q": "lab", "page_size": 2})

    payload = response.json()
    assert payload["count"] == 6
    assert payload["next"] == (
        "http://testserver/api/v1/benchmarks/medvidbench/rankings/"
        "?board=community&sort=rank&direction=asc&q=lab&page=2&page_size=2"
    )


def test_the_json_download_is_every_selected_row_as_an_attachment(client, board):
    response = client.get(
        url(board, "rankings-json"),
        {"board": "community", "tag": "paper", "sort": "CVS_acc", "page_size": 1},
    )

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith(
        'attachment; filename="medvidbench-community-rankings-'
    )
    assert response["Content-Disposition"].endswith('.json"')
    payload = response.json()
    assert models(payload) == ["Model-09", "Model-06", "Model-03", "Model-00"]
    assert (payload["count"], payload["next"], payload["previous"]) == (4, None, None)
    paged = client.get(url(board), {"board": "community", "tag": "paper", "sort": "CVS_acc"})
    assert payload["results"] == paged.json()["results"]
    assert response["ETag"] != paged["ETag"]


def test_the_csv_download_holds_the_same_rows(client, board):
    response = client.get(url(board, "rankings-csv"), {"board": "community", "q": "ärzte"})

    header, *lines = list(csv.reader(io.StringIO(response.content.decode())))
    assert [line[header.index("model")] for line in lines] == page_models(board, "ärzte", "")
    assert len(lines) == 6


def test_an_etag_depends_on_the_filter(client, board):
    whole = client.get(url(board), {"board": "community"})
    searched = client.get(url(board), {"board": "community", "q": "lab"})
    tagged = client.get(url(board), {"board": "community", "tag": "paper"})
    empty = client.get(url(board), {"board": "community", "q": "", "tag": ""})

    assert len({whole["ETag"], searched["ETag"], tagged["ETag"]}) == 3
    assert empty["ETag"] == whole["ETag"]  # an empty filter is no filter


@pytest.mark.parametrize(
    ("params", "field"),
    [({"tag": "gold"}, "tag"), ({"q": "x" * 101}, "q")],
)
def test_an_unknown_tag_or_an_overlong_search_is_refused_by_name(client, board, params, field):
    for name in ("rankings", "rankings-json", "rankings-csv"):
        response = client.get(url(board, name), params)
        assert response.status_code == 400
        assert list(response.json()["errors"]) == [field]
