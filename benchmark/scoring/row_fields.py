"""A required field a row lacks, told together with the key the row holds in its place.

A row with "pred" where "prediction" belongs has two problems that are one mistake: an unknown
key and a missing field. Said apart ("field 'pred': unknown field", "field 'prediction':
missing"), the first reads as if removing "pred" were the fix. `renamed_fields` pairs each
missing field with the row's unknown key that looks like it (`difflib.get_close_matches`,
compared case-blind), and the reader words the pair once, at the missing field:
"missing (this row has 'pred', which is not a field: did you mean 'prediction'?)".

Plain Python, no Django.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Sequence

from benchmark.scoring.json_file import field_name
from benchmark.scoring.strict_json import text_problem

# How alike a key and a field must be (difflib's ratio) to be called a misspelling: "pred" for
# "prediction" is 0.57, "predictions" 0.95, "ans" for "answer" 0.67; "output" for "prediction"
# (0.25) is a different word, and stays an unknown field.
SIMILARITY = 0.5


def renamed_fields(
    names: Iterable[str], *, required: Sequence[str], known: Collection[str]
) -> dict[str, str]:
    """{each field of `required` the row lacks: the row's key that stands for it}, for the
    row's keys `names`. Only a key that is not `known` (a required or otherwise recognised
    field) and that a message can quote stands for a field, and for one field at most, the
    first of `required` it looks like."""
    names = list(names)
    unknown = [name for name in names if name not in known and text_problem(name) is None]
    renamed: dict[str, str] = {}
    for field in required:
        if field in names:
            continue
        free = {}
        for name in unknown:
            if name not in renamed.values():
                free.setdefault(name.casefold(), name)
        match = difflib.get_close_matches(field.casefold(), free, n=1, cutoff=SIMILARITY)
        if match:
            renamed[field] = free[match[0]]
    return renamed


def missing_message(field: str, renamed: dict[str, str]) -> str:
    """The message for `field` missing from a row, naming the key that stands for it."""
    if field not in renamed:
        return "missing"
    return (
        f"missing (this row has '{field_name(renamed[field])}', which is not a field: did you "
        f"mean '{field}'?)"
    )
