"""Tasks, metric names and how a sample's qa_type routes to its task (spec 1 and 4)."""

from __future__ import annotations

from enum import StrEnum


class Task(StrEnum):
    TAL = "tal"
    STG = "stg"
    NEXT_ACTION = "next_action"
    DENSE_CAPTIONING = "dense_captioning"
    VIDEO_SUMMARY = "video_summary"
    REGION_CAPTION = "region_caption"
    SKILL_ASSESSMENT = "skill_assessment"
    CVS_ASSESSMENT = "cvs_assessment"


# The ten leaderboard metrics, in the official column order (spec 7).
CVS_ACC = "CVS_acc"
NAP_ACC = "NAP_acc"
SA_ACC = "SA_acc"
STG_MIOU = "STG_mIoU"
TAG_MIOU_03 = "TAG_mIoU@0.3"
TAG_MIOU_05 = "TAG_mIoU@0.5"
DVC_F1 = "DVC_F1"
DVC_LLM = "DVC_llm"
VS_LLM = "VS_llm"
RC_LLM = "RC_llm"

METRIC_NAMES: tuple[str, ...] = (
    CVS_ACC,
    NAP_ACC,
    SA_ACC,
    STG_MIOU,
    TAG_MIOU_03,
    TAG_MIOU_05,
    DVC_F1,
    DVC_LLM,
    VS_LLM,
    RC_LLM,
)
AUTOMATIC_METRICS: tuple[str, ...] = METRIC_NAMES[:7]
JUDGE_METRICS: tuple[str, ...] = METRIC_NAMES[7:]

METRIC_TASK: dict[str, Task] = {
    CVS_ACC: Task.CVS_ASSESSMENT,
    NAP_ACC: Task.NEXT_ACTION,
    SA_ACC: Task.SKILL_ASSESSMENT,
    STG_MIOU: Task.STG,
    TAG_MIOU_03: Task.TAL,
    TAG_MIOU_05: Task.TAL,
    DVC_F1: Task.DENSE_CAPTIONING,
    DVC_LLM: Task.DENSE_CAPTIONING,
    VS_LLM: Task.VIDEO_SUMMARY,
    RC_LLM: Task.REGION_CAPTION,
}


def route_qa_type(qa_type: str) -> Task | None:
    """The task a qa_type belongs to, or None for a qa_type no metric reads.

    The official scripts route by substring (the `_gpt` / `_gemini` suffix only
    names the caption author), except skill and CVS assessment, which need
    equality. The order of the checks follows the scripts' own precedence.
    """
    lowered = qa_type.lower()
    if qa_type == Task.SKILL_ASSESSMENT:
        return Task.SKILL_ASSESSMENT
    if qa_type == Task.CVS_ASSESSMENT:
        return Task.CVS_ASSESSMENT
    if any(marker in lowered for marker in ("dense_captioning", "dense_caption", "dc")):
        return Task.DENSE_CAPTIONING
    if "tal" in lowered:
        return Task.TAL
    if "stg" in lowered:
        return Task.STG
    if "next_action" in lowered:
        return Task.NEXT_ACTION
    if "video_summary" in qa_type:
        return Task.VIDEO_SUMMARY
    if "region_caption" in qa_type:
        return Task.REGION_CAPTION
    return None
