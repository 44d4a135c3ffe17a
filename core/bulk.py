"""Writing many rows as plain tuples (issue 16).

`QuerySet.bulk_create` builds a model instance per row and then SQL for every value: for a
100,000-row board that was most of the 22 s a recompute took (and the 300,000 objects it left
behind kept the garbage collector busy). `insert_rows` takes the rows as tuples of the values
the model holds and sends them the cheapest way the database offers: PostgreSQL's `COPY ...
FROM STDIN` through psycopg 3, one `executemany` of one INSERT elsewhere (SQLite). Each
column is converted once per value as its field would convert it (a JSON field's
`json.dumps`, a date-time's adaptation), so the stored rows are those `bulk_create` writes.

`update_rows` writes fields of many saved objects back in one statement (what bulk_update
writes, without its per-value SQL expressions).

`decoded_json` is the other way: many rows' JSON texts, as the database gave them, decoded in
one call; `numbers_table` lays the decoded objects out as one matrix of their numbers.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

import msgspec
import numpy as np
from django.db import connection, models
from psycopg.copy import QueuedLibpqWriter

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
            # COPY's text format, written here a column at a time in large blocks (psycopg's
            # `write_row` formats value by value: 3 s of a 100,000-row board). The server
            # parses each JSON text as jsonb and each date-time text as timestamptz.
            # The blocks go to the server from a thread of psycopg's
            # (`QueuedLibpqWriter`), which waits on the socket without the GIL while
            # this one writes the next block: the server parses and indexes the rows
            # while they are being written, rather than after (`docs/boards.md`).
            raw = cursor.cursor
            statement = f"COPY {table} ({columns}) FROM STDIN"
            with raw.copy(statement, writer=QueuedLibpqWriter(raw)) as copy:
                for block in copy_text(prepared()):
                    copy.write(block)
        else:
            marks = ", ".join(["%s"] * len(model_fields))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", prepared())


# Rows per UPDATE statement of `update_rows`: far inside SQLite's 32,766 parameters and
# PostgreSQL's 65,535 for any model's fields.
UPDATE_BATCH_ROWS = 500


def update_rows(
    model: type[models.Model], objects: Sequence[models.Model], fields: Sequence[str]
) -> None:
    """Write `fields` of `objects` (saved instances of `model`) back to their rows: what
    `QuerySet.bulk_update(objects, fields)` writes, as one `UPDATE ... FROM (VALUES ...)` per
    `UPDATE_BATCH_ROWS` rows. bulk_update builds a `CASE WHEN pk = ... THEN ...` expression per
    value and field and compiles each: for a judge's batch of 25 items and 8 fields that was
    ~70 ms of the worker's thread, most of a judge job's own time (issue 31, point 6). Each
    value is converted as its field converts it for a save (`insert_rows`' converters) and cast
    to the column's type in the statement (so a column of NULLs is typed). No signal is sent and
    no `auto_now` field is touched, as with bulk_update."""
    if not objects:
        return
    meta = model._meta
    model_fields = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    sets = ", ".join(
        f"{quote(field.column)} = CAST(v.column{index} AS {field.cast_db_type(connection)})"
        for index, field in enumerate(model_fields, start=2)
    )
    key = f"{table}.{quote(meta.pk.column)} = v.column1"
    converters = [_converter(field) for field in model_fields]
    attnames = [meta.pk.attname, *(field.attname for field in model_fields)]
    marks = "(" + ", ".join(["%s"] * len(attnames)) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(objects), UPDATE_BATCH_ROWS):
            batch = objects[start : start + UPDATE_BATCH_ROWS]
            values: list[Any] = []
            for obj in batch:
                row = [getattr(obj, name) for name in attnames]
                for position, convert in enumerate(converters, start=1):
                    if convert is not None:
                        row[position] = convert(row[position])
                values.extend(row)
            cursor.execute(
                f"UPDATE {table} SET {sets} FROM (VALUES {', '.join([marks] * len(batch))}) "
                f"AS v WHERE {key}",
                values,
            )


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


# COPY's text format (PostgreSQL's "COPY", "File Formats"): a tab between columns, a newline
# after each row, \N for NULL, and a backslash escaping itself and the three separators.
_ESCAPES = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"))
# Rows per block written: large enough that the writes cost nothing, small enough that a block
# is a few megabytes.
COPY_BLOCK_ROWS = 10_000


def copy_text(rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """`rows` as COPY text, in blocks of `COPY_BLOCK_ROWS` rows: each column's values are
    turned into text together (`_column_text`), then the rows joined."""
    iterator = iter(rows)
    while block := list(itertools.islice(iterator, COPY_BLOCK_ROWS)):
        columns = [_column_text(column) for column in zip(*block, strict=True)]
        yield "\n".join(map("\t".join, zip(*columns, strict=True))) + "\n"


# Columns of one of these types (and NULL) are converted by one `map`, not value by value.
_COLUMN_TEXT: dict[type, Callable[[Any], str]] = {str: str, int: int.__repr__}
_BOOLEAN_TEXT = {"True": "t", "False": "f"}  # by `bool.__repr__`, which takes nothing else


def _column_text(values: Sequence[Any]) -> Sequence[str]:
    """One column's values as COPY text. A column of one type, that of its first value (text,
    integers, booleans, finite doubles), is converted by one `map` or taken as it is, its
    text escaped only when a special character occurs; any other goes value by value
    (`_mixed_column_text`)."""
    first = values[0]
    kind = type(first)
    if (
        len(values) > 1
        and kind is not str
        and values[-1] == first  # most columns differ here: no count
        and values.count(first) == len(values)
    ):
        # One value throughout (the board's benchmark, its computed_at): converted once.
        return [_column_text(values[:1])[0]] * len(values)
    # A value of another type than the first, None included, makes the conversion raise.
    # Numbers hold no character to escape.
    try:
        if kind is str:
            joined = "\0".join(values)
        elif kind is int:
            return list(map(int.__repr__, values))
        elif kind is bool:
            return list(map(_BOOLEAN_TEXT.__getitem__, map(bool.__repr__, values)))
        elif kind is float and all(map(math.isfinite, values)):
            return list(map(float.__repr__, values))  # the shortest text of the same double
        else:
            return _mixed_column_text(values)
    except TypeError:
        return _mixed_column_text(values)
    return _escaped(values, joined)


def _mixed_column_text(values: Sequence[Any]) -> list[str]:
    """`_column_text` of a column of several types or with NULLs: converted by one `map` when
    the values are all text or all integers (or finite doubles), NULLs aside, else value by
    value; the texts escaped; NULL set last, its backslash not to be doubled."""
    kinds = set(map(type, values))
    nulls = type(None) in kinds
    kinds.discard(type(None))
    present = [value for value in values if value is not None] if nulls else values
    convert = _COLUMN_TEXT.get(next(iter(kinds))) if len(kinds) == 1 else None
    if kinds == {float} and all(map(math.isfinite, present)):
        convert = float.__repr__  # the shortest text that reads back as the same double
    if convert is not None and not nulls:
        texts = list(map(convert, values))
    else:
        texts = [_value_text(value) for value in values]
    texts = list(_escaped(texts, "\0".join(texts)))
    if nulls:
        for position in [position for position, value in enumerate(values) if value is None]:
            texts[position] = "\\N"
    return texts


def _escaped(texts: Sequence[str], joined: str) -> Sequence[str]:
    """`texts` escaped for COPY; `joined` is them joined on NUL (which PostgreSQL's text never
    holds), escaped with one `replace` per special character only when one occurs, and split
    again."""
    if "\\" in joined or "\t" in joined or "\n" in joined or "\r" in joined:
        for old, new in _ESCAPES:
            joined = joined.replace(old, new)
        return joined.split("\0")
    return texts


def _value_text(value: Any) -> str:
    """One value as COPY's text format reads it, before escaping."""
    kind = type(value)
    if kind is str:
        return value
    if value is None:
        return ""  # \N once escaped (`_column_text`)
    if kind is bool:
        return "t" if value else "f"
    if kind is int:
        return str(value)
    if kind is float:
        # repr is the shortest text that reads back as the same double; PostgreSQL reads
        # "nan" and "inf" as it writes them.
        return (
            repr(value)
            if math.isfinite(value)
            else {"nan": "NaN", "inf": "Infinity"}.get(repr(value), "-Infinity")
        )
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()  # bytea's hex format
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def decoded_json(texts: list[str]) -> list[Any]:
    """Each JSON text decoded, in one call for the array of them (a call per text cost a
    fifth more), by msgspec (`submissions.boards.values.decoded_metrics` says why); what
    msgspec declines that json takes (a number past a double's range) is decoded by json."""
    text = "[" + ",".join(texts) + "]"
    try:
        return _JSON_DECODER.decode(text)
    except msgspec.MsgspecError:
        return json.loads(text)


_JSON_DECODER = msgspec.json.Decoder()


class NumbersTable(NamedTuple):
    """Decoded JSON objects as one matrix of doubles (`numbers_table`)."""

    columns: dict[str, int]  # each key's column
    matrix: np.ndarray  # a row per object, NaN where the value is null
    nulls: int  # how many values were null


def numbers_table(rows: list[Any], kinds: Collection[type]) -> NumbersTable | None:
    """`rows` (decoded JSON objects) as one matrix, converted in one call rather than looked
    up row by row and key by key, when every row is an object of the same keys in the same
    order and every value is null or of one of `kinds` (number types: an integer past a
    double's range refuses). None otherwise: the caller goes row by row."""
    if not rows or not all(type(row) is dict for row in rows):
        return None
    layouts = set(map(tuple, rows))
    if len(layouts) != 1:
        return None
    flat = list(itertools.chain.from_iterable(map(dict.values, rows)))
    if not set(map(type, flat)) <= {*kinds, type(None)}:
        return None
    try:
        matrix = np.array(flat, dtype=float)  # None is NaN
    except OverflowError:
        return None
    (layout,) = layouts
    columns = {key: position for position, key in enumerate(layout)}
    return NumbersTable(columns, matrix.reshape(len(rows), len(layout)), flat.count(None))
