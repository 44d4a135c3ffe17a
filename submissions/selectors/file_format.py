"""What a predictions file looks like for a benchmark's active test set (issue 13), for the
"Your file" section of Submit and About and the template download: the benchmark plugin's
guide (`FileGuide`: what a row holds, how rows are matched, a table such as MedVidBench's
qa_type strings), example rows, and the template itself, every row of a file with its
prediction empty (`template_rows`).

A template row holds only what every predictions file carries (MedVidBench's ids and
qa_types, MedSG-Bench's indexes and tasks). Nothing else of the ground truth (questions,
answers, targets, frames, images) leaves here.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from benchmark.models import Benchmark, TestSet
from benchmark.plugins import FileGuide, plugin_for
from benchmark.selectors import TestSetFileError, active_testset, load_scoring_testset

logger = logging.getLogger(__name__)

# Bump when the template's bytes change for the same test set: it is part of the ETag.
TEMPLATE_FORMAT = 1
# Rows per chunk of the streamed template (about 60 bytes a row).
TEMPLATE_CHUNK_ROWS = 2_000
EXAMPLE_ROWS = 2
# "sample" or "item": the benchmark's word (`Benchmark.wording`).
EXAMPLE_PREDICTION = "your model's answer to this {item}, as text"


def row_fields(benchmark: Benchmark) -> tuple[str, ...]:
    """The fields of one row of a predictions file for the active test set, in order (the
    template's first row: MedVidBench's id, qa_type, prediction; MedSG-Bench's index, task,
    prediction), or () when there is no readable active test set."""
    test_set = active_testset(benchmark)
    if test_set is None:
        return ()
    try:
        parsed = load_scoring_testset(test_set)
    except TestSetFileError:
        logger.exception("The rows of %s cannot be read", test_set)
        return ()
    first = next(iter(plugin_for(benchmark).template_rows(parsed)), None)
    return tuple(first) if first else ()


@dataclass(frozen=True)
class FileFormat:
    test_set: TestSet
    guide: FileGuide
    example: str  # the first rows of a file, as JSON text ("" if the file cannot be read)


def file_format(benchmark: Benchmark) -> FileFormat | None:
    """The format of a predictions file for `benchmark`'s active test set, or None when it has
    none (submissions are closed): the plugin's guide (`file_guide`) and the first rows of its
    template with an example answer. The guide's counts come from the stored test set, the
    rows from the parsed one (cached per process, `load_scoring_testset`)."""
    test_set = active_testset(benchmark)
    if test_set is None:
        return None
    plugin = plugin_for(benchmark)
    metrics: dict[str, list[str]] = {}
    for key, task in benchmark.metrics.values_list("key", "task"):
        metrics.setdefault(task, []).append(key)
    counts = {
        "records": test_set.record_count,
        "qa_type_counts": test_set.qa_type_counts,
        "task_counts": test_set.task_counts,
        "metrics_by_task": metrics,
    }
    example = ""
    try:
        parsed = load_scoring_testset(test_set)
    except TestSetFileError:  # an operator's to fix (logged where uploads fail); About stays up
        logger.exception("The example rows of %s cannot be read", test_set)
    else:
        # A template row's empty fields are the submitter's to fill in (MedVidBench's and
        # MedSG-Bench's "prediction", another benchmark's own name for its answer).
        rows = [
            _row(
                {
                    key: EXAMPLE_PREDICTION.format(item=benchmark.wording.item)
                    if value == ""
                    else value
                    for key, value in row.items()
                }
            )
            for row in itertools.islice(plugin.template_rows(parsed), EXAMPLE_ROWS)
        ]
        example = "[\n" + "".join(f"  {row},\n" for row in rows) + "  ...\n]" if rows else ""
    return FileFormat(test_set=test_set, guide=plugin.file_guide(counts), example=example)


def template_etag(test_set: TestSet) -> str:
    """The template's entity tag (unquoted): the test set's checksum and the format."""
    return f"{test_set.checksum}-t{TEMPLATE_FORMAT}"


def template_filename(benchmark: Benchmark, test_set: TestSet) -> str:
    return f"{benchmark.slug}-v{test_set.version}-predictions-template.json"


def template_chunks(test_set: TestSet) -> Iterator[bytes]:
    """The template as UTF-8 JSON in chunks: every row of a file for the test set in its
    order (the plugin's `template_rows`), each with an empty prediction, one row a line. It
    loads as a valid file's rows do, and a file written by filling in the predictions passes
    the row checks."""
    rows = plugin_for(test_set.benchmark).template_rows(load_scoring_testset(test_set))
    yield b"["
    lead = "\n"
    while chunk := list(itertools.islice(rows, TEMPLATE_CHUNK_ROWS)):
        yield (lead + ",\n".join(_row(row) for row in chunk)).encode()
        lead = ",\n"
    yield b"\n]\n"


def _row(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False)
