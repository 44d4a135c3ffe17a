"""Two benchmarks side by side (issue 14): the home page lists a card for each, with its rows
on each board and the Official board's leader, in two queries whatever their number."""

import re

import pytest

from benchmark.services import ensure_plugin_benchmark
from submissions import services
from tests.submissions.factories import scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def two(db):
    medvidbench = ensure_plugin_benchmark("medvidbench")
    medsg = ensure_plugin_benchmark("medsg-bench")
    scored_entry(medvidbench, "Video One", {}, verification_status="verified")
    scored_entry(medvidbench, "Video Two", {})
    scored_entry(medsg, "Boxes", {"IoU": 0.4, "ACC@0.5": 0.3})
    # Ranked above the verified one under the global scope: the leader is still "Verified".
    scored_entry(medsg, "Verified", {"IoU": 0.2, "ACC@0.5": 0.1}, verification_status="verified")
    for benchmark in (medvidbench, medsg):
        services.recompute_board(benchmark)
    return medvidbench, medsg


def test_the_home_page_has_a_card_per_benchmark(client, two, django_assert_max_num_queries):
    # The benchmarks, the counts, each Official board's first rank, those rows.
    with django_assert_max_num_queries(4):
        content = client.get("/").content.decode()

    cards = re.findall(r'<li class="benchmark-card">(.*?)</li>', content, re.S)
    assert len(cards) == 2
    medsg, medvidbench = cards  # by name
    assert '<a href="/b/medsg-bench/">MedSG-Bench</a>' in medsg
    assert "1 verified entry · 1 on the Community board · leading: Verified" in medsg
    assert "1 verified entry · 1 on the Community board · leading: Video One" in medvidbench
    assert '<a href="/b/medvidbench/submit/">Submit</a>' in medvidbench
