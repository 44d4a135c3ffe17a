"""Read endpoint: one entry of a benchmark, everything its public page shows (issue 33, point 5).

    GET /api/v1/benchmarks/<slug>/entries/<id>/    entry

The page's selectors build it (`submissions.selectors.entry_page`), so the two say the same:
the entry's details, its board and rank with the rank interval and tier, its metrics with their
intervals and the board's best, the per-dataset values, the parse rates, who judged it, its
battles, and what its verification rests on: a verified upload's re-run (`evidence`: the
discrepancy report's numbers, never the endpoint or the answers), else where its numbers came
from (`source`). The rankings' privacy rules hold (`entry_for_viewer`): a published entry is
anyone's, an evaluate-only one its owner's and the maintainers'; anyone else, an entry of
another benchmark and an id that does not exist get the same 404, and a hidden benchmark is 404.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import path
from django.utils.cache import patch_cache_control
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from submissions.enums import BoardKind
from submissions.models import Submission
from submissions.public_evidence import RerunEvidence
from submissions.ratings import EntryBattles, entry_battles
from submissions.selectors import metric_value
from submissions.selectors.entry_page import EntryPage, entry_for_viewer, entry_page

from .benchmarks import visible_benchmark
from .compare import CompareErrorSerializer
from .rankings_serializers import JudgedOverSerializer

# --- serializers (the body is built as a dict by `entry_as_dict`; a test holds them together) ----


def _pair(child: serializers.Field, help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=child, min_length=2, max_length=2, allow_null=True, help_text=help_text
    )


class EvidenceMetricSerializer(serializers.Serializer):
    submitted = serializers.FloatField(
        allow_null=True, help_text="The entry's own value (its run the re-run was compared with)"
    )
    rerun = serializers.FloatField(allow_null=True, help_text="The re-run's value")
    difference = serializers.FloatField(
        allow_null=True,
        help_text="rerun - submitted; null when either is missing (the metric was not compared)",
    )
    tolerance = serializers.FloatField(help_text="The benchmark's tolerance |difference| <= t")
    within = serializers.BooleanField(
        allow_null=True, help_text="|difference| <= tolerance; null when not compared"
    )


class EvidenceSerializer(serializers.Serializer):
    rerun_finished_at = serializers.DateTimeField(
        allow_null=True, help_text="When the re-run of the model finished"
    )
    testset_version = serializers.IntegerField(help_text="The test set's version it asked")
    scorer_version = serializers.CharField(help_text="The scorer that scored its answers")
    forced = serializers.BooleanField(
        help_text="Verified although a compared metric was outside the tolerance"
    )
    note = serializers.CharField(
        allow_null=True, help_text="A forced verify's note: why the maintainers verified it"
    )
    metrics = serializers.DictField(
        child=EvidenceMetricSerializer(), help_text="The discrepancy report, by metric key"
    )


class EntryVerificationSerializer(serializers.Serializer):
    status = serializers.CharField(
        help_text="community, nominated, contacted, access_granted, verifying, verified, "
        "rejected or withdrawn"
    )
    label = serializers.CharField(help_text='As the page says it ("Evaluate only" unpublished)')
    verified_at = serializers.DateTimeField(allow_null=True)
    changed_at = serializers.DateTimeField(allow_null=True)
    evidence = EvidenceSerializer(
        allow_null=True,
        help_text="A verified upload's re-run, as its discrepancy report found it; null for "
        "anything else",
    )
    source = serializers.CharField(
        allow_null=True,
        help_text="Where the numbers came from when not from an uploaded file: an imported "
        "row's source as the maintainers recorded it on import (where the numbers were "
        'published, e.g. "paper, table 2"; "not recorded" when none was given), an entry '
        "evaluated by Podium's sentence that its answers came from Podium's own calls, a "
        "baseline's that the maintainers ran it; null for an upload",
    )


class NeighbourSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    model = serializers.CharField()
    rank = serializers.IntegerField()


class EntryRankSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    out_of = serializers.IntegerField(help_text="The entries ranked together")
    global_scope = serializers.BooleanField(
        help_text="Both boards are ranked together (the benchmark's ranking scope)"
    )
    board = serializers.ChoiceField(choices=BoardKind.values)
    rank_interval = _pair(
        serializers.IntegerField(), "The rank's 95% interval [best, worst]; null until computed"
    )
    tier = serializers.IntegerField(allow_null=True, help_text="Statistical tier on its board")
    tied_with = NeighbourSerializer(
        many=True, help_text="Entries of its tier (the first few; `tied_more` counts the rest)"
    )
    tied_more = serializers.IntegerField()


class EntryMetricSerializer(serializers.Serializer):
    label = serializers.CharField()
    value = serializers.FloatField(allow_null=True, help_text="Full precision; null: none")
    interval = _pair(serializers.FloatField(), "The 95% interval [low, high]; null without one")
    pending = serializers.BooleanField(help_text="A judge metric (or rating) not scored yet")
    best = serializers.FloatField(allow_null=True, help_text="The best value on its board")
    is_best = serializers.BooleanField()


class ParseRateSerializer(serializers.Serializer):
    task = serializers.CharField()
    parsed = serializers.IntegerField()
    total = serializers.IntegerField()


class EntryJudgeSerializer(serializers.Serializer):
    model = serializers.CharField(help_text="The judge model")
    rubric_version = serializers.CharField()
    items_total = serializers.IntegerField()
    items_judged = serializers.IntegerField()
    items_failed = serializers.IntegerField()
    finished_at = serializers.DateTimeField(allow_null=True)


class OpponentSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    model = serializers.CharField()
    won = serializers.IntegerField()
    tied = serializers.IntegerField()
    lost = serializers.IntegerField()


class BattlesSerializer(serializers.Serializer):
    category = serializers.CharField()
    label = serializers.CharField()
    won = serializers.IntegerField()
    tied = serializers.IntegerField()
    lost = serializers.IntegerField()
    elsewhere = serializers.IntegerField(help_text="Battles against entries no longer on a board")
    dropped = serializers.IntegerField(help_text="Battles without a usable verdict")
    running = serializers.CharField(allow_blank=True)
    opponents = OpponentSerializer(many=True)


class RankHistorySerializer(serializers.Serializer):
    snapshot = serializers.IntegerField(help_text="The snapshot's id")
    taken_at = serializers.DateTimeField()
    board = serializers.ChoiceField(choices=BoardKind.values)
    rank = serializers.IntegerField(help_text="The rank the board showed")


class EntrySerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    benchmark = serializers.CharField(help_text="The benchmark's slug")
    model = serializers.CharField()
    team = serializers.CharField(allow_blank=True)
    authors = serializers.CharField(allow_blank=True)
    institution = serializers.CharField(allow_blank=True)
    model_url = serializers.CharField(allow_blank=True)
    paper_url = serializers.CharField(allow_blank=True)
    code_url = serializers.CharField(allow_blank=True)
    published = serializers.BooleanField(help_text="False: evaluate only, on no board")
    board = serializers.ChoiceField(
        choices=BoardKind.values, allow_null=True, help_text="null for an evaluate-only entry"
    )
    is_baseline = serializers.BooleanField()
    imported = serializers.BooleanField()
    evaluated_by_podium = serializers.BooleanField(
        help_text="Podium asked the model's endpoint every question itself (hosted evaluation)"
    )
    listed_at = serializers.DateTimeField(allow_null=True)
    verification = EntryVerificationSerializer()
    rank = EntryRankSerializer(allow_null=True, help_text="null when not on a board")
    leader = NeighbourSerializer(
        allow_null=True, help_text="Its board's first row, when that is another entry"
    )
    scored = serializers.BooleanField(help_text="False: no scores yet (metrics is {})")
    judge_pending = serializers.BooleanField()
    judged_over = serializers.DictField(
        child=JudgedOverSerializer(),
        help_text="Judge metrics a maintainer accepted over a subset of their items, by key",
    )
    metrics = serializers.DictField(child=EntryMetricSerializer(), help_text="By metric key")
    per_dataset = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField(allow_null=True)),
        help_text="metric key -> dataset -> value (aggregates)",
    )
    parse_rates = ParseRateSerializer(many=True)
    judge = EntryJudgeSerializer(allow_null=True)
    battles = BattlesSerializer(many=True, help_text="Per rating category it battled in")
    rank_history = RankHistorySerializer(
        many=True,
        help_text="Its board and rank in each of the latest 60 board snapshots that hold it, "
        "oldest first (empty for an evaluate-only entry)",
    )


# --- the body -------------------------------------------------------------------------------------


def _evidence(evidence: RerunEvidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {
        "rerun_finished_at": evidence.rerun_finished_at,
        "testset_version": evidence.testset_version,
        "scorer_version": evidence.scorer_version,
        "forced": evidence.forced,
        "note": evidence.note if evidence.forced else None,
        "metrics": {
            line.key: {
                "submitted": line.submitted,
                "rerun": line.rerun,
                "difference": line.difference,
                "tolerance": line.tolerance,
                "within": line.within,
            }
            for line in evidence.metrics
        },
    }


def _battles(record: EntryBattles) -> dict[str, Any]:
    return {
        "category": record.category,
        "label": record.label,
        "won": record.won,
        "tied": record.tied,
        "lost": record.lost,
        "elsewhere": record.elsewhere,
        "dropped": record.dropped,
        "running": record.running,
        "opponents": [
            {
                "submission_id": opponent.submission_id,
                "model": opponent.model_name,
                "won": opponent.won,
                "tied": opponent.tied,
                "lost": opponent.lost,
            }
            for opponent in record.opponents
        ],
    }


def entry_as_dict(page: EntryPage, battles: list[EntryBattles]) -> dict[str, Any]:
    """The API's body of `page` (what the entry page shows)."""
    submission, rank = page.submission, page.rank
    per_dataset = (page.evaluation.result or {}).get("per_dataset") or {} if page.evaluation else {}
    shown_datasets = {key for key, _ in page.per_dataset.rows} if page.per_dataset else set()
    return {
        "submission_id": submission.pk,
        "benchmark": submission.benchmark.slug,
        "model": submission.model_name,
        "team": submission.team_name,
        "authors": submission.authors,
        "institution": submission.institution,
        "model_url": submission.model_url,
        "paper_url": submission.paper_url,
        "code_url": submission.code_url,
        "published": submission.publish,
        "board": page.board.value if submission.publish else None,
        "is_baseline": submission.is_baseline,
        "imported": page.is_imported,
        "evaluated_by_podium": page.is_hosted,
        "listed_at": page.listed_at,
        "verification": {
            "status": submission.verification_status,
            "label": page.verification_label,
            "verified_at": page.verified_at,
            "changed_at": page.verification_changed_at,
            "evidence": _evidence(page.evidence),
            "source": page.source or None,
        },
        "rank": None
        if rank is None
        else {
            "rank": rank.rank,
            "out_of": rank.out_of,
            "global_scope": rank.global_scope,
            "board": rank.board.value,
            "rank_interval": [rank.rank_best, rank.rank_worst] if rank.has_interval else None,
            "tier": rank.tier,
            "tied_with": [
                {
                    "submission_id": other.submission_id,
                    "model": other.model_name,
                    "rank": other.rank,
                }
                for other in rank.tied_with
            ],
            "tied_more": rank.tied_more,
        },
        "leader": None
        if page.leader is None
        else {
            "submission_id": page.leader.submission_id,
            "model": page.leader.model_name,
            "rank": page.leader.rank,
        },
        "scored": page.evaluation is not None,
        "judge_pending": page.judge_pending,
        "judged_over": page.board_entry.judged_over if page.board_entry else {},
        "metrics": {
            line.key: {
                "label": line.label,
                "value": line.value,
                "interval": list(line.interval) if line.interval else None,
                "pending": line.css == "pending",
                "best": line.best,
                "is_best": line.is_best,
            }
            for line in page.metrics
        },
        "per_dataset": {
            key: {name: metric_value(value) for name, value in per_dataset[key].items()}
            for key in sorted(shown_datasets)
        },
        "parse_rates": [
            {"task": rate.task, "parsed": rate.parsed, "total": rate.total}
            for rate in page.parse_rates
        ],
        "judge": None
        if page.judge is None
        else {
            "model": page.judge.model,
            "rubric_version": page.judge.rubric_version,
            "items_total": page.judge.items_total,
            "items_judged": page.judge.items_judged,
            "items_failed": page.judge.items_failed,
            "finished_at": page.judge.finished_at,
        },
        "battles": [_battles(record) for record in battles],
        "rank_history": [
            {
                "snapshot": point.snapshot_id,
                "taken_at": point.taken_at,
                "board": point.board,
                "rank": point.rank,
            }
            for point in (page.rank_history.points if page.rank_history else [])
        ],
    }


# --- the view -------------------------------------------------------------------------------------

ENTRY_DESCRIPTION = """\
Everything the entry's public page (`/b/<slug>/entries/<id>/`) shows: its details, its board, \
rank (with the 95% rank interval and tier), metrics (with intervals and the board's best), \
per-dataset values, parse rates, judge and battles, its `rank_history` over the latest 60 \
board snapshots, and `verification`: its state and what it \
rests on. For a verified upload `verification.evidence` is the re-run the maintainers verified \
it on (when it finished, the test-set and scorer versions, per metric the submitted and re-run \
values, the difference, the tolerance and whether within; a forced verify's `note`); it is \
null for anything else, and `verification.source` says where the numbers came from when they \
are not from an uploaded file (an imported row: where they were published). No endpoint, key, \
answer or test data.

A published entry is anyone's; an evaluate-only one (never published) its owner's, the \
maintainers' and superusers'. For anyone else, an entry of another benchmark, and an id that \
does not exist the answer is the same 404; a hidden benchmark is 404."""


class EntryView(APIView):
    @extend_schema(
        operation_id="benchmarks_entry",
        summary="One entry: everything its public page shows, with its verification evidence",
        description=ENTRY_DESCRIPTION,
        responses={
            200: EntrySerializer,
            404: OpenApiResponse(
                CompareErrorSerializer,
                description="No such benchmark, or no such entry on it that you may see",
            ),
        },
    )
    def get(self, request: Request, slug: str, pk: int) -> Response:
        benchmark = visible_benchmark(request, slug)
        try:
            submission = entry_for_viewer(benchmark, pk, viewer=request.user)
        except Submission.DoesNotExist:
            raise Http404(f"No such entry on {benchmark.name}.") from None
        body = entry_as_dict(entry_page(submission), entry_battles(benchmark, submission))
        response = Response(body)
        # Anyone's only for a published entry of a public benchmark; else the viewer's alone.
        shared = benchmark.is_public and submission.publish
        patch_cache_control(response, no_cache=True, **{"public" if shared else "private": True})
        return response


urlpatterns = [
    path("benchmarks/<slug:slug>/entries/<int:pk>/", EntryView.as_view(), name="entry"),
]
