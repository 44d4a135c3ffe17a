"""Snapshots written as a test states them (issue 33, point 3): a re-scoring on a corrected test
set has no writer yet to drive, so the tests of what a diff shows of one write the two
snapshots' rows directly, shaped as `snapshots.snapshot_content` writes them."""

import hashlib
import json
import zlib
from datetime import timedelta

from django.utils import timezone

from submissions.enums import SnapshotReason
from submissions.models import BoardSnapshot

KEYS = ["CVS_acc", "NAP_acc"]


def row(submission_id, model, board, rank, position, values, *, testset=1, scorer="s1"):
    return {
        "rank": rank,
        "board": board,
        "model": model,
        "metrics": {key: {"value": values.get(key), "rank": 1} for key in KEYS},
        "submission_id": submission_id,
        "position": position,
        "testset_version": testset,
        "scorer_version": scorer,
    }


OLDER = [
    row(101, "Alpha", "official", 1, 1, {"CVS_acc": 0.7, "NAP_acc": 0.5}),
    row(102, "Beta", "community", 2, 1, {"CVS_acc": 0.6, "NAP_acc": 0.4}),
    row(103, "Gamma", "community", 3, 2, {"CVS_acc": 0.5, "NAP_acc": 0.3}),
]
# Beta verified and first; Alpha re-scored on test set 2 (CVS_acc 0.7 -> 0.65); Gamma left;
# Epsilon arrived.
NEWER = [
    row(102, "Beta", "official", 1, 1, {"CVS_acc": 0.6, "NAP_acc": 0.4}),
    row(101, "Alpha", "official", 2, 2, {"CVS_acc": 0.65, "NAP_acc": 0.5}, testset=2, scorer="s2"),
    row(105, "Epsilon", "community", 3, 1, {"CVS_acc": 0.45, "NAP_acc": 0.2}),
]


def sealed_snapshot(benchmark, rows, *, days_ago=0):
    body = json.dumps(rows, separators=(",", ":")).encode()
    moment = timezone.now() - timedelta(days=days_ago)
    return BoardSnapshot.objects.create(
        benchmark=benchmark,
        taken_at=moment,
        reason=SnapshotReason.MAINTAINER,
        description="stated by the test",
        changes=0,
        sealed_at=moment,
        entries=len(rows),
        sha256=hashlib.sha256(body).hexdigest(),
        csv=zlib.compress(b""),
        rows=zlib.compress(body),
        metric_keys=KEYS,
    )
