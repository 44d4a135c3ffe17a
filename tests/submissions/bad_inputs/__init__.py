"""The bad-input battery's harness: a table of refused inputs, each sent through both channels.

A `BadInput` is one hostile or malformed submission: the predictions file (built from a valid
upload's rows), the form fields it changes, and the exact refusal both channels must give. The
two tests in `tests/submissions/test_bad_inputs.py` send every case through the web form (a
signed-in person, Django's test client) and through the API (a token), and assert the exact
messages, the HTTP status (never a 500) and that nothing was written: no Submission, no
Evaluation, no audit row and no file under the private predictions folder.

Add cases by appending `BadInput`s to a list in this package (`files.CASES`, `fields.CASES`),
or write a new module with its own `CASES` and add it to `ALL_CASES` in
`tests/submissions/test_bad_inputs.py`; ids must be unique (a test checks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# The valid upload's rows, as dicts; a builder returns the file's bytes.
Rows = list[dict[str, Any]]
Builder = Callable[[Rows], bytes]

FILE_REJECTED = "The predictions file was rejected; nothing was stored."
FIELDS_INVALID = "The request is invalid; see `errors`."

# The form's valid fields. The web form's "evaluate only" is the API's `publish=false`.
VALID_FIELDS = {
    "model_name": "Battery Model",
    "institution": "Battery Lab",
    "contact_email": "battery@example.org",
    "model_url": "https://example.org/battery-model",
}


def dumps(rows: Rows) -> bytes:
    """The rows as an upload (ASCII JSON, non-ASCII and controls as \\u escapes)."""
    return json.dumps(rows).encode()


def valid(rows: Rows) -> bytes:
    return dumps(rows)


@dataclass(frozen=True)
class FileProblem:
    """One problem the scorer reports: `row` 0-based or None for the whole file, `field` ""
    for the row itself. The message may use `{id0}` ... `{id4}` and `{qa_type0}` ... for the
    test set's values."""

    row: int | None
    field: str
    message: str


@dataclass(frozen=True)
class BadInput:
    """One refused input and the refusal both channels give.

    `build` makes the predictions file from the valid rows (None: no file at all).
    `fields` overrides the form's fields (a None value removes the field); `api_fields`, when
    given, replaces them for the API (the channels spell a few fields differently).
    File problems (`problems`, `total`) are shown under the web form's file field and listed
    by the API as `invalid_predictions`; field errors (`web_errors` / `api_errors`, keyed by
    field, "__all__" on the web for the form as a whole) are the form's and the serializer's
    own messages. `benchmark` sets benchmark fields first (e.g. a smaller upload cap).
    """

    id: str
    build: Builder | None = valid
    fields: Mapping[str, str | None] = field(default_factory=dict)
    api_fields: Mapping[str, str | None] | None = None
    problems: tuple[FileProblem, ...] = ()
    total: int | None = None
    web_errors: Mapping[str, list[str]] = field(default_factory=dict)
    api_errors: Mapping[str, list[str]] = field(default_factory=dict)
    api_status: int = 400
    benchmark: Mapping[str, Any] = field(default_factory=dict)

    def expected_web_errors(self, context: Mapping[str, str]) -> dict[str, list[str]]:
        """{field: [messages]} as the web form renders them."""
        errors = {name: list(messages) for name, messages in self.web_errors.items()}
        if self.problems:
            errors["predictions"] = [_rendered(problem, context) for problem in self.problems]
            hidden = (self.total or len(self.problems)) - len(self.problems)
            if hidden > 0:
                errors["predictions"].append(
                    f"... and {hidden:,} more not listed; fix these and check again."
                )
        return errors

    def expected_api_body(self, context: Mapping[str, str]) -> dict[str, Any]:
        """The API's JSON body, exactly."""
        if self.problems:
            return {
                "detail": FILE_REJECTED,
                "code": "invalid_predictions",
                "problems": [
                    {
                        "row": problem.row,
                        "field": problem.field,
                        "message": _filled(problem.message, context),
                    }
                    for problem in self.problems
                ],
                "total": self.total if self.total is not None else len(self.problems),
            }
        return {"detail": FIELDS_INVALID, "code": "invalid", "errors": dict(self.api_errors)}


def _rendered(problem: FileProblem, context: Mapping[str, str]) -> str:
    """The problem as the web form words it: the row counted from 1 with the test set's id
    there (the API's `row` stays 0-based)."""
    where = []
    if problem.row is not None:
        sample_id = context.get(f"id{problem.row}")
        where.append(f"row {problem.row + 1}" + (f" (id {sample_id!r})" if sample_id else ""))
    if problem.field:
        where.append(f"field '{problem.field}'")
    message = _filled(problem.message, context)
    return f"{', '.join(where)}: {message}" if where else message


def _filled(message: str, context: Mapping[str, str]) -> str:
    """`message` with `{id0}`-style placeholders replaced (other braces are the message's)."""
    for name, value in context.items():
        message = message.replace("{" + name + "}", value)
    return message


def file_case(id: str, build: Builder, *problems: FileProblem, **options: Any) -> BadInput:
    """A file the scorer refuses: the same problems through both channels."""
    return BadInput(id=id, build=build, problems=problems, **options)


def replacing(old: str, new: str, *, count: int = 1) -> Builder:
    """The valid file with `old` replaced by `new` in its JSON text (`count` times)."""

    def build(rows: Rows) -> bytes:
        text = dumps(rows).decode()
        if old not in text:
            raise AssertionError(f"{old!r} is not in the valid file")
        return text.replace(old, new, count).encode("utf-8", "surrogatepass")

    return build


def with_rows(change: Callable[[Rows], Any]) -> Builder:
    """The valid rows changed in place by `change` (its return value is ignored)."""

    def build(rows: Rows) -> bytes:
        change(rows)
        return dumps(rows)

    return build


def raw(content: bytes) -> Builder:
    return lambda rows: content
