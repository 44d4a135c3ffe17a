"""The rule for an entry's display names (issue 11, point 5; docs/names.md): the model name,
team, institution and authors are normalised and checked by `core.text` (NFKC, no invisible,
control or bidi character, the length counted once normalised), and a published model name may
not look the same as another published entry's on its benchmark (Unicode TR39 confusables).

The writers (`services.create_submission`, `services.import_published_result`,
`maintenance.update_entry_details`) apply it, so no path skips it; the web form, the API's
serializer and the admin's form apply it too, to answer in the same round trip.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import transaction

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
    "refresh_name_skeletons",
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


# --- after an upgrade of the confusables data ---------------------------------------------------


@dataclass(frozen=True)
class SkeletonRefresh:
    """What `refresh_name_skeletons` found: the entries whose stored key differs from today's
    (pk, name, stored, new) and the groups of published entries of one benchmark that would
    then share a key (pk, name)."""

    changed: list[tuple[int, str, str, str]]
    clashes: list[list[tuple[int, str]]]


def refresh_name_skeletons(*, dry_run: bool = False) -> SkeletonRefresh:
    """Recompute every entry's `model_name_skeleton` with the installed confusables data (ICU's,
    which a new pyicu-wheels may change): the stored keys are derived data, the names are
    never touched.

    Writes nothing when `dry_run`, or when published entries of one benchmark would then share
    a key (the unique index would refuse it; a maintainer renames or unpublishes one of each
    group first). Otherwise updates the changed rows in one transaction, each first to a
    placeholder unique to it, so that two entries trading keys never collide half-way. Derived
    data, so no audit row. Returns what it found.
    """
    rows = list(
        Submission.objects.order_by("pk").values_list(
            "pk", "benchmark_id", "model_name", "model_name_skeleton", "publish"
        )
    )
    changed, published = [], defaultdict(list)
    for pk, benchmark_id, name, stored, publish in rows:
        key = confusable_key(name)
        if key != stored:
            changed.append((pk, name, stored, key))
        if publish:
            published[benchmark_id, key].append((pk, name))
    clashes = [group for group in published.values() if len(group) > 1]
    if changed and not clashes and not dry_run:
        with transaction.atomic():
            for pk, *_ in changed:
                Submission.objects.filter(pk=pk).update(model_name_skeleton=f"refreshing:{pk}")
            for pk, _, _, key in changed:
                Submission.objects.filter(pk=pk).update(model_name_skeleton=key)
    return SkeletonRefresh(changed=changed, clashes=clashes)
