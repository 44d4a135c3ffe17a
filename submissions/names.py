"""The rule for an entry's display names (issue 11, point 5; docs/names.md): the model name,
team, institution and authors are normalised and checked by `core.text` (NFKC, no invisible,
control or bidi character, the length counted once normalised), and a published model name may
not look the same as another published entry's on its benchmark (Unicode TR39 confusables).

The writers (`services.create_submission`, `services.import_published_result`,
`maintenance.update_entry_details`) apply it, so no path skips it; the web form, the API's
serializer and the admin's form apply it too, to answer in the same round trip.
"""

from __future__ import annotations

from typing import Any

from benchmark.models import Benchmark
from core.exceptions import InvalidName
from core.text import confusable_key, normalise_display_name

from .models import Submission
from .selectors import published_lookalike

__all__ = [
    "NAME_FIELDS",
    "clean_name",
    "clean_names",
    "confusable_key",
    "published_name_message",
    "refuse_published_lookalike",
]

# The display names and how messages call them. Their limits are the model fields'.
NAME_FIELDS = {
    "model_name": "Model name",
    "institution": "Institution",
    "team_name": "Team name",
    "authors": "Authors",
}

# Authors are one line too (a newline would split a CSV row or an email header): the message
# about a line break says how to list several.
MULTILINE_HINTS = {"authors": ": separate authors with commas"}


def max_length(field: str) -> int:
    limit = Submission._meta.get_field(field).max_length
    assert limit is not None
    return limit


def clean_name(field: str, value: str, *, required: bool = False) -> str:
    """`value` normalised as `field` stores it (`core.text.normalise_display_name`, with the
    model field's max length); `InvalidName` naming the field otherwise. `required` refuses a
    name that is empty once normalised (the forms leave that to their own required check)."""
    try:
        return normalise_display_name(
            value,
            label=NAME_FIELDS[field],
            max_length=max_length(field),
            required=required,
            multiline_hint=MULTILINE_HINTS.get(field, ""),
        )
    except InvalidName as error:
        raise InvalidName(str(error), field=field) from None


def clean_names(values: dict[str, Any]) -> dict[str, str]:
    """The name fields among `values`, each normalised (the model name required); other keys
    are left out. Raises `InvalidName` for the first field at fault, in form order."""
    return {
        field: clean_name(field, values[field], required=field == "model_name")
        for field in NAME_FIELDS
        if field in values
    }


def published_name_message(name: str, existing: Submission, benchmark: Benchmark) -> str:
    """Why `name` is refused next to the published entry `existing`: the same name (case
    aside), or one that only looks the same."""
    if existing.model_name.casefold() == name.casefold():
        return (
            f"A published entry named {name!r} already exists on {benchmark.name}; "
            "choose another model name."
        )
    return (
        f"{name!r} looks the same as the published entry {existing.model_name!r} on "
        f"{benchmark.name} (Unicode look-alike characters); choose another model name."
    )


def refuse_published_lookalike(
    benchmark: Benchmark, name: str, *, exclude_pk: int | None = None
) -> None:
    """Raise `InvalidName` (field model_name) when a published entry of `benchmark` other
    than `exclude_pk` has a name that looks the same as `name` (`confusable_key`)."""
    existing = published_lookalike(benchmark, name, exclude_pk=exclude_pk)
    if existing is not None:
        raise InvalidName(published_name_message(name, existing, benchmark), field="model_name")
