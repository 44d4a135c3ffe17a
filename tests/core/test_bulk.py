"""`core.bulk.insert_rows` stores what the ORM stores, whatever the text holds: COPY's text
format on PostgreSQL (its separators and backslashes escaped, NULL, booleans, doubles, bytes,
date-times), one executemany elsewhere."""

from datetime import UTC, datetime

import pytest

from core.bulk import copy_text, insert_rows
from submissions.models import RunReplicates, Submission
from tests.benchmark.factories import BenchmarkFactory
from tests.submissions.factories import EvaluationFactory

BLANK_TEXT_FIELDS = (
    "model_name_skeleton", "contact_email", "model_url", "paper_url", "code_url", "team_name",
    "authors", "predictions_file", "predictions_sha256", "verification_reason",
)  # fmt: skip
# Every character COPY's text format treats specially, and some it does not.
AWKWARD = 'tab\there, line\nbreak, return\r, back\\slash, \\N, "quotes", ünïcödé, 🙂'


@pytest.mark.unit
def test_copy_text_escapes_the_separators_and_writes_null_booleans_and_numbers():
    rows = [
        (1, None, True, 0.1, "a\tb\\c\nd\re"),
        (-2, 3.0, False, float("nan"), ""),
    ]
    (block,) = copy_text(rows)
    assert block == (
        "1\t\\N\tt\t0.1\ta\\tb\\\\c\\nd\\re\n"  # the string's separators escaped
        "-2\t3.0\tf\tNaN\t\n"  # an empty string is not NULL
    )


@pytest.mark.unit
def test_copy_text_of_a_column_whose_values_change_type_after_the_first():
    # Each column's first value is of one type and a later one of another: converted value
    # by value, as a column of mixed types always was.
    rows = [
        (1, "a\tb", True, 0.5, "x"),
        (None, None, None, 2, 3),
        (3, "c", False, None, "y"),
    ]
    (block,) = copy_text(rows)
    assert block == ("1\ta\\tb\tt\t0.5\tx\n\\N\t\\N\t\\N\t2\t3\n3\tc\tf\t\\N\ty\n")


@pytest.mark.unit
def test_copy_text_writes_bytes_in_bytea_hex_form_and_blocks_of_rows(monkeypatch):
    monkeypatch.setattr("core.bulk.COPY_BLOCK_ROWS", 2)
    blocks = list(copy_text([(b"\x00\\\t",), (b"",), (None,)]))
    assert blocks == ["\\\\x005c09\n\\\\x\n", "\\N\n"]


@pytest.mark.integration
@pytest.mark.django_db
def test_inserted_rows_read_back_as_the_orm_stores_them():
    benchmark = BenchmarkFactory()
    moment = datetime(2026, 12, 1, 23, 4, 5, 678901, tzinfo=UTC)
    facts = {"licence": AWKWARD, "nested": [1, 2.5, None, True, {"\\": "\t"}]}
    columns = {
        "benchmark": benchmark.pk,
        "model_name": AWKWARD,
        "institution": "",
        "model_facts": facts,
        "options": {},
        "publish": True,
        "is_baseline": False,
        "created_at": moment,
        "predictions_size": 7,
        "verification_status": "community",
        "source": "upload",
        "is_challenge_entry": False,
        **dict.fromkeys(BLANK_TEXT_FIELDS, ""),
    }
    insert_rows(Submission, list(columns), [tuple(columns.values())])
    submission = Submission.objects.get(benchmark=benchmark)
    assert (submission.model_name, submission.institution) == (AWKWARD, "")
    assert submission.model_facts == facts
    assert (submission.publish, submission.is_baseline) == (True, False)
    assert (submission.created_at, submission.predictions_size) == (moment, 7)

    run = EvaluationFactory(submission=submission)
    columns = {
        "evaluation": run.pk,
        "test_set_checksum": "0" * 64,
        "replicates": 200,
        "contributions": b"\x00\\\t\n\xff",
        "values": b"",
        "metric_keys": [AWKWARD],
        "intervals": {AWKWARD: None},
        "computed_at": moment,
    }
    insert_rows(RunReplicates, list(columns), [tuple(columns.values())])
    stored = RunReplicates.objects.get(evaluation=run)
    assert bytes(stored.contributions) == b"\x00\\\t\n\xff"
    assert bytes(stored.values) == b""
    assert (stored.metric_keys, stored.intervals) == ([AWKWARD], {AWKWARD: None})
    assert stored.computed_at == moment


@pytest.mark.integration
@pytest.mark.django_db
def test_update_rows_writes_what_bulk_update_writes(monkeypatch):
    """The same changes through `update_rows` and through the ORM's `bulk_update` leave the
    same rows: text with COPY's separators, JSON, booleans, numbers, date-times, a foreign key,
    NULLs (a whole column of them), in batches."""
    from core.bulk import update_rows

    monkeypatch.setattr("core.bulk.UPDATE_BATCH_ROWS", 2)
    benchmark, other = BenchmarkFactory(), BenchmarkFactory()
    moment = datetime(2026, 12, 1, 23, 4, 5, 678901, tzinfo=UTC)
    fields = [
        "benchmark", "model_name", "model_facts", "is_baseline", "predictions_size", "created_at",
        "verification_reason",
    ]  # fmt: skip

    def changed(submissions):
        for index, submission in enumerate(submissions):
            submission.benchmark = other if index % 2 else benchmark
            submission.model_name = f"{AWKWARD} {index}"
            submission.model_facts = {"n": index, "text": AWKWARD, "none": None}
            submission.is_baseline = bool(index % 2)
            submission.predictions_size = 2**31 - 1 - index
            submission.created_at = moment
            submission.verification_reason = "" if index % 3 else "\\N"
        return submissions

    def rows(ids):
        return [tuple(Submission.objects.filter(pk=pk).values_list(*fields).get()) for pk in ids]

    made = [
        EvaluationFactory(submission__benchmark=benchmark, submission__publish=False).submission
        for _ in range(10)
    ]
    by_orm, by_rows = made[:5], made[5:]
    Submission.objects.bulk_update(changed(by_orm), fields)
    update_rows(Submission, changed(by_rows), fields)
    assert rows([s.pk for s in by_rows]) == rows([s.pk for s in by_orm])
    assert rows([by_rows[1].pk])[0][:2] == (other.pk, f"{AWKWARD} 1")
