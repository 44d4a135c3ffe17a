"""The board's rank intervals, tiers and rank-interval chart (issue 12, points 3 and 6).

Four entries scored on the interval slice of the demo test set (B = 200): the references
("Perfect"), two fine-tuned-like models ("Noisy one", "Noisy two") and a chat model ("Prose").
The bootstrap separates them into three tiers, Perfect alone, the two noisy ones together,
Prose alone; the tests read the page against the rows `compute_rank_intervals` wrote.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.core.cache import cache
from django.template.loader import render_to_string

from benchmark.services import update_benchmark
from submissions import selectors
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardEntry
from submissions.services import import_published_result, recompute_board
from tests.submissions import intervals_data
from tests.submissions.pages import get, parse_table

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry

COMMUNITY = "/b/medvidbench/community/"


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def four(interval_benchmark, scored_entry):
    runs = {
        "Perfect": scored_entry("Perfect", "perfect", 0),
        "Noisy one": scored_entry("Noisy one", "noisy", 1),
        "Noisy two": scored_entry("Noisy two", "noisy", 2),
        "Prose": scored_entry("Prose", "prose", 0),
    }
    return runs


def board_entries():
    return {
        entry.submission.model_name: entry
        for entry in BoardEntry.objects.select_related("submission").order_by("rank")
    }


def model_of(row):
    """The model cell's name: the text before any tag."""
    return row[2][1].split(" ↗")[0].split(" no interval")[0]


def test_the_board_shows_each_rank_interval_and_tier(client, interval_benchmark, four):
    assert compute_rank_intervals(interval_benchmark) == 4
    table = parse_table(get(client, COMMUNITY), "board")
    header, *rows = table.rows

    assert [text for _, text in header[:3]] == ["Rank ▲", "Tier", "Model"]
    # (rank cell, tier, model): Perfect always first, the noisy pair sharing places 2-3,
    # Prose always last.
    ranks = [(row[0][1], row[1][1], model_of(row)) for row in rows]
    order = [name for _, _, name in ranks]
    assert (order[0], order[3]) == ("Perfect", "Prose")
    assert sorted(order[1:3]) == ["Noisy one", "Noisy two"]
    assert ranks == [
        ("1st1avg 1.00" + "1\N{EN DASH}1", "1", "Perfect"),
        (ranks[1][0], "2", order[1]),
        (ranks[2][0], "2", order[2]),
        (ranks[3][0], "3", "Prose"),
    ]
    assert [ranks[1][0][-3:], ranks[2][0][-3:]] == ["2\N{EN DASH}3"] * 2
    assert ranks[3][0].endswith("4\N{EN DASH}4")
    # What the page shows is what the task wrote.
    stored = board_entries()
    for row in rows:
        entry = stored[model_of(row)]
        assert row[0][1].endswith(f"{entry.rank_best}\N{EN DASH}{entry.rank_worst}")
        assert row[1][1] == str(entry.tier)


def test_a_line_separates_the_tiers_in_rank_order_only(client, interval_benchmark, four):
    compute_rank_intervals(interval_benchmark)
    starts = re.compile(r'<tr( class="tier-start")?>\s*<td class="rank num">')

    by_rank = [bool(match.group(1)) for match in starts.finditer(get(client, COMMUNITY))]
    assert by_rank == [False, True, False, True]  # above tier 2's and tier 3's leaders
    reversed_rank = get(client, COMMUNITY + "?sort=rank&dir=desc")
    assert [bool(m.group(1)) for m in starts.finditer(reversed_rank)] == [
        False,
        True,
        False,
        True,
    ]  # Prose | the noisy pair | Perfect
    by_metric = get(client, COMMUNITY + "?sort=CVS_acc&dir=desc")
    assert [bool(m.group(1)) for m in starts.finditer(by_metric)] == [False] * 4


def test_each_value_carries_its_interval_and_the_legend_explains_tiers(
    client, interval_benchmark, four
):
    compute_rank_intervals(interval_benchmark)
    content = get(client, COMMUNITY)
    stored = board_entries()
    prose = stored["Prose"]
    low, high = prose.intervals["TAG_mIoU@0.3"]
    value = prose.values["TAG_mIoU@0.3"]
    assert (
        f'<td class="num" title="95% interval {low:.3f}\N{EN DASH}{high:.3f}">{value:.3f}</td>'
        in content
    )
    assert low < value < high
    # Pending judge metrics have no interval and say "pending", as before.
    assert '<td class="num pending">pending</td>' in content
    legend = unescape(re.search(r'<p class="legend tiers-legend">(.*?)</p>', content, re.S)[1])
    text = " ".join(re.sub(r"<[^>]+>", "", legend).split())
    assert "95% rank interval: the best and worst rank over 200 bootstrap resamples" in text
    assert "Tier: entries whose 95% rank intervals overlap the tier leader's" in text
    assert "computing" not in text
    assert 'href="/b/medvidbench/compare/"' in legend


def test_rank_intervals_not_computed_yet_say_computing(client, interval_benchmark, four):
    content = get(client, COMMUNITY)
    table = parse_table(content, "board")
    header, *rows = table.rows

    assert "Tier" not in [text for _, text in header]
    assert [row[0][1].endswith("computing…") for row in rows] == [True] * 4
    assert "(computing…: they follow the board's recompute in the background)" in unescape(
        re.sub(r"<[^>]+>", "", content)
    )
    assert "<svg" not in content  # no chart until the rank intervals exist


def test_the_cached_table_shows_the_rank_intervals_once_computed(
    client, interval_benchmark, four, django_assert_num_queries
):
    # The benchmark, its metrics, the board summary, the rows, who scored the judge columns
    # (issue 32; one grouped query, cached with the table), the latest snapshot (issue 33:
    # "Cite this board"): the chart adds no query.
    with django_assert_num_queries(6):
        get(client, COMMUNITY)
    with django_assert_num_queries(4):  # cached: the rows are not read again
        before = get(client, COMMUNITY)
    assert "computing…" in before

    compute_rank_intervals(interval_benchmark)  # stamps the board again

    after = get(client, COMMUNITY)
    assert "computing…" not in after
    assert "1\N{EN DASH}1" in after
    assert '<svg class="rank-chart-svg wide"' in after
    with django_assert_num_queries(4):
        assert get(client, COMMUNITY) == after


def test_an_imported_row_says_it_has_no_interval(client, interval_benchmark, four):
    import_published_result(
        interval_benchmark,
        model_name="Imported Model",
        values={"CVS_acc": 0.5, "NAP_acc": 0.5},
        verified_at=datetime(2026, 4, 15, tzinfo=UTC),
    )
    recompute_board(interval_benchmark)
    compute_rank_intervals(interval_benchmark)
    content = get(client, "/b/medvidbench/")  # the Official board: the imported row alone
    _, row = parse_table(content, "board").rows

    assert "no interval (imported)" in row[2][1]
    # Both its values (CVS_acc, NAP_acc: the best of its board) say so on hover.
    found = r'<td class="num best" title="no interval \(imported\)">0.500</td>'
    assert len(re.findall(found, content)) == 2
    imported = BoardEntry.objects.get(submission__model_name="Imported Model")
    assert imported.intervals == {}
    # It still moves on the resamples, so it has a rank interval (the others move around it),
    # marked, and the board says what it means (issue 32, point 5).
    assert row[0][1].endswith(f"{imported.rank_best}\N{EN DASH}{imported.rank_worst}*")
    assert "no interval (imported); rank interval* with its values held fixed" in row[2][1]
    assert (
        'title="Imported: its published values are held fixed on every resample; the interval '
        "is how far the other entries' resampling moves it\""
    ) in content
    assert (
        "an imported row's: published without per-sample data, its values are held fixed on "
        "every resample, and only the other entries move around it, so its interval can be "
        "narrower than theirs"
    ) in unescape(re.sub(r"<[^>]+>", "", content))
    # On the Community board, every row has intervals: none says it lacks them.
    assert "no interval" not in get(client, COMMUNITY).replace('title="no interval', "")


def test_a_board_without_per_sample_data_shows_no_interval_at_all(client, interval_benchmark):
    import_published_result(
        interval_benchmark,
        model_name="Imported Model",
        values={"CVS_acc": 0.5},
        verified_at=datetime(2026, 4, 15, tzinfo=UTC),
    )
    recompute_board(interval_benchmark)
    compute_rank_intervals(interval_benchmark)
    content = get(client, "/b/medvidbench/")

    assert "Imported Model" in content
    for absent in (
        "computing",
        "rank-interval",
        "tiers-legend",
        "<svg",
        "no interval (imported)</",
    ):
        assert absent not in content


def test_the_model_name_links_to_the_entry_page(client, interval_benchmark, four):
    content = get(client, COMMUNITY)
    perfect = four["Perfect"].submission_id
    assert (
        f'<th scope="row" class="model"><a href="/b/medvidbench/entries/{perfect}/">Perfect</a>'
        in (content)
    )


# --- the chart ---------------------------------------------------------------------------------


def test_the_chart_draws_every_entry_with_its_whisker_and_a_table_fallback(
    client, interval_benchmark, four
):
    compute_rank_intervals(interval_benchmark)
    content = get(client, COMMUNITY)
    svg = re.search(r"<svg class=\"rank-chart-svg wide\"(.*?)</svg>", content, re.S)[0]

    # A group (it holds links), named and described: axe refuses links inside role="img".
    assert 'role="group"' in svg
    assert 'aria-labelledby="rank-chart-title-wide rank-chart-desc-wide"' in svg
    assert (
        '<title id="rank-chart-title-wide">95% rank intervals on the Community board</title>'
    ) in svg
    assert "on a rank axis from 1 to 4" in svg
    assert "style" not in svg  # the Content-Security-Policy refuses inline styles
    stored = board_entries()
    titles = re.findall(r'<g class="rank-chart-row"><title>([^<]+)</title>', svg)
    assert titles == [
        f"{name}: rank {entry.rank}, 95% interval {entry.rank_best}\N{EN DASH}{entry.rank_worst}, "
        f"tier {entry.tier}"
        for name, entry in stored.items()
    ]
    assert len(re.findall(r"<circle ", svg)) == 4
    assert re.findall(r'<rect class="tier-band(?: shaded)?"[^>]*height="(\d+)"', svg) == [
        "22",
        "44",
        "22",
    ]
    assert re.findall(r">(tier \d)</text>", svg) == ["tier 1", "tier 2", "tier 3"]
    # The phone's drawing: the same rows, its own ids, shorter tier labels.
    narrow = re.search(r"<svg class=\"rank-chart-svg narrow\"(.*?)</svg>", content, re.S)[0]
    assert 'aria-labelledby="rank-chart-title-narrow rank-chart-desc-narrow"' in narrow
    assert re.findall(r'<g class="rank-chart-row"><title>([^<]+)</title>', narrow) == titles
    assert re.findall(r">(T\d)</text>", narrow) == ["T1", "T2", "T3"]
    fallback = parse_table(content[content.index('<details class="chart-table">') :], "compact")
    assert [[text for _, text in row] for row in fallback.rows] == [
        ["Rank", "Model", "Rank interval", "Tier"],
        *[
            [str(e.rank), name, f"{e.rank_best}\N{EN DASH}{e.rank_worst}", str(e.tier)]
            for name, e in stored.items()
        ],
    ]


def test_a_large_board_charts_its_top_rows_and_says_so(interval_benchmark, four):
    compute_rank_intervals(interval_benchmark)
    rows = selectors.board_rows(interval_benchmark, board="community")
    chart = selectors.board_rank_chart(rows, limit=2)
    html = render_to_string(
        "submissions/_rank_chart.html",
        {"chart": chart, "benchmark": interval_benchmark, "board": "community"},
    )
    assert (chart.shown, chart.total, chart.truncated) == (2, 4, True)
    assert "The top 2 of 4 entries." in html
    assert len(re.findall(r"<circle ", html)) == 2
    # In rank order whatever the table's sort.
    by_name = selectors.board_rows(
        interval_benchmark,
        board="community",
        sort=selectors.BoardSort("model"),
    )
    assert [row.label for row in selectors.board_rank_chart(by_name).rows] == [
        row.model_name for row in rows
    ]


def test_a_lexicographic_board_gets_rank_intervals_by_its_order(
    client, interval_benchmark, four, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        update_benchmark(
            interval_benchmark,
            actor=None,
            ranking_method="lexicographic",
            ranking_order=["STG_mIoU"],
        )

    assert compute_rank_intervals(interval_benchmark) == 4
    # STG_mIoU: Perfect 0.982, Noisy one 0.2632 and Noisy two 0.2629 (both 0.263 on the board:
    # the name puts one first, the replicates give them the same places), Prose 0.040. Every
    # replicate is ranked by STG_mIoU alone (tests/benchmark/scoring/test_ranking.py checks
    # the per-replicate order against rank_entries).
    assert {
        name: (entry.rank, entry.rank_best, entry.rank_worst, entry.tier)
        for name, entry in board_entries().items()
    } == {
        "Perfect": (1, 1, 1, 1),
        "Noisy one": (2, 2, 3, 2),
        "Noisy two": (3, 2, 3, 2),
        "Prose": (4, 4, 4, 3),
    }
    content = get(client, COMMUNITY)
    assert "computing…" not in content
    rows = parse_table(content, "board").rows[1:]
    assert [row[0][1] for row in rows] == [
        "1st1" + "1\N{EN DASH}1",
        "2nd2" + "2\N{EN DASH}3",
        "3rd3" + "2\N{EN DASH}3",
        "4" + "4\N{EN DASH}4",
    ]
