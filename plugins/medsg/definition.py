"""MedSG-Bench as its maintainers publish it: texts, board columns and submission rules
(spec/medsg.md; the seed's card for the texts). `setup_benchmarks` creates it from here."""

from __future__ import annotations

from benchmark.definitions import BenchmarkDefinition, MetricDefinition
from benchmark.enums import RankingMethod

from .scoring import TASKS

TASK_LABELS = {
    "Registered_Diff": "Registered difference",
    "Non_Registered_Diff": "Non-registered difference",
    "multi_view": "Multi-view",
    "object_tracking": "Object tracking",
    "concept": "Concept",
    "patch": "Patch",
    "crossmodal": "Cross-modal",
    "referring": "Referring",
}

OVERALL_METRICS = (
    MetricDefinition(
        key="IoU",
        label="Mean IoU (average over the 8 tasks)",
        task="overall",
        description=(
            "Each item's IoU between the predicted and the reference box (plain xyxy, no +1 "
            "pixel; 0 for no box or no overlap), averaged per task, then the unweighted mean "
            "over the tasks: the paper's average column."
        ),
    ),
    MetricDefinition(
        key="ACC@0.5",
        label="ACC@0.5 (average over the 8 tasks)",
        task="overall",
        description=(
            "The share of items whose IoU is at least 0.5, per task, then the unweighted mean "
            "over the tasks."
        ),
    ),
    MetricDefinition(
        key="IoU_items",
        label="Mean IoU over all items",
        task="overall",
        description="Each item's IoU averaged over all items (tasks weighted by their size).",
    ),
    MetricDefinition(
        key="ACC@0.5_items",
        label="ACC@0.5 over all items",
        task="overall",
        description="The share of all items whose IoU is at least 0.5.",
    ),
)
TASK_METRICS = tuple(
    MetricDefinition(
        key=f"IoU_{task}",
        label=f"{TASK_LABELS[task]}: mean IoU",
        task=task,
        description=f"Mean IoU over the {TASK_LABELS[task].lower()} items.",
    )
    for task in TASKS
)

ABOUT = """\
MedSG-Bench evaluates sequential visual grounding in medical imaging: given 2 to 6 medical \
images (10 modalities, all resized to 336x336) and a question, a model answers with one \
bounding box. It tests cross-image semantic alignment, differences between sequential scans \
and regions consistent across images.

Test set

- Items: 9,630 (test split), CC-BY-4.0
- Image difference tasks: Registered_Diff, Non_Registered_Diff
- Image consistency tasks: multi_view, object_tracking, concept, patch, crossmodal, referring

The ground truth is private: submissions carry predictions only, and are scored on the server.

Metrics (higher is better)

- Mean IoU: IoU between the predicted and the reference box (plain xyxy, no +1 pixel), averaged \
per task, then the unweighted mean over the 8 tasks (the paper's average). Ranked first.
- ACC@0.5: the share of items with an IoU of at least 0.5, averaged the same way. Ranked second.
- The item-weighted means (over all 9,630 items) are shown beside them, and each task's mean IoU.
- Values are fractions; the paper reports percentages (72.55 is 0.7255 here).

Zero-shot protocol

Evaluations are strictly zero-shot: no in-context examples and no fine-tuning on the \
benchmark. Every submission declares it.
"""

CITATION = """\
@misc{yue2025medsgbench,
  title  = {{MedSG-Bench}: A Benchmark for Medical Image Sequences Grounding},
  author = {Yue, Jingkun and others},
  year   = {2025},
  note   = {arXiv:2505.11852}
}
"""

LICENCE = """\
Dataset: CC-BY-4.0
"""

MEDSG = BenchmarkDefinition(
    slug="medsg-bench",
    name="MedSG-Bench",
    description=(
        "Grounding in medical image sequences: one bounding box from 2-6 images and a "
        "question; 8 tasks, 9,630 test items."
    ),
    about=ABOUT,
    citation=CITATION,
    licence=LICENCE,
    metrics=OVERALL_METRICS + TASK_METRICS,
    # A box file is small: 9,630 short answers.
    max_upload_mb=20,
    max_prediction_chars=4_000,
    verification_tolerance=0.01,
    plugin="medsg-bench",
    # spec/medsg.md and issue 14: by mean IoU, then ACC@0.5 (the paper's two averages).
    ranking_method=RankingMethod.LEXICOGRAPHIC,
    ranking_order=("IoU", "ACC@0.5"),
)
