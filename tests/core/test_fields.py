"""`core.fields.JSONTextField`: PostgreSQL's `json` behind a `JSONField` (issue 16). What is
written reads back equal, through the ORM and `insert_rows`, on the table and through the board
rows' view; an exact match on the whole value and a key's text work as on `jsonb`."""

import pytest
from django.db import connection
from django.db.models import FloatField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from submissions.models import BoardEntry, BoardPlacement
from tests.submissions.factories import BoardPlacementFactory

INTERVALS = {"zeta": [0.25, 0.75], "a": None, "mid": [1e-9, 3.0]}


@pytest.mark.integration
@pytest.mark.django_db
def test_the_columns_are_json_on_postgresql_beside_jsonb_ones():
    if connection.vendor != "postgresql":
        pytest.skip("only PostgreSQL has json beside jsonb")

    def types(model, names):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = %s::regclass AND attname = ANY(%s)",
                [model._meta.db_table, names],
            )
            return dict(cursor.fetchall())

    assert types(BoardPlacement, ["own_intervals", "metric_ranks", "own_values", "highlights"]) == {
        "own_intervals": "json",
        "metric_ranks": "json",
        "own_values": "jsonb",
        "highlights": "jsonb",
    }
    # The rows' view shows them with the types of the run's columns they stand for.
    assert types(BoardEntry, ["intervals", "metric_ranks", "values", "highlights"]) == {
        "intervals": "json",
        "metric_ranks": "json",
        "values": "jsonb",
        "highlights": "jsonb",
    }


@pytest.mark.integration
@pytest.mark.django_db
def test_values_read_back_equal_and_look_ups_work_as_on_jsonb():
    placed = BoardPlacementFactory(own_intervals=INTERVALS, metric_ranks={"b": 2, "a": 1})
    other_placed = BoardPlacementFactory(own_intervals={}, metric_ranks={})
    row, other = (BoardEntry.objects.get(pk=found.pk) for found in (placed, other_placed))
    assert (row.intervals, row.metric_ranks) == (INTERVALS, {"b": 2, "a": 1})
    assert list(BoardEntry.objects.filter(intervals={}).values_list("pk", flat=True)) == [other.pk]
    assert list(BoardEntry.objects.exclude(intervals={}).values_list("pk", flat=True)) == [row.pk]
    assert list(
        BoardEntry.objects.filter(pk=row.pk).values_list(
            Cast(KeyTextTransform("b", "metric_ranks"), FloatField()), flat=True
        )
    ) == [2.0]
    assert list(BoardEntry.objects.order_by("pk").values_list("intervals", flat=True)) == [
        INTERVALS,
        {},
    ]
    BoardPlacement.objects.filter(pk=other.pk).update(metric_ranks={"c": 3})
    other.refresh_from_db()
    assert other.metric_ranks == {"c": 3}
