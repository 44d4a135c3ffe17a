"""The rows' stored API JSON (issue 16, `submissions.board_json`): once `write_board_json`
has run, every rankings response is byte for byte what the built rows gave before it ran,
for every option (board, sort and direction, pages, search, tags, facts, category, the
download), on random boards with ties, missing and pending values, imported rows, intervals,
rank intervals and text that JSON escapes."""

import random

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient

from benchmark.models import Benchmark
from benchmark.services import ensure_plugin_benchmark
from submissions import services
from submissions.board_json import row_parts, spliced, write_board_json
from submissions.models import BoardEntry, BoardPlacement, Submission
from tests.submissions.test_board_recompute import POLICIES, random_board

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# Names JSON escapes or keeps as they are (ensure_ascii is off).
ODD_NAMES = ['Quote "q"', "Back\\slash", "Tab\tname", "Ünïcode ✓", "</script>"]

OPTIONS = [
    {},
    {"board": "official"},
    {"board": "community"},
    {"board": "all", "page_size": 1000},
    {"board": "all", "page_size": 7, "page": 3},
    {"board": "official", "page_size": 5, "page": 2, "direction": "desc"},
    {"board": "all", "sort": "rank", "direction": "desc", "page_size": 11},
    {"board": "all", "sort": "STG_mIoU"},
    {"board": "community", "sort": "CVS_acc", "direction": "asc", "page_size": 9, "page": 2},
    {"board": "all", "sort": "model", "direction": "desc"},
    {"board": "all", "sort": "team"},
    {"board": "all", "sort": "date", "page_size": 13, "page": 4},
    {"board": "all", "q": "model"},
    {"board": "all", "q": "étude", "sort": "VS_llm"},
    {"board": "all", "tag": "baseline"},
    {"board": "official", "tag": "paper", "direction": "desc"},
    {"board": "all", "tag": "imported", "sort": "NAP_acc", "page_size": 4},
]


def rankings(client, benchmark, suffix="", **params):
    name = {"": "api:rankings", ".json": "api:rankings-json", ".csv": "api:rankings-csv"}[suffix]
    cache.clear()  # the rendered body's cache: every response here is built
    response = client.get(reverse(name, args=[benchmark.slug]), params)
    assert response.status_code == 200, response.content
    return response.content


def odd_board(benchmark, seed):
    random_board(benchmark, seed)
    draw = random.Random(seed)
    for submission in Submission.objects.filter(benchmark=benchmark).order_by("pk")[:5]:
        Submission.objects.filter(pk=submission.pk).update(
            model_name=f"{draw.choice(ODD_NAMES)} {submission.pk}",
            paper_url=draw.choice(["", "https://example.org/paper?a=1&b=\u00e9"]),
        )
    services.recompute_board(benchmark)
    # Rank intervals and tiers on some rows (as `compute_rank_intervals` leaves them).
    for entry in BoardEntry.objects.filter(benchmark=benchmark).order_by("pk")[::3]:
        BoardPlacement.objects.filter(pk=entry.pk).update(
            rank_best=entry.rank,
            rank_worst=entry.rank + draw.randrange(3),
            tier=draw.randrange(1, 4),
        )


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
@pytest.mark.parametrize("seed", [3, 4])
def test_the_stored_json_gives_the_bytes_the_built_rows_give(policy, seed):
    benchmark = ensure_plugin_benchmark("medvidbench")
    Benchmark.objects.filter(pk=benchmark.pk).update(**policy)
    benchmark.refresh_from_db()
    odd_board(benchmark, seed)
    client = APIClient()
    asks = [(suffix, params) for params in OPTIONS for suffix in ("", ".json")]
    asks.append((".csv", {"board": "all"}))
    assert not BoardEntry.objects.filter(benchmark=benchmark).exclude(api_head="").exists()
    built = [rankings(client, benchmark, suffix, **params) for suffix, params in asks]

    assert write_board_json(benchmark) == 60
    assert not BoardEntry.objects.filter(benchmark=benchmark, api_head="").exists()
    stored = [rankings(client, benchmark, suffix, **params) for suffix, params in asks]

    for (suffix, params), before, after in zip(asks, built, stored, strict=True):
        assert after == before, (suffix, params)
    assert write_board_json(benchmark) == 0  # idempotent: every row has it


def test_the_page_reads_the_stored_json_and_splices_the_rank_interval():
    benchmark = ensure_plugin_benchmark("medvidbench")
    odd_board(benchmark, 5)
    write_board_json(benchmark)
    first = BoardEntry.objects.filter(benchmark=benchmark).order_by("overall_position").first()
    BoardPlacement.objects.filter(pk=first.pk).update(api_head='{"stored":1,', api_tail='"x":2}')
    BoardPlacement.objects.filter(pk=first.pk).update(rank_best=2, rank_worst=9, tier=None)

    content = rankings(APIClient(), benchmark, board="all", page_size=1)

    assert content.decode().endswith(
        '"results":[{"stored":1,"rank_interval":[2,9],"tier":null,"category_rank":null,"x":2}]}'
    )


def test_the_parts_of_a_row_join_to_its_json():
    body = {
        "rank": 1,
        "model": 'a "b" ✓',
        "submission_id": 7,
        "rank_interval": None,
        "tier": None,
        "category_rank": None,
        "category_ranks": {"x": 1},
        "interval_note": None,
    }
    head, tail = row_parts(body)
    assert head == '{"rank":1,"model":"a \\"b\\" ✓","submission_id":7,'
    assert spliced(head, tail, None, None, None) == (
        '{"rank":1,"model":"a \\"b\\" ✓","submission_id":7,"rank_interval":null,"tier":null,'
        '"category_rank":null,"category_ranks":{"x":1},"interval_note":null}'
    )
    assert spliced(head, tail, 3, 5, 2).count('"rank_interval":[3,5],"tier":2,') == 1


def test_a_recompute_queues_the_writer_and_leaves_the_rows_without_json(
    django_capture_on_commit_callbacks,
):
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, 7, count=10)
    with django_capture_on_commit_callbacks() as callbacks:
        services.recompute_board(benchmark)
    assert "enqueue_board_json" in [getattr(c, "func", c).__name__ for c in callbacks]
    assert set(BoardEntry.objects.values_list("api_head", flat=True)) == {""}


def test_the_writer_reads_the_board_in_ranges_and_skips_the_rows_written():
    benchmark = ensure_plugin_benchmark("medvidbench")
    odd_board(benchmark, 6)
    rows = BoardEntry.objects.filter(benchmark=benchmark)
    assert write_board_json(benchmark) == 60
    whole = {pk: (head, tail) for pk, head, tail in rows.values_list("pk", "api_head", "api_tail")}
    BoardPlacement.objects.filter(benchmark=benchmark).update(api_head="", api_tail="")
    # Five rows, spread over the ranges, written already (a writer that stopped midway).
    written = list(rows.order_by("overall_position").values_list("pk", flat=True)[::12])
    for pk in written:
        BoardPlacement.objects.filter(pk=pk).update(api_head=whole[pk][0], api_tail=whole[pk][1])

    assert write_board_json(benchmark, batch=7) == 60 - len(written)  # 9 ranges, the last short

    assert {
        pk: (head, tail) for pk, head, tail in rows.values_list("pk", "api_head", "api_tail")
    } == whole
