"""The board page's tools (issue 13, point 11): search by model or team, the tag filter, pages
read from the database a page at a time in the order `sort_board_rows` gives, the downloads,
paper and code links, and the citation with its copy button."""

import re
from html import unescape

import pytest
from django.core.cache import cache

from submissions import services
from submissions.enums import BoardKind
from submissions.selectors import (
    BoardFilter,
    BoardSort,
    board_page,
    board_rows,
    parse_board_filter,
)

from .factories import scored_entry
from .pages import get, parse_table, values

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

VERIFIED = {"verification_status": "verified"}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


@pytest.fixture
def names_board(benchmark):
    """Community rows whose names and teams order differently casefolded, by code point, and
    with a plain lower(): accents, ß, an underscore, mixed case; equal and missing values."""
    rows = [
        ("alpha", "Lab Z", 0.5, {}),
        ("Beta", "", 0.7, {"paper_url": "https://example.org/beta.pdf"}),
        ("Émile", "ärzte lab", 0.7, {"code_url": "https://example.org/emile"}),
        ("Straße-7B", "lab b", None, {"is_baseline": True}),
        ("zeta", "Lab a", 0.1, {}),
        ("ZZ top", "", 0.9, {"paper_url": "https://example.org/zz", "code_url": "https://x.org"}),
        ("a_b", "Lab_1", 0.3, {}),
        ("ab", "Lab 1", 0.3, {}),
    ]
    for name, team, value, extra in rows:
        scored_entry(
            benchmark, name, values(CVS_acc=value), team_name=team, institution="", **extra
        )
    services.recompute_board(benchmark)
    return benchmark


def page_names(benchmark, *, board=BoardKind.COMMUNITY, sort=None, filter_=None, page=1, size=100):
    metrics = list(benchmark.metrics.all())
    result = board_page(
        benchmark,
        board=board,
        sort=sort or BoardSort(),
        board_filter=filter_ or BoardFilter(),
        page=page,
        metrics=metrics,
        page_size=size,
    )
    return [row.model_name for row in result.rows]


SORTS = [
    BoardSort(key, descending)
    for key in ("rank", "model", "team", "date", "CVS_acc")
    for descending in (False, True)
]


@pytest.mark.parametrize("sort", SORTS, ids=lambda sort: f"{sort.key}-{sort.direction}")
def test_the_database_orders_a_page_exactly_as_sort_board_rows_does(names_board, sort):
    in_code = [row.model_name for row in board_rows(names_board, board="community", sort=sort)]
    assert page_names(names_board, sort=sort) == in_code


def test_names_sort_casefolded_by_code_point_and_empty_teams_go_last(names_board):
    assert page_names(names_board, sort=BoardSort("model")) == [
        "a_b",
        "ab",
        "alpha",
        "Beta",
        "Straße-7B",
        "zeta",
        "ZZ top",
        "Émile",
    ]
    by_team = page_names(names_board, sort=BoardSort("team", descending=True))
    assert by_team[-2:] == ["ZZ top", "Beta"]  # no team: last, in rank order, either way
    assert by_team[:6] == ["Émile", "a_b", "alpha", "Straße-7B", "zeta", "ab"]


def test_the_search_matches_model_or_team_casefolded_and_literally(names_board):
    def search(text):
        return sorted(page_names(names_board, filter_=parse_board_filter(text, None)))

    assert search("STRASSE") == ["Straße-7B"]  # ß casefolds to ss
    assert search("ÄRZTE") == ["Émile"]  # the team
    assert search("  lab   a ") == ["zeta"]  # spaces collapse
    assert search("_") == ["a_b"]  # an underscore is a character, not a LIKE wildcard
    assert search("%") == []
    assert search("lab_1") == ["a_b"]
    assert search("nobody") == []


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("baseline", ["Straße-7B"]),
        ("paper", ["Beta", "ZZ top"]),
        ("code", ["ZZ top", "Émile"]),
        ("verified", []),
        ("imported", []),
    ],
)
def test_a_tag_selects_the_rows_that_carry_it(names_board, tag, expected):
    assert sorted(page_names(names_board, filter_=parse_board_filter("", tag))) == expected


def test_an_unknown_tag_and_an_overlong_search_are_tamed_not_refused():
    assert parse_board_filter("x" * 500, "nonsense") == BoardFilter(text="x" * 100, tag="")


def test_pages_split_the_rows_and_a_stray_page_number_shows_a_real_page(names_board):
    ranked = page_names(names_board)
    assert page_names(names_board, size=3) == ranked[:3]
    assert page_names(names_board, size=3, page=2) == ranked[3:6]
    assert page_names(names_board, size=3, page=99) == ranked[6:]
    assert page_names(names_board, size=3, page="x") == ranked[:3]


@pytest.fixture
def small_pages(settings):
    settings.PODIUM_BOARD_PAGE_SIZE = 3
    settings.PODIUM_BOARD_CACHE_SECONDS = 60


def test_the_page_says_where_it_is_and_links_the_others_with_sort_and_search(
    client, names_board, small_pages
):
    content = get(client, "/b/medvidbench/community/?sort=model&dir=asc&page=2")

    assert "Showing 4\N{EN DASH}6 of 8 entries." in content
    assert [row[1][1] for row in parse_table(content, "board").rows[1:]] == [
        "Beta paper",
        "Straße-7B baseline",
        "zeta",
    ]
    nav = re.search(r'<nav class="pagination".*?</nav>', content, re.S).group(0)
    links = [unescape(href) for href in re.findall(r'href="([^"]+)"', nav)]
    assert links == [
        "?sort=model&dir=asc",  # Previous
        "?sort=model&dir=asc",
        "?sort=model&dir=asc&page=2",
        "?sort=model&dir=asc&page=3",
        "?sort=model&dir=asc&page=3",  # Next
    ]
    assert 'aria-current="page" aria-label="Page 2, this page">2</a>' in content

    searched = get(client, "/b/medvidbench/community/?q=lab&tag=&sort=team&dir=asc")
    assert "Showing 1\N{EN DASH}3 of 6 matching entries for “lab”." in searched
    header = [href for href in parse_table(searched, "board").header_links if "sort=" in href]
    assert "?q=lab&sort=rank&dir=asc" in header
    assert "?q=lab&sort=team&dir=desc" in header  # the sorted column's link reverses it
    assert len(header) == 14
    assert all(href.startswith("?q=lab&sort=") for href in header)


def test_no_match_says_so_and_offers_the_whole_board(client, names_board):
    content = get(client, "/b/medvidbench/community/?q=nobody")
    assert "No entry on this board matches “nobody”." in content
    assert '<a href="?">Show the whole board</a>' in content
    assert '<table class="board' not in content
    assert 'class="pagination"' not in content


def test_a_page_of_a_large_board_costs_the_same_queries_as_the_first(
    client, benchmark, small_pages, django_assert_num_queries
):
    for number in range(10):
        scored_entry(benchmark, f"Model {number}", values(CVS_acc=number / 10))
    services.recompute_board(benchmark)

    # The benchmark, its metrics, the board summary (counts and interval states), the rows,
    # and who scored the judge columns (issue 32: one grouped query, cached with the table),
    # and the latest snapshot "Cite this board" names (issue 33).
    with django_assert_num_queries(6):
        get(client, "/b/medvidbench/community/?page=3")
    with django_assert_num_queries(4):  # cached per page
        get(client, "/b/medvidbench/community/?page=3")
    # A search also counts the rows it selects, is never cached, and reads its page's rows
    # in two steps: their keys in the page's order, then the rows with their submissions;
    # and who scored the judge columns.
    for _ in range(2):
        with django_assert_num_queries(8):
            get(client, "/b/medvidbench/community/?q=model+1")


def test_rows_show_their_paper_and_code_links(client, names_board):
    content = get(client, "/b/medvidbench/community/")
    assert (
        '<a class="entry-link" href="https://example.org/zz" rel="nofollow noopener"'
        ' aria-label="ZZ top: paper">paper</a>'
    ) in content
    assert '<a class="entry-link" href="https://x.org" rel="nofollow noopener"' in content
    assert content.count('class="entry-link"') == 4


def test_the_downloads_ask_the_api_for_the_board_as_shown(client, names_board):
    content = unescape(get(client, "/b/medvidbench/community/?q=lab&tag=code&sort=CVS_acc"))
    query = "board=community&sort=CVS_acc&direction=desc&q=lab&tag=code"
    assert f'href="/api/v1/benchmarks/medvidbench/rankings.csv?{query}" download>CSV' in content
    assert f'href="/api/v1/benchmarks/medvidbench/rankings.json?{query}" download>JSON' in content
    assert "Download these rows:" in content
    whole = unescape(get(client, "/b/medvidbench/community/"))
    assert "rankings.csv?board=community&sort=rank&direction=asc" in whole
    assert "Download the board:" in whole


def test_the_filter_form_keeps_what_was_asked(client, names_board):
    content = get(client, "/b/medvidbench/community/?q=lab&tag=paper&sort=model&dir=desc")
    assert 'name="q" value="lab"' in content
    assert '<option value="paper" selected>' in content
    assert '<input type="hidden" name="sort" value="model">' in content
    assert '<input type="hidden" name="dir" value="desc">' in content
    assert '<a class="clear-filter" href="?sort=model&amp;dir=desc">Clear</a>' in content


@pytest.mark.parametrize("path", ["/b/medvidbench/", "/b/medvidbench/about/"])
def test_the_citation_comes_with_a_copy_button(client, names_board, path):
    content = get(client, path)
    citation = names_board.citation
    assert f'<pre class="citation" id="citation-text">{citation}</pre>' in unescape(content)
    assert 'data-copy="citation-text" hidden>Copy the BibTeX</button>' in content
    assert '<script src="/static/js/copy.js" defer></script>' in content
