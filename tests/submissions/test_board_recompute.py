"""`recompute_board`'s fast path (issue 16: plain columns in, one ranked matrix, tuples out,
COPY on PostgreSQL) stores exactly what the board held before it: every field of every row
equal to the reference (`board_reference.py`, the old code restated) on random boards with
ties, missing, pending, uncleaned and near-half values, older and newer runs, judged-over
counts, intervals and both boards, under each ranking policy and scope; and the boards'
totals are the rows' own."""

import json
import random
import struct
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmark.models import Benchmark
from benchmark.services import ensure_plugin_benchmark
from submissions import boards, services
from submissions.enums import EvaluationStatus, SubmissionSource, VerificationStatus
from submissions.models import (
    BoardEntry,
    BoardPlacement,
    BoardTotals,
    Evaluation,
    RunReplicates,
    Submission,
)
from submissions.selectors import (
    BoardFilter,
    BoardSort,
    board_candidate_rows,
    board_entries,
    board_ordering,
    board_page,
)

from .board_reference import reference_rows, stored_rows
from .factories import EvaluationFactory, SubmissionFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# Values drawn for each metric: ties on purpose, values a hair either side of a rounding half,
# integers and text the board cleans (1 -> 1.0, "n/a" -> None), missing ones.
DRAWS = [None, 0.1, 0.2, 0.25, 0.5, 0.5, 0.5004, 0.4996, 0.0025, 0.0035, 1, 0, "n/a", 0.9]
NAMES = ["Model", "model", "MODEL", "Étude", "étude", "Zeta", "alpha", "Ärzte"]
POLICIES = {
    "min-global-mean-rank": {"tie_method": "min", "ranking_scope": "global", "ranking_decimals": 3},
    "dense-per-board-exact": {
        "tie_method": "dense",
        "ranking_scope": "per_board",
        "ranking_decimals": None,
    },
    "min-per-board-lexicographic": {
        "tie_method": "min",
        "ranking_scope": "per_board",
        "ranking_decimals": 3,
        "ranking_method": "lexicographic",
        "ranking_order": ["STG_mIoU", "CVS_acc"],
    },
    "dense-global-lexicographic-2": {
        "tie_method": "dense",
        "ranking_scope": "global",
        "ranking_decimals": 2,
        "ranking_method": "lexicographic",
        "ranking_order": ["CVS_acc"],
    },
}


# Values every board shows as stored (finite floats, missing ones): the bulk path.
CLEAN_DRAWS = [None, 0.1, 0.2, 0.25, 0.5, 0.5, 0.5004, 0.4996, 0.0025, 0.0035, 0.0, 0.9]


def random_board(benchmark, seed: int, count: int = 60, draws: list = DRAWS) -> None:
    """`count` published entries (and an evaluate-only one) drawn with `seed`, their values
    from `draws`."""
    draw = random.Random(seed)
    keys = list(benchmark.metrics.values_list("key", flat=True))
    judge = list(benchmark.metrics.filter(is_judge_metric=True).values_list("key", flat=True))
    now = timezone.now()
    for number in range(count + 1):
        verified = draw.random() < 0.35
        imported = verified and draw.random() < 0.3
        submission = SubmissionFactory(
            benchmark=benchmark,
            model_name=f"{draw.choice(NAMES)}-{number}",
            publish=number < count,
            source=SubmissionSource.IMPORTED if imported else SubmissionSource.UPLOAD,
            verification_status=(
                VerificationStatus.VERIFIED if verified else VerificationStatus.COMMUNITY
            ),
            verified_at=now - timedelta(days=draw.randrange(30)) if verified else None,
            published_at=now - timedelta(days=40) if imported else None,
            team_name=draw.choice(["", "", "Team Ä", "team b"]),
            model_facts=draw.choice([{}, {"type": "fine-tuned", "licence": "mit"}]),
        )
        status = draw.choice(
            [EvaluationStatus.COMPLETE, EvaluationStatus.SCORED, EvaluationStatus.JUDGING]
        )
        metrics = {key: draw.choice(draws) for key in keys}
        if status != EvaluationStatus.COMPLETE:
            metrics.update(dict.fromkeys(judge))
        counts = {
            name: {"scored": draw.randrange(5, 11), "total": 10}
            for name in judge
            if draw.random() < 0.3
        }
        run = EvaluationFactory(
            submission=submission,
            status=status,
            metrics=metrics,
            result={"counts": counts} if counts else {},
            scored_at=now - timedelta(hours=draw.randrange(100)) if draw.random() < 0.9 else None,
        )
        if draw.random() < 0.5:
            RunReplicates.objects.create(
                evaluation=run,
                test_set_checksum="0" * 64,
                replicates=200,
                contributions=b"",
                values=b"",
                metric_keys=keys,
                intervals={
                    key: None if draw.random() < 0.2 else [draw.random() / 2, 0.5 + draw.random()]
                    for key in keys
                },
                computed_at=now,
            )
        shape = draw.random()
        if shape < 0.15:  # an older scored run: the newer one is shown
            older = EvaluationFactory(
                submission=submission, status=EvaluationStatus.COMPLETE, metrics=dict(metrics)
            )
            Evaluation.objects.filter(pk=older.pk).update(created_at=now - timedelta(days=3))
        elif shape < 0.25:  # a newer run without scores: changes nothing
            EvaluationFactory(submission=submission, status=EvaluationStatus.QUEUED)
        elif shape < 0.35:  # two scored runs created at the same moment: the later id is shown
            twin = EvaluationFactory(
                submission=submission,
                status=EvaluationStatus.COMPLETE,
                metrics={key: draw.choice(draws) for key in keys},
            )
            Evaluation.objects.filter(pk__in=[run.pk, twin.pk]).update(created_at=now)


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
@pytest.mark.parametrize("seed", [1, 2])
def test_a_recompute_stores_what_the_reference_computes(policy, seed):
    benchmark = ensure_plugin_benchmark("medvidbench")
    Benchmark.objects.filter(pk=benchmark.pk).update(**policy)
    benchmark.refresh_from_db()
    random_board(benchmark, seed)

    rows = services.recompute_board(benchmark)

    assert stored_rows(benchmark) == reference_rows(benchmark)
    assert len(rows) == 60
    assert [(row.board, row.rank) for row in rows] == sorted((row.board, row.rank) for row in rows)
    # Idempotent: the same rows again.
    before = stored_rows(benchmark)
    services.recompute_board(benchmark)
    assert stored_rows(benchmark) == before


@pytest.mark.parametrize("block", [1, 7, 59])
def test_rows_built_a_block_at_a_time_are_the_rows_built_at_once(block, monkeypatch):
    """`_board_rows` builds the rows a block at a time while the COPY sends the ones before
    (issue 16, eighth pass): with blocks of one row, of a few, of all but one, the stored
    rows are the reference's, in every field."""
    monkeypatch.setattr(boards.rows, "_ROWS_PER_BLOCK", block)
    monkeypatch.setattr("core.bulk.COPY_BLOCK_ROWS", max(1, block // 2))
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, 4)

    services.recompute_board(benchmark)

    assert stored_rows(benchmark) == reference_rows(benchmark)


def test_only_the_runs_whose_counts_may_be_partial_send_them():
    """The read asks for a run's item counts only where one may be partial (a judge metric
    scored over fewer items than it has) on PostgreSQL; elsewhere every run's come. The rows
    then say which are (`judged_over`), whole runs none."""
    benchmark = ensure_plugin_benchmark("medvidbench")
    judge = list(benchmark.metrics.filter(is_judge_metric=True).values_list("key", flat=True))
    metrics = dict.fromkeys(benchmark.metrics.values_list("key", flat=True), 0.5)
    shapes = {
        "whole": {key: {"scored": 10, "total": 10} for key in judge},
        "partial": {
            **{key: {"scored": 10, "total": 10} for key in judge},
            judge[0]: {"scored": 7, "total": 10},
        },
        "no total": {judge[0]: {"scored": 7}},
        "text": {judge[0]: {"scored": "7", "total": "10"}},
    }
    runs = {}
    for name, counts in shapes.items():
        submission = SubmissionFactory(benchmark=benchmark, model_name=name, publish=True)
        runs[name] = EvaluationFactory(
            submission=submission,
            status=EvaluationStatus.COMPLETE,
            metrics=metrics,
            result={"counts": counts},
        )
    bare = EvaluationFactory(
        submission=SubmissionFactory(benchmark=benchmark, model_name="bare", publish=True),
        status=EvaluationStatus.COMPLETE,
        metrics=metrics,
        result={},
    )

    sent = {row.run_id: row.counts_json for row in board_candidate_rows(benchmark)}

    assert json.loads(sent[runs["partial"].pk]) == shapes["partial"]
    assert sent[bare.pk] in (None, "null")
    for name in ("whole", "no total", "text"):
        if connection.vendor == "postgresql":
            assert sent[runs[name].pk] is None, name
        else:
            assert json.loads(sent[runs[name].pk]) == shapes[name], name
    services.recompute_board(benchmark)
    over = dict(BoardEntry.objects.values_list("submission__model_name", "judged_over"))
    assert over == {
        "whole": {},
        "partial": {judge[0]: {"judged": 7, "items": 10}},
        "no total": {},
        "text": {},
        "bare": {},
    }


@pytest.mark.parametrize("seed", [1, 2])
def test_placements_hold_only_what_their_runs_do_not_and_each_place_once(seed):
    """The rows' view shows each run's own values and intervals: a placement holds values
    only where cleaning changed its run's (text, integers), intervals only with a rating
    (none here). No unique index holds the positions and submissions (docs/boards.md), so
    the writer does: each board's positions are 1 to its rows, each submission placed
    once, after every recompute."""
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, seed)
    for _ in range(2):  # the second writes over the first's rows in one transaction
        services.recompute_board(benchmark)

    placements = BoardPlacement.objects.filter(benchmark=benchmark)
    for board in ("official", "community"):
        positions = sorted(placements.filter(board=board).values_list("position", flat=True))
        assert positions == list(range(1, len(positions) + 1))
    submissions = list(placements.values_list("submission_id", flat=True))
    assert len(submissions) == len(set(submissions)) == 60
    assert not placements.filter(own_intervals__isnull=False).exists()
    for placement in placements.select_related("evaluation"):
        stored = placement.evaluation.metrics
        clean = all(value is None or type(value) is float for value in stored.values())
        assert (placement.own_values is None) == clean, stored
        if not clean:
            assert placement.own_values == {
                key: value
                if type(value) is float
                else (float(value) if type(value) is int else None)
                for key, value in stored.items()
            }


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
def test_a_board_of_clean_values_is_laid_out_in_bulk_as_the_reference_ranks_it(policy, monkeypatch):
    benchmark = ensure_plugin_benchmark("medvidbench")
    Benchmark.objects.filter(pk=benchmark.pk).update(**policy)
    benchmark.refresh_from_db()
    random_board(benchmark, 3, draws=CLEAN_DRAWS)

    def cleaned_row_by_row(*args):
        raise AssertionError("a clean board is not cleaned row by row")

    monkeypatch.setattr(boards.values, "_overlaid", cleaned_row_by_row)
    services.recompute_board(benchmark)

    assert stored_rows(benchmark) == reference_rows(benchmark)


def board_totals(benchmark):
    return {
        row.board: (row.entries, row.with_intervals, row.with_rank_intervals, row.with_tiers)
        for row in BoardTotals.objects.filter(benchmark=benchmark)
    }


def counted_totals(benchmark):
    found = {}
    for board in ("official", "community"):
        rows = BoardEntry.objects.filter(benchmark=benchmark, board=board)
        if rows.exists():
            found[board] = (
                rows.count(),
                rows.exclude(intervals={}).count(),
                rows.filter(rank_best__isnull=False).count(),
                rows.filter(tier__isnull=False).count(),
            )
    return found


def test_the_boards_totals_are_their_rows_own_and_a_board_without_rows_has_none():
    benchmark = ensure_plugin_benchmark("medvidbench")
    random_board(benchmark, 3, count=20)

    services.recompute_board(benchmark)

    assert board_totals(benchmark) == counted_totals(benchmark)
    assert set(board_totals(benchmark)) == {"official", "community"}
    stamps = set(BoardTotals.objects.values_list("computed_at", flat=True))
    assert stamps == set(BoardEntry.objects.values_list("computed_at", flat=True))
    assert len(stamps) == 1
    Submission.objects.filter(benchmark=benchmark).update(publish=False)
    services.recompute_board(benchmark)
    assert board_totals(benchmark) == {}


@pytest.mark.parametrize("scope", ["global", "per_board"])
def test_a_page_in_rank_order_is_the_range_of_positions_the_whole_order_gives(scope, client):
    """`board_page` and the rankings API read a page in rank order as a range of positions:
    the rows are those of the old read (the whole board ordered and sliced), on every page,
    either way, on each board and (the API) on both."""
    benchmark = ensure_plugin_benchmark("medvidbench")
    Benchmark.objects.filter(pk=benchmark.pk).update(ranking_scope=scope)
    benchmark.refresh_from_db()
    random_board(benchmark, 4, count=23)
    services.recompute_board(benchmark)
    metrics = list(benchmark.metrics.all())
    for board in ("official", "community"):
        entries = board_entries(benchmark, board)
        count = entries.count()
        for descending in (False, True):
            ordered = list(
                entries.order_by(*board_ordering(BoardSort("rank", descending))).values_list(
                    "submission_id", flat=True
                )
            )
            pages = [
                [
                    row.submission_id
                    for row in board_page(
                        benchmark,
                        board=board,
                        sort=BoardSort("rank", descending),
                        board_filter=BoardFilter(),
                        page=number,
                        metrics=metrics,
                        count=count,
                        page_size=4,
                    ).rows
                ]
                for number in range(1, (count + 3) // 4 + 1)
            ]
            assert [key for page in pages for key in page] == ordered
            assert all(len(page) == 4 for page in pages[:-1])
    everything = list(
        BoardEntry.objects.filter(benchmark=benchmark)
        .order_by("rank", "submission_id")
        .values_list("submission_id", flat=True)
    )
    for direction, expected in (("asc", everything), ("desc", everything[::-1])):
        shown = []
        for number in (1, 2, 3, 4, 5):  # 23 rows
            response = client.get(
                f"/api/v1/benchmarks/{benchmark.slug}/rankings/",
                {"board": "all", "page_size": 5, "page": number, "direction": direction},
            )
            assert response.status_code == 200, response.content
            shown += [row["submission_id"] for row in response.json()["results"]]
        assert shown == expected


@pytest.mark.unit
@pytest.mark.django_db(False)
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.text(min_size=1, max_size=12),
            st.one_of(
                st.none(),
                st.floats(allow_nan=False, allow_infinity=False),
                st.integers(min_value=-(2**70), max_value=2**70),
                st.just(10**400),
            ),
            max_size=12,
        ),
        max_size=20,
    )
)
def test_the_runs_metrics_decode_as_json_decodes_them(runs):
    """msgspec (the recompute's decoder) gives json's dictionaries: the same doubles bit for
    bit, the same integers past 64 bits, and a number past a double's range through json."""
    candidates = [SimpleNamespace(metrics_json=json.dumps(run)) for run in runs]

    decoded = boards.values.decoded_metrics(candidates)

    expected = json.loads("[" + ",".join(row.metrics_json for row in candidates) + "]")
    assert decoded == expected
    for got, want in zip(decoded, expected, strict=True):
        assert list(got) == list(want)
        assert [type(value) for value in got.values()] == [type(value) for value in want.values()]
        assert [struct.pack("<d", value) for value in got.values() if type(value) is float] == [
            struct.pack("<d", value) for value in want.values() if type(value) is float
        ]
