"""The MedSG-Bench evaluation file: read strictly, every row checked, problems named."""

import hashlib
import json

import numpy as np
import pytest

from benchmark.scoring.errors import GroundTruthError
from plugins.medsg.scoring.testset import TASKS, load_testset

from .factories import item

pytestmark = pytest.mark.unit


def rejected(source) -> GroundTruthError:
    with pytest.raises(GroundTruthError) as caught:
        load_testset(source)
    return caught.value


def test_a_well_formed_file_loads_in_order_with_arrays():
    records = [
        item("referring", [1, 2, 30, 40]),
        item("multi_view", [0, 0, 100, 50], size=[200, 100]),
        item("patch", [5.5, 6, 7, 8], id="kept-but-not-scored"),
    ]
    raw = json.dumps(records).encode()
    test_set = load_testset(raw)
    assert len(test_set) == 3
    assert test_set.tasks == ("referring", "multi_view", "patch")
    assert test_set.task_codes.tolist() == [7, 2, 5]
    assert test_set.task_codes.dtype == np.int64
    assert test_set.references.tolist() == [[1, 2, 30, 40], [0, 0, 100, 50], [5.5, 6, 7, 8]]
    assert test_set.references.dtype == np.float64
    assert test_set.sizes.tolist() == [[336, 336], [200, 100], [336, 336]]
    assert test_set.items[1].size == (200.0, 100.0)
    assert test_set.items[0].size is None
    assert test_set.items[0].images == ("images/a.png", "images/b.png")
    assert test_set.checksum == hashlib.sha256(raw).hexdigest()
    assert test_set.task_counts() == {"multi_view": 1, "patch": 1, "referring": 1}
    with pytest.raises(ValueError, match="read-only"):
        test_set.references[0, 0] = 9


def test_a_null_size_is_read_as_absent():
    test_set = load_testset([item("referring", [1, 2, 3, 4], size=None) | {"size": None}])
    assert test_set.items[0].size is None
    assert test_set.sizes.tolist() == [[336, 336]]


def test_the_canonical_form_ignores_layout_and_metadata():
    records = [item("referring", [1, 2, 3, 4])]
    spaced = load_testset(json.dumps(records, indent=4).encode())
    with_metadata = load_testset(json.dumps([records[0] | {"id": "x"}]).encode())
    assert spaced.canonical_json() == with_metadata.canonical_json()
    assert spaced.checksum != with_metadata.checksum  # the checksum is of the bytes
    assert (
        load_testset(records).checksum
        == hashlib.sha256(spaced.canonical_json().encode()).hexdigest()
    )


def test_every_row_and_field_is_named():
    records = [
        item("referring", [1, 2, 3, 4]),
        item("Referring", [1, 2, 3, 4]),  # row 1: unknown task
        item("patch", [1, 2, 3]),  # row 2: three numbers
        item("patch", [1, 2, 3, True]),  # row 3: a boolean
        item("multi_view", [1, 2, 3, 4], size=[0, 100]),  # row 4: size not positive
        {"task": "patch", "images": [], "answer": [1, 2, 3, 4]},  # row 5: no question, no image
        item("patch", [1, 2, 3, 4], question=7, images=["a.png", 3]),  # row 6
        "not an object",  # row 7
    ]
    error = rejected(records)
    assert [str(problem) for problem in error.problems] == [
        "row 1, field 'task': expected one of the 8 MedSG-Bench tasks "
        f"({', '.join(TASKS)}), got 'Referring'",
        "row 2, field 'answer': expected [x1, y1, x2, y2], 4 numbers, got a list of 3",
        "row 3, field 'answer': expected [x1, y1, x2, y2], 4 numbers; item 3 is a boolean",
        "row 4, field 'size': expected [width, height], 2 positive numbers; item 0 is 0",
        "row 5, field 'question': missing",
        "row 5, field 'images': expected a non-empty list of image paths, got an empty list",
        "row 6, field 'question': expected a string, got a number (7)",
        "row 6, field 'images': item 1: expected an image path (a string), got a number (3)",
        "row 7: expected an object {task, question, images, answer, size?}, got a string "
        "('not an object')",
    ]
    assert error.total == 9
    assert str(error).startswith("The ground-truth file was rejected (9 problem(s)):")


def test_non_finite_and_huge_numbers_are_named():
    raw = (
        b'[{"task": "patch", "question": "q", "images": ["a"], "answer": [1, 2, NaN, 4]},'
        b' {"task": "patch", "question": "q", "images": ["a"], "answer": [1, 2, 1e400, 4]}]'
    )
    messages = [str(problem) for problem in rejected(raw).problems]
    assert messages[0].startswith("row 0, field 'answer': expected [x1, y1, x2, y2], 4 finite")
    assert "NaN, which is not JSON" in messages[0]
    assert "a number too large to read" in messages[1]


def test_a_repeated_key_is_named():
    raw = b'[{"task": "patch", "task": "patch", "question": "q", "images": ["a"], "answer": [1,2,3,4]}]'
    assert [str(p) for p in rejected(raw).problems] == [
        "row 0, field 'task': appears more than once in this row; JSON objects must not repeat a key"
    ]


def test_file_level_problems():
    assert str(rejected(b"").problems[0]) == (
        "not JSON: the file is empty; expected a JSON list of rows, starting with '['"
    )
    assert str(rejected(b"[]").problems[0]) == "the file holds no items"
    assert "got an object" in str(rejected(b'{"items": []}').problems[0])
    assert "not UTF-8" in str(rejected(b"\xff\xfe[]").problems[0])


def test_a_cut_off_file_is_named_as_such():
    data = json.dumps([item("patch", [1, 2, 3, 4]), item("referring", [5, 6, 7, 8])]).encode()
    cut = data[: data.index(b'"referring"') + 4]

    assert [(problem.row, str(problem)) for problem in rejected(cut).problems] == [
        (
            1,
            "row 1: the file ends early, at byte 143, inside this row (after 1 complete "
            "row): it looks cut off (an interrupted upload or copy); upload the whole file",
        )
    ]


def test_many_problems_are_counted_beyond_the_listed_ones():
    error = rejected([item("nope", [1, 2, 3, 4]) for _ in range(25)])
    assert error.total == 25
    assert len(error.problems) == 10
    assert "... and 15 more problem(s) not listed." in str(error)
