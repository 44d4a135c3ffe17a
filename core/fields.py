"""Model fields of our own (issue 16)."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models.fields.json import JSONExact


class JSONTextField(models.JSONField):
    """A `JSONField` kept on PostgreSQL as `json` (the text, checked once) rather than
    `jsonb` (parsed into a binary tree, every number a `numeric`): for JSON written often,
    many rows at a time, and read back whole, never searched inside with jsonb's operators
    (containment, key existence). At a 100,000-row board recompute, `jsonb`'s parsing of a
    row's 20 interval bounds and 10 per-metric ranks was a quarter of the server's time
    (docs/boards.md). Key transforms (`->`, `->>`) work on `json` as on `jsonb`; an exact
    match on the whole value compares as `jsonb`. Keys come back in the order they were
    written (jsonb sorts them), values equal. Elsewhere (SQLite) exactly a `JSONField`."""

    def db_type(self, connection: Any) -> str | None:
        if connection.vendor == "postgresql":
            return "json"
        return super().db_type(connection)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if value is not None and not isinstance(value, str):
            return value  # psycopg decodes a `json` column itself (Django reads jsonb as text)
        return super().from_db_value(value, expression, connection)


@JSONTextField.register_lookup
class JSONTextExact(JSONExact):
    """`field={...}`: PostgreSQL has no equality on `json`, so the column is compared as
    `jsonb` (as `JSONField` compares it)."""

    def process_lhs(self, compiler: Any, connection: Any, lhs: Any = None) -> tuple[str, Any]:
        sql, params = super().process_lhs(compiler, connection, lhs)
        if connection.vendor == "postgresql":
            sql = f"({sql})::jsonb"
        return sql, params


class EqualityIndex(models.Index):
    """An index for equality lookups alone (a join on a foreign key, never an order or a
    range): a hash index on PostgreSQL, a B-tree elsewhere (SQLite has no other). Issue 16: a
    hash index's insert finds its bucket without descending a tree and comparing keys, so a
    table whose rows are all written again on every recompute keeps it for less (~0.07-0.13
    s of a 100,000-row COPY here, against a B-tree of the same column)."""

    def create_sql(self, model: Any, schema_editor: Any, using: str = "", **kwargs: Any) -> Any:
        if schema_editor.connection.vendor == "postgresql":
            using = " USING hash"
        return super().create_sql(model, schema_editor, using=using, **kwargs)
