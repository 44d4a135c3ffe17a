"""The compare page, /b/<slug>/compare/?a=<submission id>&b=<submission id> (issue 12, point 7):
who may compare what, what a bad request says, and what a comparison shows."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest

from submissions.intervals import compare_runs
from submissions.services import import_published_result, recompute_board
from tests.accounts.factories import UserFactory, maintainer_user
from tests.benchmark.factories import BenchmarkFactory
from tests.submissions import intervals_data
from tests.submissions.factories import scored_entry as factory_scored_entry
from tests.submissions.pages import parse_table

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

interval_benchmark = intervals_data.interval_benchmark
scored_entry = intervals_data.scored_entry

URL = "/b/medvidbench/compare/"
AUTOMATIC = ["CVS_acc", "NAP_acc", "SA_acc", "STG_mIoU", "TAG_mIoU@0.3", "TAG_mIoU@0.5", "DVC_F1"]
JUDGE = ["DVC_llm", "VS_llm", "RC_llm"]


@pytest.fixture
def owner():
    return UserFactory(username="olga")


@pytest.fixture
def entries(interval_benchmark, scored_entry, owner):
    """Three published entries and Olga's evaluate-only one."""
    return {
        "perfect": scored_entry("Perfect", "perfect", 0),
        "noisy": scored_entry("Noisy one", "noisy", 1),
        "noisy2": scored_entry("Noisy two", "noisy", 2),
        "private": scored_entry("Olga Private", "prose", 0, owner=owner, publish=False),
    }


def page(client, query="", status=200):
    response = client.get(URL + query)
    assert response.status_code == status, response.content.decode()[:2000]
    return response.content.decode()


def options(content, name):
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', content, re.S)[1]
    return [unescape(label) for label in re.findall(r"<option[^>]*>([^<]*)</option>", select)]


def errors(content):
    return [unescape(error) for error in re.findall(r"<li>([^<]+)</li>", content)]


def text(content):
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", content)).split())


# --- who may compare what ------------------------------------------------------------------------


def test_a_visitor_picks_among_the_published_entries(client, entries):
    content = page(client)

    published = [
        "Perfect · Community #1",
        "Noisy two · Community #2",
        "Noisy one · Community #3",
    ]
    assert options(content, "a") == ["— pick an entry —", *published]
    assert options(content, "b") == options(content, "a")
    assert "Olga Private" not in content
    assert 'method="get"' in content
    assert 'class="comparison"' not in content  # nothing compared yet


def test_the_owner_may_compare_their_evaluate_only_entry(client, entries, owner):
    client.force_login(owner)
    assert options(page(client), "a")[-1] == "Olga Private · evaluate-only (yours)"

    private, perfect = entries["private"].submission_id, entries["perfect"].submission_id
    content = page(client, f"?a={perfect}&b={private}")
    assert "Perfect vs B Olga Private" in text(content)


@pytest.mark.parametrize("who", ["anonymous", "someone else", "staff without the role"])
def test_nobody_else_may_compare_an_evaluate_only_entry(client, entries, who):
    if who == "someone else":
        client.force_login(UserFactory())
    elif who == "staff without the role":
        client.force_login(UserFactory(is_staff=True))
    private, perfect = entries["private"].submission_id, entries["perfect"].submission_id

    content = page(client, f"?a={perfect}&b={private}", status=400)

    assert errors(content) == [
        f"There is no entry #{private} on this benchmark that you can compare. "
        "Pick one from the list."
    ]
    assert "Olga Private" not in content
    assert 'class="comparison"' not in content


def test_a_maintainer_may_compare_anyone_s_entries(client, entries):
    client.force_login(maintainer_user())
    assert "Olga Private · evaluate-only" in options(page(client), "a")
    private, noisy = entries["private"].submission_id, entries["noisy"].submission_id
    assert "Olga Private" in text(page(client, f"?a={private}&b={noisy}"))


def test_a_hidden_benchmark_is_not_found(client, entries, interval_benchmark):
    interval_benchmark.is_public = False
    interval_benchmark.save(update_fields=["is_public"])
    perfect, noisy = entries["perfect"].submission_id, entries["noisy"].submission_id
    assert client.get(URL + f"?a={perfect}&b={noisy}").status_code == 404


# --- bad requests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?a={perfect}", ["Pick entry B."]),
        ("?b={perfect}", ["Pick entry A."]),
        ("?a=&b=", ["Pick entry A.", "Pick entry B."]),
        ("?a={perfect}&b={perfect}", ["Pick two different entries: an entry compared with itself differs by 0."]),
        ("?a=abc&b={perfect}", ["There is no entry #abc on this benchmark that you can compare. Pick one from the list."]),
        ("?a={perfect}&b=999999", ["There is no entry #999999 on this benchmark that you can compare. Pick one from the list."]),
        ("?a={perfect}&b=-1", ["There is no entry #-1 on this benchmark that you can compare. Pick one from the list."]),
    ],
)  # fmt: skip
def test_a_bad_request_says_what_is_wrong_and_keeps_the_form(client, entries, query, expected):
    content = page(client, query.format(perfect=entries["perfect"].submission_id), status=400)

    assert errors(content) == expected
    assert 'class="comparison"' not in content
    assert len(options(content, "a")) == 4  # the form is still there to pick from


def test_an_entry_of_another_benchmark_cannot_be_compared(client, entries):
    other = factory_scored_entry(BenchmarkFactory(is_public=True), "Elsewhere", {})
    perfect = entries["perfect"].submission_id
    content = page(client, f"?a={perfect}&b={other.pk}", status=400)
    assert errors(content) == [
        f"There is no entry #{other.pk} on this benchmark that you can compare. "
        "Pick one from the list."
    ]


# --- what a comparison shows -------------------------------------------------------------------


def test_each_metric_shows_both_values_the_difference_its_interval_and_p(
    client, entries, interval_benchmark
):
    perfect, noisy = entries["perfect"], entries["noisy"]
    content = page(client, f"?a={perfect.submission_id}&b={noisy.submission_id}")
    expected = compare_runs(interval_benchmark, perfect, noisy)

    summary = re.search(r'<p class="compare-summary">([^<]+)</p>', content)[1]
    assert unescape(summary) == expected.summary
    assert expected.summary == (
        "Perfect is better on 7 metrics; 3 metrics are pending (not judged yet)."
    )
    header, *rows = parse_table(content, "compare").rows
    assert [cell for _, cell in header] == [
        "Metric", "A", "B", "A \N{MINUS SIGN} B", "95% interval", "p", "Better",
    ]  # fmt: skip
    by_key = {row[0][1].split()[0]: [cell for _, cell in row[1:]] for row in rows}
    assert list(by_key) == AUTOMATIC + JUDGE
    for key in AUTOMATIC:
        found = expected.metrics[key]
        low, high = found.interval
        assert by_key[key] == [
            f"{perfect.metrics[key]:.3f}",
            f"{noisy.metrics[key]:.3f}",
            f"{found.difference:+.4f}".replace("-", "\N{MINUS SIGN}"),
            f"{low:+.4f} to {high:+.4f}".replace("-", "\N{MINUS SIGN}"),
            f"{found.p_value:.3f}",
            "A Perfect is better",
        ]
        assert low > 0
    for key in JUDGE:
        assert by_key[key] == ["—", "—", "—", "—", "—", "pending (not judged yet)"]
    assert "the p-values are not corrected for that" in text(content)


def test_two_close_entries_are_told_apart_only_where_the_interval_leaves_out_0(
    client, entries, interval_benchmark
):
    noisy, noisy2 = entries["noisy"], entries["noisy2"]
    content = page(client, f"?a={noisy.submission_id}&b={noisy2.submission_id}")
    expected = compare_runs(interval_benchmark, noisy, noisy2)

    _, *rows = parse_table(content, "compare").rows
    verdicts = {row[0][1].split()[0]: row[-1][1] for row in rows}
    names = {
        "a": "A Noisy one is better",
        "b": "B Noisy two is better",
        "tied": "cannot tell apart",
    }
    for key in AUTOMATIC:
        assert verdicts[key] == names[expected.verdicts[key]]
        low, high = expected.metrics[key].interval
        assert (expected.verdicts[key] == "tied") == (low <= 0 <= high)
    assert "tied" in expected.verdicts.values()  # two runs of one model are hard to separate
    assert unescape(re.search(r'<p class="compare-summary">([^<]+)</p>', content)[1]) == (
        expected.summary
    )
    assert expected.summary == (
        "The test set cannot tell them apart on 7 metrics; 3 metrics are pending (not judged yet)."
    )


def test_the_per_dataset_table_lists_every_difference(client, entries, interval_benchmark):
    perfect, noisy = entries["perfect"], entries["noisy"]
    content = page(client, f"?a={perfect.submission_id}&b={noisy.submission_id}")
    expected = compare_runs(interval_benchmark, perfect, noisy)

    header, *rows = parse_table(content, "compare-datasets").rows
    assert [cell for _, cell in header] == ["Metric", "Dataset", "A", "B", "A \N{MINUS SIGN} B"]
    shown = [tuple(cell for _, cell in row) for row in rows]
    wanted = []
    for key, datasets in expected.per_dataset.items():
        for dataset, difference in datasets.items():
            value_a = perfect.result["per_dataset"][key][dataset]
            value_b = noisy.result["per_dataset"][key][dataset]
            wanted.append(
                (
                    key,
                    dataset,
                    f"{value_a:.3f}",
                    f"{value_b:.3f}",
                    f"{difference:+.4f}".replace("-", "\N{MINUS SIGN}"),
                )
            )
    assert shown == wanted
    assert len(shown) > len(expected.per_dataset)  # several datasets per metric


def test_an_imported_entry_is_compared_without_intervals(client, entries, interval_benchmark):
    imported = import_published_result(
        interval_benchmark,
        model_name="Imported Model",
        values={"CVS_acc": 0.5, "NAP_acc": 0.5},
        verified_at=datetime(2026, 4, 15, tzinfo=UTC),
    )
    recompute_board(interval_benchmark)
    perfect = entries["perfect"].submission_id
    content = page(client, f"?a={imported.pk}&b={perfect}")

    assert (
        '<p class="notice compare-unpaired">Imported Model is an imported result without '
        "per-sample data: no interval.</p>"
    ) in content
    _, *rows = parse_table(content, "compare").rows
    cvs = [cell for _, cell in rows[0]]
    assert cvs == [
        "CVS_acc higher is better",
        "0.500",
        "1.000",
        "\N{MINUS SIGN}0.5000",
        "—",
        "—",
        "no interval",
    ]


def test_a_swap_link_and_the_entry_pages_are_linked(client, entries):
    perfect, noisy = entries["perfect"].submission_id, entries["noisy"].submission_id
    content = page(client, f"?a={perfect}&b={noisy}")
    assert f'<a href="?a={noisy}&amp;b={perfect}">Swap A and B</a>' in content
    assert f'href="/b/medvidbench/entries/{perfect}/"' in content
    assert f'href="/b/medvidbench/entries/{noisy}/"' in content
    # The chosen entries stay selected.
    assert re.search(
        rf'<select name="a"[^>]*>.*?<option value="{perfect}" selected>', content, re.S
    )


def test_the_board_links_to_the_compare_page(client, entries):
    content = client.get("/b/medvidbench/community/").content.decode()
    assert '<a href="/b/medvidbench/compare/">Compare two entries</a>' in content


def test_the_page_never_shows_a_per_sample_value(client, entries, owner):
    """The comparison is of aggregates and replicate summaries: no sample id, no answer."""
    perfect, private = entries["perfect"], entries["private"]
    client.force_login(owner)
    content = page(client, f"?a={perfect.submission_id}&b={private.submission_id}")
    for record in intervals_data.interval_records()[:50]:
        assert record["id"] not in content
