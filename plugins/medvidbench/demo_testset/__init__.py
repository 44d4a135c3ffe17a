"""A synthetic MedVidBench test set, and submissions against it, for demos and tests.

The real ground truth is private, yet the importer, the scorer and the demo board need a file that
looks exactly like it (spec 1): the same record shape, the same 6,245 qa_type counts, the same eight
source datasets, metadata as strings, ids that repeat because one clip carries several questions,
and the scorer's quirky corners (integer-like and two-decimal STG keys, alternative struc_info
shapes, empty CVS scores, CoPESD legacy labels). Three submissions exercise the scorer the way real
ones do: a perfect one (the reference texts), a noisy fine-tuned model and a prose-writing chat
model that the strict parsers of spec 3 mostly reject.

Pure Python, no Django: everything is drawn from ``random.Random`` seeded with strings, so one seed
always gives byte-identical JSON (no ``hash()``, no set iteration, no clock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plugins.medvidbench.demo_testset.predictions import (
    BROKEN_ANSWERS,
    NOISY,
    PREDICTION_KINDS,
    PROSE,
    PROSE_EVENTS,
    make_predictions,
)
from plugins.medvidbench.demo_testset.testset import (
    BUILDERS,
    Clip,
    Turn,
    build_cvs_assessment,
    build_dense_captioning,
    build_next_action,
    build_region_caption,
    build_skill_assessment,
    build_stg,
    build_tal,
    build_video_summary,
    clip_seconds,
    dense_segments,
    generate_testset,
    named_procedure,
    question_of,
    reference_answer,
    stg_boxes,
    tal_spans,
    task_of,
)
from plugins.medvidbench.demo_testset.vocabulary import (
    CVS_CRITERIA,
    DATASETS,
    DESCRIPTIONS,
    EGOSURGERY_ACTIONS,
    LABELS_PATH,
    MAX_FRAME_PATHS,
    PARAPHRASES,
    PROFILES,
    QA_TYPE_COUNTS,
    QUESTIONS_PER_CLIP,
    REPEATABLE_ON_A_CLIP,
    SKILL_ASPECTS,
    SYNONYMS,
    TASK_PLAN,
    DatasetProfile,
    load_labels,
)

__all__ = [
    "BROKEN_ANSWERS",
    "BUILDERS",
    "CVS_CRITERIA",
    "DATASETS",
    "DEMO_FILENAMES",
    "DESCRIPTIONS",
    "EGOSURGERY_ACTIONS",
    "LABELS_PATH",
    "MAX_FRAME_PATHS",
    "NEW_MODEL",
    "NOISY",
    "PARAPHRASES",
    "PREDICTION_KINDS",
    "PROFILES",
    "PROSE",
    "PROSE_EVENTS",
    "QA_TYPE_COUNTS",
    "QUESTIONS_PER_CLIP",
    "REPEATABLE_ON_A_CLIP",
    "SKILL_ASPECTS",
    "SYNONYMS",
    "TASK_PLAN",
    "Clip",
    "DatasetProfile",
    "Turn",
    "build_cvs_assessment",
    "build_dense_captioning",
    "build_next_action",
    "build_region_caption",
    "build_skill_assessment",
    "build_stg",
    "build_tal",
    "build_video_summary",
    "clip_seconds",
    "dense_segments",
    "generate_testset",
    "load_labels",
    "make_predictions",
    "named_procedure",
    "question_of",
    "reference_answer",
    "stg_boxes",
    "tal_spans",
    "task_of",
    "write_demo_files",
]

# A model no demo entry has (another seed of the noisy model): the file a visitor uploads to try
# the flow. A demo entry's own file uploaded from another account is refused as a copy.
NEW_MODEL = "new"

DEMO_FILENAMES: dict[str, str] = {
    "ground_truth": "ground_truth.json",
    **{kind: f"predictions_{kind}.json" for kind in PREDICTION_KINDS},
    NEW_MODEL: f"predictions_{NEW_MODEL}.json",
}


def write_demo_files(output_dir: Path, seed: int = 0) -> dict[str, Path]:
    """Write the ground truth, the three demo entries' submissions and a new model's
    (``NEW_MODEL``, the file to try the flow with) as JSON files into ``output_dir``.

    Creates the directory if needed and overwrites the files named in ``DEMO_FILENAMES``;
    returns their paths under the same keys.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    records = generate_testset(seed)
    contents: dict[str, Any] = {"ground_truth": records}
    contents.update({kind: make_predictions(records, kind, seed) for kind in PREDICTION_KINDS})
    contents[NEW_MODEL] = make_predictions(records, "noisy", seed + 1)
    paths = {}
    for name, content in contents.items():
        path = output_dir / DEMO_FILENAMES[name]
        with path.open("w", encoding="utf-8") as handle:
            json.dump(content, handle, ensure_ascii=False)
        paths[name] = path
    return paths
