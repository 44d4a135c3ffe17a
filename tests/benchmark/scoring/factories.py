"""Builders for small ground-truth files and submissions in the official format."""

from __future__ import annotations

import itertools
from typing import Any

from plugins.medvidbench.scoring import TestSet, load_ground_truth
from plugins.medvidbench.scoring.ground_truth import Sample

_clip_numbers = itertools.count()


def gt_record(
    qa_type: str,
    answer: str,
    struc_info: Any = None,
    *,
    dataset: str = "AVOS",
    question: str = "What happens in the video?",
    fps: str = "1.0",
    video_id: str | None = None,
) -> dict[str, Any]:
    """One record as the maintainers' private file holds it."""
    return {
        "id": "unused",
        "conversations": [
            {"from": "human", "value": f"<video>\n{question}"},
            {"from": "gpt", "value": answer},
        ],
        "video": ["frame_0001.jpg"],
        "metadata": {
            "video_id": video_id or f"clip{next(_clip_numbers)}",
            "input_video_start_frame": "0",
            "input_video_end_frame": "300",
            "fps": fps,
        },
        "qa_type": qa_type,
        "data_source": dataset,
        "struc_info": [] if struc_info is None else struc_info,
    }


def make_test_set(*records: dict[str, Any]) -> TestSet:
    return load_ground_truth(list(records))


def sample_of(record: dict[str, Any]) -> Sample:
    return make_test_set(record).samples[0]


def rows_for(test_set: TestSet, predictions: list[str]) -> list[dict[str, str]]:
    """A well-formed submission carrying `predictions` in test-set order."""
    return [
        {"id": sample.id, "qa_type": sample.qa_type, "prediction": prediction}
        for sample, prediction in zip(test_set.samples, predictions, strict=True)
    ]
