"""The ratings of a benchmark's rating categories (issue 15, docs/boards.md "Categories"):
`store_ratings` is the one writer of `CategoryRating`. The battles app (above `submissions`)
fits a category's Bradley-Terry ratings over its battles and hands the result here; the board
shows them as the category's rating metric (`recompute_board` overlays them)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

from benchmark.models import Benchmark, Category
from benchmark.selectors import benchmark_categories
from core import audit
from core.exceptions import InvalidRatings

from .board_refresh import schedule_board_refresh
from .enums import SnapshotReason, VerificationStatus
from .hooks import entry_battles_reader, rating_tab_reader
from .models import CategoryRating, Submission
from .snapshots import SnapshotRequest


@dataclass(frozen=True)
class RatingValue:
    """One entry's rating in a category: the rating (Elo scale), its 95% interval (both ends
    or neither) and the number of battles it is fitted on."""

    rating: float
    ci_low: float | None = None
    ci_high: float | None = None
    battles: int = 0


def store_ratings(
    benchmark: Benchmark,
    category_key: str,
    ratings: Mapping[int, RatingValue],
    *,
    computed_at: datetime,
    note: str = "",
    actor: Any = None,
) -> list[CategoryRating]:
    """Replace the ratings of one rating category of `benchmark` with `ratings` (submission id
    -> `RatingValue`): the one writer of `CategoryRating`.

    Checks everything first and refuses with `InvalidRatings` naming the entry and the field
    (nothing is written then): the category must be one of the benchmark's and rank by rating;
    each id an entry of this benchmark; each rating a finite number; an interval both ends or
    neither, finite, low <= high; battles a whole number >= 0.

    Then, in one transaction serialised on the benchmark row (as `recompute_board` is): deletes
    the category's rows, creates one per entry given (an entry not given has no rating: its
    board cell says the rating is pending), writes one `submissions.ratings.stored` audit row
    on the benchmark {category, entries, removed, computed_at, note}, and recomputes the board
    on commit. Returns the new rows, highest rating first.
    """
    category = Category.objects.filter(benchmark=benchmark, key=category_key).first()
    if category is None:
        keys = list(benchmark.categories.values_list("key", flat=True))
        raise InvalidRatings(
            f"{benchmark.name} has no category {category_key!r}"
            + (f"; its categories: {', '.join(keys)}." if keys else "; it has none.")
        )
    if not category.ranks_by_rating:
        raise InvalidRatings(
            f"Category {category_key!r} of {benchmark.name} is ranked by its metrics, not by "
            "a rating: it takes no ratings."
        )
    checked = {pk: _checked(pk, value) for pk, value in ratings.items()}
    found = set(
        Submission.objects.filter(benchmark=benchmark, pk__in=list(checked)).values_list(
            "pk", flat=True
        )
    )
    strangers = sorted(set(checked) - found)
    if strangers:
        raise InvalidRatings(
            f"Entries {', '.join(f'#{pk}' for pk in strangers)} are not entries of "
            f"{benchmark.name}; nothing was stored."
        )
    with transaction.atomic():
        Benchmark.objects.select_for_update().filter(pk=benchmark.pk).exists()
        removed, _ = CategoryRating.objects.filter(
            benchmark=benchmark, category=category_key
        ).delete()
        rows = CategoryRating.objects.bulk_create(
            [
                CategoryRating(
                    benchmark=benchmark,
                    category=category_key,
                    submission_id=pk,
                    rating=value.rating,
                    ci_low=value.ci_low,
                    ci_high=value.ci_high,
                    battles=value.battles,
                    computed_at=computed_at,
                )
                for pk, value in sorted(checked.items())
            ]
        )
        audit.record(
            "submissions.ratings.stored",
            actor=actor,
            target=benchmark,
            category=category_key,
            entries=len(rows),
            removed=removed,
            computed_at=computed_at.isoformat(),
            note=note,
        )
        official = Submission.objects.filter(
            benchmark=benchmark, publish=True, verification_status=VerificationStatus.VERIFIED
        ).exists()
        schedule_board_refresh(
            benchmark.pk,
            SnapshotRequest(SnapshotReason.RATINGS, f"The {category_key!r} ratings recomputed")
            if official
            else None,
        )
    rows.sort(key=lambda row: (-row.rating, row.submission_id))
    return rows


def _checked(pk: Any, value: Any) -> RatingValue:
    """`value` if every field of it can be stored, else `InvalidRatings` naming the entry and
    the field."""
    if isinstance(pk, bool) or not isinstance(pk, int):
        raise InvalidRatings(f"An entry is named by its submission id (a number), not {pk!r}.")
    if not isinstance(value, RatingValue):
        raise InvalidRatings(f"Entry #{pk}: expected a RatingValue, got {type(value).__name__}.")
    where = f"Entry #{pk}"
    if not _finite(value.rating):
        raise InvalidRatings(
            f"{where}, field 'rating': expected a finite number, got {value.rating!r}."
        )
    if (value.ci_low is None) != (value.ci_high is None):
        raise InvalidRatings(
            f"{where}: an interval has both ends (ci_low and ci_high) or neither, got "
            f"ci_low={value.ci_low!r}, ci_high={value.ci_high!r}."
        )
    for name in ("ci_low", "ci_high"):
        bound = getattr(value, name)
        if bound is not None and not _finite(bound):
            raise InvalidRatings(
                f"{where}, field {name!r}: expected a finite number, got {bound!r}."
            )
    if value.ci_low is not None and value.ci_low > value.ci_high:
        raise InvalidRatings(
            f"{where}: ci_low ({value.ci_low}) is above ci_high ({value.ci_high})."
        )
    battles = value.battles
    if isinstance(battles, bool) or not isinstance(battles, int) or battles < 0:
        raise InvalidRatings(
            f"{where}, field 'battles': expected a whole number >= 0, got {battles!r}."
        )
    return value


def _finite(number: Any) -> bool:
    return (
        not isinstance(number, bool) and isinstance(number, int | float) and math.isfinite(number)
    )


# --- what the battles app says on the pages (hooks: `arena` sits above this app) ---------------


@dataclass(frozen=True)
class RatingTab:
    """What a rating category's tab says about its battles and ratings, below its description:
    sentences a template escapes (how many battles between how many entries, who judged them,
    battles dropped, ratings pending and why), how many battles the download holds (0: no
    download yet) and the command that rates them again as the board did."""

    lines: tuple[str, ...]
    battles: int
    command: str = ""


@dataclass(frozen=True)
class OpponentRecord:
    """An entry's battles against one opponent on the boards: won, tied and lost."""

    submission_id: int
    model_name: str
    won: int
    tied: int
    lost: int


@dataclass(frozen=True)
class EntryBattles:
    """An entry's battles in one rating category, for its public page: per opponent on the
    boards (an opponent that is not is counted in `elsewhere`, never named), the totals, the
    battles dropped (no usable verdict) and a line on battles still running."""

    category: str
    label: str
    opponents: tuple[OpponentRecord, ...]
    elsewhere: int = 0
    dropped: int = 0
    running: str = ""

    @property
    def won(self) -> int:
        return sum(record.won for record in self.opponents)

    @property
    def tied(self) -> int:
        return sum(record.tied for record in self.opponents)

    @property
    def lost(self) -> int:
        return sum(record.lost for record in self.opponents)


def set_rating_tab_reader(reader: Callable[[Benchmark, Category], RatingTab | None] | None) -> None:
    """Register the function that tells what a rating tab says (None: forget it, for tests)."""
    rating_tab_reader.set(reader)


def set_entry_battles_reader(reader: Callable[[Submission], list[EntryBattles]] | None) -> None:
    """Register the function that lists an entry's battles (None: forget it, for tests)."""
    entry_battles_reader.set(reader)


def rating_tab(benchmark: Benchmark, category: Category | None) -> RatingTab | None:
    """What the tab of `category` says about its battles (None: not a rating tab, or no battles
    app installed)."""
    if category is None or not category.ranks_by_rating or rating_tab_reader.callback is None:
        return None
    return rating_tab_reader.callback(benchmark, category)


def entry_battles(benchmark: Benchmark, submission: Submission) -> list[EntryBattles]:
    """The entry's battles, one item per rating category it battled in ([] without any). No
    query for a benchmark read by `benchmark_by_slug` that has no categories."""
    if entry_battles_reader.callback is None or not benchmark_categories(benchmark):
        return []
    return entry_battles_reader.callback(submission)
