"""Naming where a predictions file matched by position gains or loses rows.

A file with one row missing in the middle holds every later row one place early, so "expected
6,245 rows, got 6,244" alone leaves the submitter to search 6,244 rows. `row_count_problem`
compares each row's key (its id and type, as the benchmark identifies a row) with the test
set's key at the same position, names the first row where they differ and what the test set
holds there, and says whether the file lines up again once the missing (or extra) rows are
accounted for: one linear pass, about a millisecond for 6,245 rows.

Plain Python, no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from benchmark.scoring.errors import Problem

# The fields that place a row in the test set, each a name and its value as a message quotes
# it, the first the row's identity (MedVidBench: id, then qa_type).
Fields = Sequence[tuple[str, str | None]]


def row_count_problem(
    keys: Sequence[Hashable | None],
    expected: Sequence[Hashable],
    *,
    head: str,
    row_fields: Callable[[int], Fields | str],
    test_set_fields: Callable[[int], Fields],
    noun: str,
) -> Problem:
    """The problem of a file whose rows' `keys` (None for a row without a readable key) are
    not as many as the test set's `expected` keys. `head` opens the message ("expected 6,245
    rows, ..., got 6,244"); `test_set_fields(i)` gives the fields that place the test set's
    row i, each a name and its value as a message quotes it ((("id", "'...'"), ("qa_type",
    "'tal'")), worded "id '...' (qa_type 'tal')"); `row_fields(i)` the same for the file's row
    i (a value None when the row lacks the field), or words what the row is when it is no
    object ("is a list of 3, not an object ..."); `noun` is what the test set holds
    ("sample", "item"). Where a row and the test set differ in some fields only, the message
    names those alone.

    The problem carries the first position where the file and the test set differ, so each
    channel names it in its own words (the API 0-based, the web form from 1 with the test
    set's id there); a file that is empty, or differs only by rows missing or added at its
    end, carries the first missing or extra position. The message never numbers that row."""
    found, wanted = len(keys), len(expected)
    if found == 0:
        return Problem(head)
    first = next(
        (position for position, key in enumerate(keys[:wanted]) if key != expected[position]),
        None,
    )
    difference = abs(wanted - found)
    if first is None:
        if found < wanted:
            matching = (
                f"the row matches the test set's first {noun}"
                if found == 1
                else f"the {found:,} rows match the test set's first {found:,} {noun}s"
            )
            return Problem(
                f"{head}: {matching}, so {_at_the_end(difference, 'missing')} at the end: the "
                f"file has no row for this {noun}, {_holds(test_set_fields(found))}"
                f"{_after(difference, 'or')}",
                row=found,
            )
        matching = (
            f"the first row matches the test set's only {noun}"
            if wanted == 1
            else f"the first {wanted:,} rows match every {noun} of the test set"
        )
        return Problem(
            f"{head}: {matching}, so {_at_the_end(difference, 'extra')} at the end"
            f"{_copy(keys, wanted, difference)}: remove this row{_after(difference, 'and')}",
            row=wanted,
        )
    if found < wanted and keys[first:] == expected[first + difference :]:
        # The file lines up again once the test set's rows from `first` on are skipped, so
        # those are the rows it lacks (where the test set repeats a key, the file is the same
        # whichever copy it lacks). What this row holds follows: the next one's key.
        return Problem(
            f"{head}: the file has no row for the test set's {noun} at this position, "
            f"{_holds(test_set_fields(first))}{_after(difference, 'or')}: from this row on "
            f"every row is {_places(difference)} early",
            row=first,
        )
    opening = f"{head}: this row {_differs(row_fields(first), test_set_fields(first))}"
    earlier = "every earlier row matches, so " if first else ""
    if found < wanted:
        return Problem(
            f"{opening}; {earlier}{_are_missing(difference, before=first > 0)} or the rows "
            "are out of order (the later rows do not all line up either)",
            row=first,
        )
    if keys[first + difference :] == expected[first:]:
        copy = _copy(keys, first, difference)
        what = (
            "it is an extra row"
            if difference == 1
            else f"it and the {difference - 1:,} after it are extra rows"
        )
        return Problem(
            f"{opening}; {what}{copy}: remove {'it' if difference == 1 else 'them'} and every "
            "later row lines up with the test set",
            row=first,
        )
    extra = "this row is extra" if difference == 1 else f"{difference:,} rows are extra"
    return Problem(
        f"{opening}; {earlier}{extra} or the rows are out of order (the later rows do not all "
        "line up either)",
        row=first,
    )


def _holds(fields: Fields) -> str:
    """ "id '...' (qa_type 'tal')": the first field, the others in parentheses."""
    first, *others = (_field(name, value) for name, value in fields)
    return f"{first} ({', '.join(others)})" if others else first


def _differs(row: Fields | str, test_set: Fields) -> str:
    """How the file's row differs from the test set's at its position, after "this row": every
    field when all differ ("holds id 'a' (qa_type 'tal'), where the test set has id 'b'
    (qa_type 'stg')"), only the differing ones when some are the same, never repeating a value
    both hold ("holds the test set's id but qa_type 'tal', where the test set has qa_type
    'stg'")."""
    if isinstance(row, str):
        return f"{row}, where the test set has {_holds(test_set)}"
    same = [
        name for (name, value), (_, wanted) in zip(row, test_set, strict=True) if value == wanted
    ]
    if not same:
        return f"holds {_holds(row)}, where the test set has {_holds(test_set)}"
    differing = [field for field in row if field[0] not in same]
    wanted = [field for field in test_set if field[0] not in same]
    return (
        f"holds the test set's {' and '.join(same)} but {_list(differing)}, where the test set "
        f"has {_list(wanted)}"
    )


def _field(name: str, value: str | None) -> str:
    return f"no {name}" if value is None else f"{name} {value}"


def _list(fields: Fields) -> str:
    return " and ".join(_field(name, value) for name, value in fields)


def _copy(keys: Sequence[Hashable | None], position: int, difference: int) -> str:
    """The words ", a copy of the row before it" when the one extra row at `position` repeats
    the row before it, else nothing."""
    key = keys[position]
    repeated = difference == 1 and position > 0 and key is not None and key == keys[position - 1]
    return ", a copy of the row before it" if repeated else ""


def _are_missing(count: int, *, before: bool) -> str:
    rows = "a row is" if count == 1 else f"{count:,} rows are"
    return f"{rows} missing{' before it' if before else ''}"


def _at_the_end(count: int, what: str) -> str:
    return f"the {what} row is" if count == 1 else f"the {count:,} {what} rows are"


def _after(count: int, joiner: str) -> str:
    """ " or the 2 after it" for 3 rows from here (`joiner` "or"); "" for one."""
    return "" if count == 1 else f" {joiner} the {count - 1:,} after it"


def _places(count: int) -> str:
    return "one place" if count == 1 else f"{count:,} places"
