"""Loading the private ground-truth file in the official SFT-style format (spec 1).

The file is read once, validated record by record, and turned into `Sample`s whose
`target` holds the structured reference answer each metric needs. A malformed
record is rejected with its index and the field at fault; nothing is half-loaded.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

from benchmark.scoring.collector import collector_paused
from benchmark.scoring.errors import GroundTruthError, Problem
from benchmark.scoring.json_file import syntax_problem

from .parsers import CVS_COMPONENTS, has_skill_score, parse_cvs, parse_skill_aspects
from .tasks import Task, route_qa_type

HUMAN_ROLES = ("human", "user")
ANSWER_ROLES = ("gpt", "assistant")
ID_FIELDS = ("video_id", "input_video_start_frame", "input_video_end_frame", "fps")


@dataclass(frozen=True, slots=True)
class TalTarget:
    spans: tuple[tuple[float, float], ...]  # seconds, all items' spans pooled


@dataclass(frozen=True, slots=True)
class StgTarget:
    # (timestamp key as written, box); a box that is not 4 numbers is kept as None.
    boxes: tuple[tuple[str, tuple[float, float, float, float] | None], ...]


@dataclass(frozen=True, slots=True)
class CaptionSegment:
    start: float
    end: float
    caption: str


@dataclass(frozen=True, slots=True)
class DenseCaptionTarget:
    segments: tuple[CaptionSegment, ...]


@dataclass(frozen=True, slots=True)
class CvsTarget:
    components: dict[str, int]


@dataclass(frozen=True, slots=True)
class SkillTarget:
    # The official scorer skips a sample whose reference skill level cannot be read.
    level_known: bool
    aspects: dict[str, int]


Target = TalTarget | StgTarget | DenseCaptionTarget | CvsTarget | SkillTarget | None


@dataclass(frozen=True, slots=True)
class Sample:
    index: int
    id: str
    qa_type: str
    task: Task | None
    dataset: str
    question: str
    reference: str
    fps: float
    target: Target = None
    # The record's frame paths (its `video` list), relative to the frames root; () if absent.
    frames: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestSet:
    """The samples of one ground-truth file, in file order (the order is the contract)."""

    __test__ = False  # not a pytest test class, despite the name

    samples: tuple[Sample, ...]
    checksum: str
    qa_type_counts: dict[str, int] = field(default_factory=dict)
    dataset_counts: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.samples)

    def task_counts(self) -> dict[str, int]:
        counts = Counter(sample.task.value for sample in self.samples if sample.task)
        return dict(sorted(counts.items()))


class _RecordError(Exception):
    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field_name = field_name
        self.message = message


def load_ground_truth(source: bytes | str | Path | list[Any]) -> TestSet:
    """Parse and validate a ground-truth file (a path, its bytes, or the decoded list).

    Raises `GroundTruthError` listing every malformed record (index and field). The cyclic
    garbage collector is paused meanwhile: the records are acyclic (benchmark.scoring.collector).
    """
    with collector_paused():
        return _load_ground_truth(source)


def _load_ground_truth(source: bytes | str | Path | list[Any]) -> TestSet:
    raw: bytes | None = None
    if isinstance(source, Path | str):
        path = Path(source)
        try:
            raw = path.read_bytes()
        except OSError as error:
            raise GroundTruthError([Problem(f"cannot read {path}: {error.strerror}")]) from None
    elif isinstance(source, bytes):
        raw = source
    if raw is not None:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise GroundTruthError([Problem(f"not valid JSON: {error}")]) from None
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            raise GroundTruthError([syntax_problem(error, text, raw)]) from None
        checksum = hashlib.sha256(raw).hexdigest()
    else:
        records = source
        checksum = hashlib.sha256(
            json.dumps(records, sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()
    if not isinstance(records, list):
        raise GroundTruthError(
            [Problem(f"expected a JSON list of records, got {_json_type(records)}")]
        )
    if not records:
        raise GroundTruthError([Problem("the file holds no records")])

    samples: list[Sample] = []
    problems: list[Problem] = []
    for index, record in enumerate(records):
        try:
            samples.append(_load_record(index, record))
        except _RecordError as error:
            problems.append(Problem(error.message, row=index, field=error.field_name))
    if problems:
        raise GroundTruthError(problems)
    return TestSet(
        samples=tuple(samples),
        checksum=checksum,
        qa_type_counts=dict(Counter(sample.qa_type for sample in samples)),
        dataset_counts=dict(Counter(sample.dataset for sample in samples)),
    )


def _load_record(index: int, record: Any) -> Sample:
    if not isinstance(record, dict):
        raise _RecordError("", f"expected a JSON object, got {_json_type(record)}")
    qa_type = record.get("qa_type")
    if not isinstance(qa_type, str) or not qa_type:
        raise _RecordError("qa_type", "expected a non-empty string")
    task = route_qa_type(qa_type)
    if task is None:
        raise _RecordError("qa_type", f"unknown qa_type {qa_type!r}: no MedVidBench task reads it")
    question, reference = _conversation(record.get("conversations"))
    sample_id, fps = _identity(record.get("metadata"))
    return Sample(
        index=index,
        id=sample_id,
        qa_type=qa_type,
        task=task,
        dataset=_dataset(record),
        question=question,
        reference=reference,
        fps=fps,
        target=_target(task, record, reference),
        frames=_frames(record.get("video")),
    )


def _frames(video: Any) -> tuple[str, ...]:
    """The frame paths when `video` is a list of strings, else () (the scorer never reads
    them; the re-run of a model sends them)."""
    # map() runs the checks in C: a record has ~17 frames, the file ~100,000.
    if isinstance(video, list) and all(map(isinstance, video, repeat(str))):
        return tuple(video)
    return ()


def _conversation(conversations: Any) -> tuple[str, str]:
    """The last human turn (without <video> markers) and the last answer turn."""
    if not isinstance(conversations, list) or not conversations:
        raise _RecordError("conversations", "expected a non-empty list of turns")
    question = reference = None
    for position, turn in enumerate(conversations):
        if not isinstance(turn, dict) or not isinstance(turn.get("value", ""), str):
            raise _RecordError(
                f"conversations[{position}]", "expected an object with 'from' and a string 'value'"
            )
        role = turn.get("from")
        if role in HUMAN_ROLES:
            question = turn.get("value", "").replace("<video>\n", "").replace("<video>", "")
        elif role in ANSWER_ROLES:
            reference = turn.get("value", "")
    if reference is None:
        raise _RecordError(
            "conversations", "no 'gpt' or 'assistant' turn holds the reference answer"
        )
    return question or "", reference


def _identity(metadata: Any) -> tuple[str, float]:
    """The public sample id (from the raw metadata strings) and the fps as a number."""
    if not isinstance(metadata, dict):
        raise _RecordError("metadata", "expected an object with video_id, frames and fps")
    parts = []
    for name in ID_FIELDS:
        value = metadata.get(name)
        if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
            raise _RecordError(f"metadata.{name}", "expected a non-empty string or number")
        parts.append(str(value))
    try:
        fps = float(metadata["fps"])
    except ValueError:
        raise _RecordError("metadata.fps", f"expected a number, got {metadata['fps']!r}") from None
    if not math.isfinite(fps) or fps <= 0:
        raise _RecordError("metadata.fps", f"expected a positive number, got {metadata['fps']!r}")
    return "&&".join(parts), fps


def _dataset(record: dict[str, Any]) -> str:
    for name in ("data_source", "dataset_name"):
        value = record.get(name)
        if isinstance(value, str) and value and value != "Unknown":
            return value
    raise _RecordError(
        "data_source", "expected the source dataset in 'data_source' or 'dataset_name'"
    )


def _target(task: Task, record: dict[str, Any], reference: str) -> Target:
    struc_info = record.get("struc_info", [])
    match task:
        case Task.TAL:
            return _tal_target(struc_info)
        case Task.STG:
            return _stg_target(struc_info)
        case Task.DENSE_CAPTIONING:
            return _dense_caption_target(struc_info)
        case Task.CVS_ASSESSMENT:
            return _cvs_target(struc_info, reference)
        case Task.SKILL_ASSESSMENT:
            return _skill_target(struc_info, reference)
    return None


def _number(value: Any, field_name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _RecordError(field_name, f"expected a number, got {value!r}")
    return float(value)


def _tal_target(struc_info: Any) -> TalTarget:
    if not isinstance(struc_info, list):
        raise _RecordError("struc_info", "expected a list of items with 'spans' for a tal sample")
    spans = []
    for position, item in enumerate(struc_info):
        if not isinstance(item, dict) or "spans" not in item:
            continue
        where = f"struc_info[{position}].spans"
        if not isinstance(item["spans"], list):
            raise _RecordError(where, "expected a list of {start, end}")
        for number, span in enumerate(item["spans"]):
            if not isinstance(span, dict):
                raise _RecordError(f"{where}[{number}]", "expected an object {start, end}")
            start = _number(span.get("start"), f"{where}[{number}].start")
            end = _number(span.get("end"), f"{where}[{number}].end")
            spans.append((start, end))
    return TalTarget(spans=tuple(spans))


def _stg_box_dict(struc_info: Any) -> dict[str, Any]:
    """Where the box dict lives: struc_info[0].bbox_dict, struc_info[0], or struc_info."""
    if isinstance(struc_info, list) and struc_info:
        first = struc_info[0]
        boxes = first["bbox_dict"] if isinstance(first, dict) and "bbox_dict" in first else first
    elif isinstance(struc_info, dict):
        boxes = struc_info.get("bbox_dict", struc_info)
    else:
        boxes = {}
    if not isinstance(boxes, dict):
        raise _RecordError("struc_info", 'expected a box dict {"<seconds>": [x1, y1, x2, y2]}')
    return boxes


def _stg_target(struc_info: Any) -> StgTarget:
    boxes = []
    for key, box in _stg_box_dict(struc_info).items():
        try:
            float(key)
        except ValueError:
            raise _RecordError(
                f"struc_info.bbox_dict[{key!r}]", "timestamp keys must be numbers"
            ) from None
        valid = (
            isinstance(box, list)
            and len(box) == 4
            and all(isinstance(v, int | float) and math.isfinite(v) for v in box)
        )
        boxes.append((key, tuple(float(v) for v in box) if valid else None))
    return StgTarget(boxes=tuple(boxes))


def _dense_caption_target(struc_info: Any) -> DenseCaptionTarget:
    """Segments from `[[seg, ...]]`, `[{dc_segments: [...]}]` or `[seg, ...]`.

    As in the official code, only objects with start, end and caption count.
    """
    segments: Any = struc_info
    if isinstance(struc_info, list) and struc_info:
        first = struc_info[0]
        if isinstance(first, list):
            segments = first
        elif isinstance(first, dict) and "dc_segments" in first:
            segments = first["dc_segments"]
    if not isinstance(segments, list):
        return DenseCaptionTarget(segments=())
    found = []
    for position, segment in enumerate(segments):
        if not (isinstance(segment, dict) and {"start", "end", "caption"} <= segment.keys()):
            continue
        where = f"struc_info segment {position}"
        try:
            start, end = float(segment["start"]), float(segment["end"])
        except (TypeError, ValueError):
            raise _RecordError(where, "start and end must be numbers") from None
        if not (math.isfinite(start) and math.isfinite(end)):
            raise _RecordError(where, "start and end must be finite numbers")
        found.append(CaptionSegment(start, end, str(segment["caption"])))
    return DenseCaptionTarget(segments=tuple(found))


def _first_struc_item(struc_info: Any) -> dict[str, Any]:
    if struc_info in (None, []):
        return {}
    if not isinstance(struc_info, list) or not isinstance(struc_info[0], dict):
        raise _RecordError("struc_info", "expected a list whose first item is an object")
    return struc_info[0]


def _int_scores(scores: Any, field_name: str) -> dict[str, int]:
    if not isinstance(scores, dict):
        raise _RecordError(field_name, "expected an object of integer scores")
    for name, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise _RecordError(f"{field_name}.{name}", f"expected an integer score, got {value!r}")
    return dict(scores)


def _cvs_target(struc_info: Any, reference: str) -> CvsTarget:
    scores = _int_scores(
        _first_struc_item(struc_info).get("cvs_scores", {}), "struc_info[0].cvs_scores"
    )
    components = {name: value for name, value in scores.items() if name in CVS_COMPONENTS}
    return CvsTarget(components=components or parse_cvs(reference))


def _skill_target(struc_info: Any, reference: str) -> SkillTarget:
    item = _first_struc_item(struc_info)
    level = item.get("skill_level", "")
    if not isinstance(level, str):
        raise _RecordError("struc_info[0].skill_level", f"expected a string, got {level!r}")
    aspects = _int_scores(item.get("skill_scores", {}), "struc_info[0].skill_scores")
    return SkillTarget(
        level_known=bool(level.strip()) or has_skill_score(reference),
        aspects=aspects or parse_skill_aspects(reference),
    )


def _json_type(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
