"""What a predictions file looks like for a benchmark's active test set (issue 13), for the
"Your file" section of Submit and About and the template download: the qa_type strings the
checker accepts (the test set's own, each with the scorer's task and its sample count), an
example row, and the template itself, every `{"id", "qa_type", "prediction": ""}` of the test
set in its order.

Ids and qa_types are public: the official extract script writes them into every predictions
file. Nothing else of the ground truth (questions, answers, targets, frames) leaves here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from benchmark import scoring
from benchmark.models import Benchmark, TestSet
from benchmark.scoring.tasks import route_qa_type
from benchmark.selectors import TestSetFileError, active_testset, load_scoring_testset

logger = logging.getLogger(__name__)

# Bump when the template's bytes change for the same test set: it is part of the ETag.
TEMPLATE_FORMAT = 1
# Rows per chunk of the streamed template (about 60 bytes a row).
TEMPLATE_CHUNK_ROWS = 2_000
EXAMPLE_ROWS = 2
EXAMPLE_PREDICTION = "your model's answer to this sample, as text"


@dataclass(frozen=True)
class QaTypeLine:
    """One qa_type string of the test set: the task the scorer routes it to ("" for a qa_type
    no metric reads), the benchmark's metrics of that task, and how many samples carry it."""

    qa_type: str
    task: str
    metrics: list[str]
    count: int


@dataclass(frozen=True)
class FileFormat:
    test_set: TestSet
    qa_types: list[QaTypeLine]
    example: str  # the first rows of a file, as JSON text ("" if the file cannot be read)

    def qa_types_of(self, task: str) -> list[str]:
        """The qa_type strings whose samples feed `task` (a metric's task)."""
        return [line.qa_type for line in self.qa_types if line.task == task]


def file_format(benchmark: Benchmark) -> FileFormat | None:
    """The format of a predictions file for `benchmark`'s active test set, or None when it has
    none (submissions are closed). The qa_types come from the stored counts; the example's ids
    from the parsed test set (cached per process, `load_scoring_testset`)."""
    test_set = active_testset(benchmark)
    if test_set is None:
        return None
    metrics: dict[str, list[str]] = {}
    for key, task in benchmark.metrics.values_list("key", "task"):
        metrics.setdefault(task, []).append(key)
    lines = []
    for qa_type, count in test_set.qa_type_counts.items():
        task = route_qa_type(qa_type)
        name = task.value if task else ""
        lines.append(QaTypeLine(qa_type, name, metrics.get(name, []), count))
    lines.sort(key=lambda line: (line.task or "~", line.qa_type))
    try:
        samples = load_scoring_testset(test_set).samples[:EXAMPLE_ROWS]
    except TestSetFileError:  # an operator's to fix (logged where uploads fail); About stays up
        logger.exception("The example rows of %s cannot be read", test_set)
        samples = ()
    rows = [_row(sample, EXAMPLE_PREDICTION) for sample in samples]
    example = "[\n" + "".join(f"  {row},\n" for row in rows) + "  ...\n]" if rows else ""
    return FileFormat(test_set=test_set, qa_types=lines, example=example)


def template_etag(test_set: TestSet) -> str:
    """The template's entity tag (unquoted): the test set's checksum and the format."""
    return f"{test_set.checksum}-t{TEMPLATE_FORMAT}"


def template_filename(benchmark: Benchmark, test_set: TestSet) -> str:
    return f"{benchmark.slug}-v{test_set.version}-predictions-template.json"


def template_chunks(test_set: TestSet) -> Iterator[bytes]:
    """The template as UTF-8 JSON in chunks: a list of every sample's id and qa_type in the test
    set's order, each with an empty prediction, one row a line. It loads as a valid file's
    rows do, and a file written by filling in the predictions passes the row checks."""
    samples = load_scoring_testset(test_set).samples
    yield b"["
    for start in range(0, len(samples), TEMPLATE_CHUNK_ROWS):
        chunk = samples[start : start + TEMPLATE_CHUNK_ROWS]
        lead = "\n" if start == 0 else ",\n"
        yield (lead + ",\n".join(_row(sample, "") for sample in chunk)).encode()
    yield b"\n]\n"


def _row(sample: scoring.Sample, prediction: str) -> str:
    return json.dumps(
        {"id": sample.id, "qa_type": sample.qa_type, "prediction": prediction},
        ensure_ascii=False,
    )
