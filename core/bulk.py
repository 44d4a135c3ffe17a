"""Writing many rows as plain tuples (issue 16).

`QuerySet.bulk_create` builds a model instance per row and then SQL for every value: for a
100,000-row board that was most of the 22 s a recompute took (and the 300,000 objects it left
behind kept the garbage collector busy). `insert_rows` takes the rows as tuples of the values
the model holds and sends them the cheapest way the database offers: PostgreSQL's `COPY ...
FROM STDIN` through psycopg 3, one `executemany` of one INSERT elsewhere (SQLite). Each
column is converted once per value as its field would convert it (a JSON field's
`json.dumps`, a date-time's adaptation), so the stored rows are those `bulk_create` writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import partial
from typing import Any

from django.db import connection, models

# Fields whose Python value the database drivers take as it is.
_PLAIN = (
    models.IntegerField,
    models.FloatField,
    models.CharField,
    models.TextField,
    models.BooleanField,
    models.ForeignKey,  # the related row's id
    models.BinaryField,
)


def insert_rows(
    model: type[models.Model],
    fields: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    as_is: Collection[str] = (),
) -> None:
    """Insert `rows` into `model`'s table in the current transaction. Each row holds the
    values of `fields` (field names; a foreign key's value is the related row's id), in that
    order; the primary key is left to the database. The fields in `as_is` hold what the
    database stores already (JSON text, a date-time as the database's text, e.g. read with
    `Cast(..., TextField())`), sent unconverted. Nothing is returned (no ids: a caller that
    needs the rows reads them back), no signal is sent, no default is filled in."""
    meta = model._meta
    model_fields = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    columns = ", ".join(quote(field.column) for field in model_fields)
    converters = [None if field.name in as_is else _converter(field) for field in model_fields]
    converted = [
        (position, convert) for position, convert in enumerate(converters) if convert is not None
    ]

    def prepared() -> Iterable[Sequence[Any]]:
        if not converted:
            return rows
        return (_converted(row, converted) for row in rows)

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # psycopg 3's COPY, text format: the server parses each JSON text as jsonb and
            # each date-time text as timestamptz.
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in prepared():
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(model_fields))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", prepared())


def _converted(row: Sequence[Any], converters: list[tuple[int, Callable[[Any], Any]]]) -> list[Any]:
    values = list(row)
    for position, convert in converters:
        values[position] = convert(values[position])
    return values


def _converter(field: models.Field) -> Callable[[Any], Any] | None:
    """How one value of `field` becomes what the driver is given (None: as it is)."""
    if isinstance(field, models.JSONField):
        # What JSONField.get_db_prep_value sends (`connection.ops.adapt_json_value`): the
        # JSON text (COPY's text format takes it as SQLite does); None is SQL NULL.
        dumps = partial(json.dumps, cls=field.encoder)
        return lambda value: None if value is None else dumps(value)
    if isinstance(field, models.DateTimeField):
        if connection.vendor == "postgresql":
            return None  # psycopg adapts an aware datetime to timestamptz
        return connection.ops.adapt_datetimefield_value
    if isinstance(field, _PLAIN):
        return None
    return partial(_prepared, field)


def _prepared(field: models.Field, value: Any) -> Any:
    return field.get_db_prep_save(value, connection)
