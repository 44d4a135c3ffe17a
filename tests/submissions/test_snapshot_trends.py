"""Differences and trends (issue 33, point 3): the page comparing two snapshots, the history
page's links to it, and an entry's rank over the snapshots on its page."""

import json
import zlib

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from submissions.enums import VerificationStatus
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardSnapshot, Submission
from submissions.services import import_published_result, set_verification_status
from submissions.snapshot_trends import _row_in, rank_history
from tests.accounts.factories import maintainer_user
from tests.submissions.snapshot_data import NEWER, OLDER, sealed_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def three_snapshots(medvidbench, django_capture_on_commit_callbacks):
    """GPT-4o imported (snapshot 1), Claude imported above it (2), GPT-4o withdrawn to the
    Community board (3)."""

    def change(action, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            result = action(*args, **kwargs)
        compute_rank_intervals(medvidbench)
        return result

    def imported(name, value):
        return import_published_result(
            medvidbench, model_name=name, values={"CVS_acc": value}, verified_at=timezone.now()
        )

    gpt = change(imported, "GPT-4o", 0.6)
    change(imported, "Claude", 0.7)
    change(
        set_verification_status,
        gpt,
        VerificationStatus.WITHDRAWN,
        actor=maintainer_user(),
        reason="re-checked",
    )
    return list(BoardSnapshot.objects.filter(sealed_at__isnull=False).order_by("pk"))


def diff_page(slug="medvidbench", **params):
    return Client().get(reverse("submissions:snapshot_diff", args=[slug]), params)


def html_of(response, status=200):
    assert response.status_code == status, response.status_code
    return response.content.decode()


def test_the_diff_page_shows_an_added_entry_and_a_board_move(three_snapshots):
    first, _, last = three_snapshots

    html = html_of(diff_page(**{"from": first.pk, "to": last.pk}))

    assert (
        f'From snapshot <a href="/b/medvidbench/history/{first.pk}/">#{first.pk}</a>, the older'
        in html
    )
    assert "(you named them newer first)" not in html
    added = html[html.index('id="diff-added"') :]
    assert "Claude" in added[: added.index("</table>")]
    changed = html[html.index('id="diff-changed"') :]
    changed = changed[: changed.index("</table>")]
    assert "GPT-4o" in changed
    assert "Official → <strong>Community</strong>" in changed
    assert 'id="diff-removed"' not in html


def test_the_diff_page_takes_its_ids_in_either_order_and_says_which_is_older(three_snapshots):
    first, second, _ = three_snapshots

    html = html_of(diff_page(**{"from": second.pk, "to": first.pk}))

    assert f"#{first.pk}</a>, the older" in html
    assert f"#{second.pk}</a>, the newer" in html
    assert "(you named them newer first)" in html
    # GPT-4o fell from rank 1 to 2 when Claude came in above it.
    assert "1 → <strong>2</strong>" in html


def test_a_rescoring_shows_the_values_and_both_versions(medvidbench):
    older = sealed_snapshot(medvidbench, OLDER, days_ago=2)
    newer = sealed_snapshot(medvidbench, NEWER, days_ago=1)

    html = html_of(diff_page(**{"from": older.pk, "to": newer.pk}))

    assert "<code>CVS_acc</code> 0.700 → <strong>0.650</strong>" in html
    assert "test set version 1 → <strong>2</strong>" in html
    assert "scorer <code>s1</code> → <code>s2</code>" in html
    removed = html[html.index('id="diff-removed"') :]
    assert "Gamma" in removed[: removed.index("</table>")]
    summary = html[html.index('id="diff-summary"') :]
    summary = summary[: summary.index("</ul>")]
    for count, what in [(1, "added"), (1, "removed"), (2, "moved rank"), (1, "changed board")]:
        assert f"<strong>{count}</strong> {what}" in summary
    assert "<strong>1</strong> re-scored" in summary


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "from is missing"),
        ({"from": "abc", "to": "1"}, 400, "from must be a snapshot"),
        ({"from": "999999", "to": "999998"}, 404, "has no snapshot 999999"),
    ],
)
def test_a_bad_or_unknown_id_is_said_on_the_page(three_snapshots, params, status, message):
    html = html_of(diff_page(**params), status)

    assert 'id="diff-problem"' in html
    assert message in html
    assert 'id="compare-from"' in html


def test_another_benchmarks_snapshot_is_not_found(three_snapshots, benchmark):
    other = sealed_snapshot(benchmark, OLDER)

    html = html_of(diff_page(**{"from": three_snapshots[0].pk, "to": other.pk}), 404)

    assert f"has no snapshot {other.pk}." in html


def test_the_history_links_each_snapshot_to_its_changes_and_offers_the_form(three_snapshots):
    first, second, third = three_snapshots
    url = reverse("submissions:snapshot_diff", args=["medvidbench"])

    html = html_of(Client().get(reverse("submissions:history", args=["medvidbench"])))

    assert f'href="{url}?from={second.pk}&amp;to={third.pk}"' in html
    assert f'href="{url}?from={first.pk}&amp;to={second.pk}"' in html
    assert html.count(">Changes</a>") == 2
    assert "the first" in html
    form = html[html.index('class="snapshot-compare"') :]
    assert f'<option value="{second.pk}" selected>' in form[: form.index('id="compare-to"')]
    assert f'<option value="{third.pk}" selected>' in form[form.index('id="compare-to"') :]


# --- an entry's rank over time -----------------------------------------------------------------


def entry_html(submission):
    url = reverse("submissions:entry", args=[submission.benchmark.slug, submission.pk])
    return html_of(Client().get(url))


def test_an_entry_on_several_snapshots_has_its_rank_chart_and_table(three_snapshots):
    cache.clear()
    gpt = Submission.objects.get(model_name="GPT-4o")

    html = entry_html(gpt)

    section = html[html.index('class="entry-trend"') :]
    section = section[: section.index("</section>")]
    for layout in ("wide", "narrow"):
        assert (
            f'role="img" aria-labelledby="rank-history-title-{layout} rank-history-desc-{layout}"'
            in section
        )
    assert "Rank in 3 snapshots, on both boards, from rank 1" in section
    assert section.count('<circle class="point official"') == 2 * 2 + 2  # points, legends
    assert section.count('<circle class="point community"') == 1 * 2 + 2
    table = section[section.index('id="rank-history-table"') :]
    rows = [
        (snapshot.pk, board, rank)
        for snapshot, board, rank in zip(
            three_snapshots, ["Official", "Official", "Community"], [1, 2, 2], strict=True
        )
    ]
    for pk, board, rank in rows:
        assert f'>#{pk}</a></th><td>{board}</td><td class="num">{rank}</td>' in table
    assert 'id="rank-history-note"' not in html
    assert " style=" not in html


def test_an_entry_on_one_snapshot_gets_a_note_instead(three_snapshots):
    claude = Submission.objects.get(model_name="Claude")
    BoardSnapshot.objects.filter(pk=three_snapshots[2].pk).delete()  # only snapshot 2 holds it

    html = entry_html(claude)

    assert 'id="rank-history-note"' in html
    assert "One snapshot of the boards holds this entry so far" in html
    assert "rank-history-title" not in html


def test_an_entry_no_snapshot_holds_says_so(medvidbench):
    entry = import_published_result(
        medvidbench, model_name="Fresh", values={"CVS_acc": 0.5}, verified_at=timezone.now()
    )

    html = entry_html(entry)

    assert "No snapshot of the boards holds this entry yet" in html


def test_the_rank_history_reads_cached_places_without_the_rows(
    three_snapshots, django_assert_num_queries
):
    cache.clear()
    gpt = Submission.objects.get(model_name="GPT-4o")
    with django_assert_num_queries(2):  # the snapshots, then the rows of all three
        first = rank_history(gpt.benchmark_id, gpt.pk)
    with django_assert_num_queries(1):  # the snapshots; every place from the cache
        again = rank_history(gpt.benchmark_id, gpt.pk)

    assert again == first
    assert [(point.board, point.rank) for point in first.points] == [
        ("official", 1),
        ("official", 2),
        ("community", 2),
    ]
    assert rank_history(gpt.benchmark_id, gpt.pk, limit=2).points == first.points[1:]


def test_one_row_is_found_in_the_compressed_rows_as_a_whole_read_finds_it():
    tricky = [
        {**OLDER[0], "model": 'Quote "submission_id":102, {"rank":9}'},
        *OLDER[1:],
    ]
    body = zlib.compress(json.dumps(tricky, separators=(",", ":")).encode())

    assert [_row_in(body, row["submission_id"]) for row in tricky] == tricky
    assert _row_in(body, 999) is None
