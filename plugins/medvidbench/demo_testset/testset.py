"""The synthetic ground truth: clips, one question builder per task, the 6,245 records, and the
helpers that read a record back (reference answer, spans, boxes, segments)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from plugins.medvidbench.demo_testset.vocabulary import (
    CVS_CRITERIA,
    DATASETS,
    DESCRIPTIONS,
    EGOSURGERY_ACTIONS,
    MAX_FRAME_PATHS,
    PROFILES,
    QUESTIONS_PER_CLIP,
    REPEATABLE_ON_A_CLIP,
    SKILL_ASPECTS,
    TASK_PLAN,
    DatasetProfile,
    load_labels,
)

# --------------------------------------------------------------------------- clips


@dataclass
class Clip:
    """One video clip; several questions share it and therefore share its id."""

    dataset: str
    video_id: str
    start_frame: int
    end_frame: int
    fps: str
    size: tuple[int, int]
    procedure: str | None = None
    used: list[str] = field(default_factory=list)  # labels/objects already asked about

    @property
    def profile(self) -> DatasetProfile:
        return PROFILES[self.dataset]

    @property
    def duration(self) -> float:
        return (self.end_frame - self.start_frame) / self.profile.native_fps

    @property
    def step(self) -> float:
        """Time grid of answers: the sampled frames, but never finer than half a second."""
        return {"0.5": 2.0, "1.0": 1.0}.get(self.fps, 0.5)

    @property
    def sample_id(self) -> str:
        # spec 1: built from the raw metadata strings.
        return f"{self.video_id}&&{self.start_frame}&&{self.end_frame}&&{self.fps}"

    def metadata(self) -> dict[str, str]:
        return {
            "video_id": self.video_id,
            "input_video_start_frame": str(self.start_frame),
            "input_video_end_frame": str(self.end_frame),
            "fps": self.fps,
        }

    def frame_paths(self) -> list[str]:
        count = max(1, int(self.duration * float(self.fps)))
        picks = [round(i * (count - 1) / (MAX_FRAME_PATHS - 1)) for i in range(MAX_FRAME_PATHS)]
        indices = sorted(dict.fromkeys(picks)) if count > MAX_FRAME_PATHS else range(count)
        per_sample = self.profile.native_fps / float(self.fps)
        return [
            f"{self.dataset}/{self.video_id}/{self.start_frame + round(i * per_sample):06d}.jpg"
            for i in indices
        ]

    def grid(self) -> list[float]:
        """Answer times on the clip's grid, from 0 to the clip's end."""
        return [i * self.step for i in range(int(self.duration / self.step) + 1)]


def _video_ids(rng: random.Random, dataset: str) -> list[str]:
    """A plausible pool of source videos: YouTube ids, VIDnn, video-parts, JIGSAWS trials."""
    if dataset in ("AVOS", "NurViD"):
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        return ["".join(rng.choice(alphabet) for _ in range(11)) for _ in range(49 * 2)]
    if dataset == "CholecT50":
        return [f"VID{n}" for n in (92, 96, 103, 110, 111)]
    if dataset == "CholecTrack20":
        return [f"VID{n:02d}" for n in (6, 12, 25, 29, 50, 68)]
    if dataset == "Cholec80_CVS":
        return [f"video{n:02d}" for n in range(61, 81)]
    if dataset == "CoPESD":
        return [f"{n:02d}_part{p}" for n in (3, 7, 11, 19) for p in (1, 2, 3)]
    if dataset == "EgoSurgery":
        return [f"{n:02d}_{p}" for n in (2, 5, 9, 14, 17) for p in (1, 2)]
    return [f"{task}_{who}{trial:03d}" for task in ("Suturing", "Knot_Tying", "Needle_Passing")
            for who in "BCDEFGHI" for trial in (1, 3, 5)]  # fmt: skip


def _make_clip(rng: random.Random, dataset: str, video_id: str, procedure: str | None) -> Clip:
    profile = PROFILES[dataset]
    fps = rng.choices([f for f, _ in profile.sample_fps], [w for _, w in profile.sample_fps])[0]
    low, high = profile.seconds
    seconds = rng.randint(4, 20) if float(fps) >= 4 else rng.randint(low, high)
    start = rng.randrange(0, 60 * 60) * int(profile.native_fps) + rng.randrange(25)
    end = start + round(seconds * profile.native_fps) - 1
    return Clip(dataset, video_id, start, end, fps, rng.choice(profile.frame_sizes), procedure)


def _group_questions(rng: random.Random, qa_types: list[str]) -> list[list[str]]:
    """Deal a dataset's questions out to clips, a few per clip, without repeating a task twice."""
    groups, pending = [], list(qa_types)
    while pending:
        size, group, rest = rng.choice(QUESTIONS_PER_CLIP), [], []
        for qa_type in pending:
            fits = qa_type in REPEATABLE_ON_A_CLIP or qa_type not in group
            (group if fits and len(group) < size else rest).append(qa_type)
        groups.append(group)
        pending = rest
    return groups


# --------------------------------------------------------------------------- text helpers


def _num(value: float) -> str:
    """A box coordinate as the reference texts print it (``445``, ``261.2``, ``235.08``)."""
    return str(value)


def _box_text(box: list[float]) -> str:
    return "[" + ", ".join(_num(v) for v in box) + "]"


def _spans_text(spans: list[tuple[float, float]]) -> str:
    return ", ".join(f"{s:.1f}-{e:.1f}" for s, e in spans) + " seconds."


def _events_text(segments: list[dict[str, Any]]) -> str:
    return "\n".join(f"{s['start']:.1f}-{s['end']:.1f} seconds: {s['caption']}" for s in segments)


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def _labels_for(clip: Clip) -> list[str]:
    labels = load_labels()
    if clip.dataset == "NurViD":
        return list(labels["NurViD_by_procedure"][clip.procedure])
    if clip.dataset in ("AVOS", "CholecT50", "CoPESD"):
        return list(labels[clip.dataset])
    return list(EGOSURGERY_ACTIONS)


def _describe(rng: random.Random, clip: Clip, label: str) -> str:
    if label in DESCRIPTIONS:
        return rng.choice(DESCRIPTIONS[label])
    procedure = (clip.procedure or "").lower()
    return rng.choice((
        f"the nurse carries out the step '{label.lower()}' during the {procedure}",
        f"the nurse focuses on '{label.lower()}' at the bedside",
        f"'{label.lower()}' is performed carefully, following the {procedure} checklist",
    ))  # fmt: skip


def _caption(rng: random.Random, clip: Clip, label: str, writer: str) -> str:
    """A dense-captioning event text, ``label: description``, in the writing model's style."""
    text = _sentence(_describe(rng, clip, label))
    if writer == "gemini":
        text = text[:-1] + f", with the {rng.choice(clip.profile.objects)} visible in the field."
    return f"{label}: {text}"


def _pick_unused(rng: random.Random, clip: Clip, options: list[str] | tuple[str, ...]) -> str:
    fresh = [o for o in options if o not in clip.used] or list(options)
    choice = rng.choice(fresh)
    clip.used.append(choice)
    return choice


def _pick_spans(rng: random.Random, clip: Clip, count: int) -> list[tuple[float, float]]:
    """Up to ``count`` disjoint, ordered spans on the clip's grid."""
    grid = clip.grid()
    cuts = sorted(rng.sample(range(len(grid)), min(len(grid), 2 * count)))
    spans = [(grid[cuts[i]], grid[cuts[i + 1]]) for i in range(0, len(cuts) - 1, 2)]
    return [(s, e) for s, e in spans if e > s] or [(grid[0], grid[-1])]


# --------------------------------------------------------------------------- one builder per task

Turn = tuple[str, str, Any, dict[str, Any]]  # question, reference answer, struc_info, extra fields


def _procedure_phrase(clip: Clip) -> str:
    return f" of the nursing procedure '{clip.procedure}'" if clip.procedure else ""


def build_tal(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    label = _pick_unused(rng, clip, _labels_for(clip))
    spans = _pick_spans(rng, clip, rng.choice((1, 1, 1, 2, 2, 3)))
    question = rng.choice((
        f"Localize all time segments in this video{_procedure_phrase(clip)} where the action "
        f"'{label}' happens. Answer with start-end times in seconds.",
        f"When does '{label}' take place in the video? Give every time span in seconds.",
    ))  # fmt: skip
    as_dicts = [{"start": s, "end": e} for s, e in spans]
    if len(spans) > 1 and rng.random() < 0.15:  # some records split a label over several items
        struc = [{"label": label, "spans": [span]} for span in as_dicts]
    else:
        struc = [{"action": label, "spans": as_dicts}]
    return question, _spans_text(spans), struc, {}


def _stg_keys(rng: random.Random, clip: Clip) -> list[str]:
    """Timestamps of an STG question, including the official scorer's two key quirks."""
    count = rng.choice((1, 2, 3, 3, 4, 5, 6))
    every = clip.step * rng.choice((1, 1, 2, 3))
    starts = [t for t in clip.grid() if t + every * (count - 1) <= clip.duration]
    while not starts:  # a short clip: ask about fewer times
        count -= 1
        starts = [t for t in clip.grid() if t + every * (count - 1) <= clip.duration]
    start = rng.choice(starts)
    times = [start + i * every for i in range(count)]
    roll = rng.random()
    if float(clip.fps) >= 4 and roll < 0.5:  # sub-second sampling written with 2 decimals
        offset = rng.choice((0.25, 0.75))
        return [f"{t + offset:.2f}" for t in times if t + offset <= clip.duration] or ["0.25"]
    if roll < 0.06:  # integer-like keys ("3"): miss in the [[...]] fallback (spec 1)
        return [str(round(t)) for t in dict.fromkeys(round(t) for t in times)]
    return [f"{t:.1f}" for t in times]


def _track(rng: random.Random, clip: Clip, count: int) -> list[list[float]]:
    """A box drifting smoothly through the frame, in absolute pixels."""
    width, height = clip.size
    w, h = rng.uniform(0.1, 0.45) * width, rng.uniform(0.1, 0.5) * height
    x, y = rng.uniform(0, width - w), rng.uniform(0, height - h)
    boxes = []
    for _ in range(count):
        x = min(max(0.0, x + rng.uniform(-0.04, 0.04) * width), width - w)
        y = min(max(0.0, y + rng.uniform(-0.04, 0.04) * height), height - h)
        box = [x, y, x + w, y + h]
        boxes.append([round(v) if clip.profile.integer_boxes else round(v, 2) for v in box])
    return boxes


def build_stg(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    obj = _pick_unused(rng, clip, clip.profile.objects)
    keys = _stg_keys(rng, clip)
    boxes = dict(zip(keys, _track(rng, clip, len(keys)), strict=True))
    if len(keys) == 1:
        question = f"Where is the {obj} at {keys[0]} seconds? Give its bounding box."
    else:
        question = (
            f"Track the {obj} from {keys[0]} to {keys[-1]} seconds, giving its bounding box "
            f"[x1, y1, x2, y2] in pixels at each of these times: {', '.join(keys)} seconds."
        )
    answer = " ".join(f"{k} seconds: {_box_text(b)}" for k, b in boxes.items())
    shape = rng.random()
    if shape < 0.012:
        struc: Any = {"bbox_dict": boxes}  # a dict struc_info
    elif shape < 0.03:
        struc = [boxes]  # struc_info[0] is itself the box dict
    else:
        struc = [{"bbox_dict": boxes}]
    return question, answer, struc, {}


def _segments(rng: random.Random, clip: Clip, writer: str) -> list[dict[str, Any]]:
    """Consecutive events covering the clip, with their ``label: description`` captions."""
    grid, labels = clip.grid(), _labels_for(clip)
    count = min(rng.randint(2, 6), max(1, len(grid) // 3))
    cuts = [0, *sorted(rng.sample(range(2, len(grid) - 1), count - 1)), len(grid) - 1]
    first = rng.randrange(len(labels))
    names = [labels[(first + i) % len(labels)] for i in range(count)]  # in procedure order
    return [
        {"start": grid[a], "end": grid[b], "caption": _caption(rng, clip, name, writer)}
        for name, (a, b) in zip(names, pairwise(cuts), strict=True)
    ]


def build_dense_captioning(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    segments = _segments(rng, clip, qa_type.rsplit("_", 1)[-1])
    question = (
        "Describe this video in detail as a sequence of events. For each event give its start "
        "and end time in seconds, an action label and a short description, one event per line."
    )
    # The three struc_info shapes the official scorer accepts (spec 1).
    shapes = {"NurViD": [{"dc_segments": segments}], "EgoSurgery": segments}
    return question, _events_text(segments), shapes.get(clip.dataset, [segments]), {}


def build_next_action(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    labels = _labels_for(clip)
    label = rng.choice(labels)
    if clip.dataset == "EgoSurgery":
        question = "What will the surgeon do next? Answer with a short action phrase."
    else:
        question = (
            f"Watch this video{_procedure_phrase(clip)} and predict the next action. "
            f"Choose one of: {', '.join(labels)}."
        )
    legacy = [old for old, new in load_labels()["copesd_legacy_to_current"].items() if new == label]
    if clip.dataset == "CoPESD" and legacy and rng.random() < 0.3:
        label = rng.choice(legacy)  # older annotations kept their old names
    return question, label, [], {}


def build_cvs_assessment(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    level = rng.choices((0, 1, 2), (6, 3, 2))[0]
    scores = {key: max(0, min(2, level + rng.choice((-1, 0, 0, 1)))) for key, _ in CVS_CRITERIA}
    question = (
        "Assess the critical view of safety in this clip. Score each criterion from 0 to 2: "
        "two structures, cystic plate, hepatocystic triangle."
    )
    answer = ", ".join(f"{name}: {scores[key]}" for key, name in CVS_CRITERIA)
    struc_scores = {} if rng.random() < 0.01 else scores  # empty: the scorer reads the text
    return question, answer, [{"cvs_scores": struc_scores}], {}


def build_skill_assessment(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    level = rng.choices("NIE", (5, 3, 2))[0]
    base = {"N": 2, "I": 3, "E": 4}[level]
    scores = {a: max(1, min(5, base + rng.choice((-1, 0, 0, 1)))) for a in SKILL_ASPECTS}
    task = clip.video_id.rsplit("_", 1)[0].replace("_", " ").lower()
    question = (
        f"Rate the surgeon's skill in this {task} trial on each GRS aspect from 1 to 5: "
        f"{', '.join(SKILL_ASPECTS)}."
    )
    answer = ", ".join(f"{aspect}: {score}/5" for aspect, score in scores.items())
    item: dict[str, Any] = {"skill_level": level, "skill_scores": scores}
    if rng.random() < 0.02:
        del item["skill_scores"]  # the scorer falls back to the text
    return question, answer, [item], {}


def _summary(rng: random.Random, clip: Clip, writer: str) -> str:
    labels = _labels_for(clip) if clip.dataset not in ("Cholec80_CVS", "JIGSAWS") else []
    steps = [
        _sentence(_describe(rng, clip, label)) for label in rng.sample(labels, min(3, len(labels)))
    ]
    if clip.dataset == "Cholec80_CVS":
        steps = ["The hook clears fatty tissue from the hepatocystic triangle.",
                 "The cystic duct and cystic artery are progressively exposed."]  # fmt: skip
    if clip.dataset == "JIGSAWS":
        steps = ["The right needle driver passes the needle through the pad.",
                 "The left instrument regrasps the needle and pulls the suture."]  # fmt: skip
    opening = clip.profile.setting
    if clip.procedure:
        opening = f"This nursing-skills video demonstrates the procedure '{clip.procedure}'."
    closing = rng.choice((
        f"The {rng.choice(clip.profile.anatomy)} stays in view throughout.",
        "The clip ends before the step is completed.",
    ))  # fmt: skip
    if writer == "gemini":
        closing += f" Instruments seen: {', '.join(rng.sample(clip.profile.objects, 2))}."
    return " ".join([opening, *steps, closing])


def build_video_summary(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    question = rng.choice((
        "Summarize what happens in this video.",
        "Provide a concise summary of the procedure shown in this clip.",
    ))  # fmt: skip
    return question, _summary(rng, clip, qa_type.rsplit("_", 1)[-1]), [], {}


def build_region_caption(rng: random.Random, clip: Clip, qa_type: str) -> Turn:
    obj = _pick_unused(rng, clip, clip.profile.objects)
    box = _track(rng, clip, 1)[0]
    second = rng.choice(clip.grid())
    frame = clip.start_frame + round(second * clip.profile.native_fps)
    question = (
        f"Describe the region inside the bounding box {_box_text(box)} in the frame at "
        f"{second:.1f} seconds."
    )
    anatomy = rng.choice(clip.profile.anatomy)
    answer = f"The highlighted region shows the {obj} close to the {anatomy}."
    if qa_type.endswith("gemini"):
        answer += (
            f" It is positioned to {rng.choice(('retract', 'grasp', 'expose'))} the {anatomy}."
        )
    else:
        answer += " The surrounding tissue appears intact, with no active bleeding."
    return question, answer, [], {"is_RC": True, "RC_info": {"bbox": box, "frame": frame}}


BUILDERS: dict[str, Callable[[random.Random, Clip, str], Turn]] = {
    "tal": build_tal,
    "stg": build_stg,
    "dense_captioning": build_dense_captioning,
    "next_action": build_next_action,
    "cvs_assessment": build_cvs_assessment,
    "skill_assessment": build_skill_assessment,
    "video_summary": build_video_summary,
    "region_caption": build_region_caption,
}


def task_of(qa_type: str) -> str:
    """The task a qa_type belongs to (spec 1 routes by substring, CVS and skill by equality)."""
    if qa_type in ("cvs_assessment", "skill_assessment"):
        return qa_type
    for task in (
        "tal",
        "stg",
        "next_action",
        "dense_captioning",
        "video_summary",
        "region_caption",
    ):
        if task in qa_type:
            return task
    raise ValueError(f"unknown qa_type {qa_type!r}")


# --------------------------------------------------------------------------- the test set


def _record(rng: random.Random, clip: Clip, qa_type: str) -> dict[str, Any]:
    question, answer, struc_info, extra = BUILDERS[task_of(qa_type)](rng, clip, qa_type)
    return {
        "id": clip.sample_id,
        "conversations": [
            {"from": "human", "value": f"<video>\n{question}"},
            {"from": "gpt", "value": answer},
        ],
        "video": clip.frame_paths(),
        "metadata": clip.metadata(),
        "qa_type": qa_type,
        "data_source": clip.dataset,
        "struc_info": struc_info,
        **extra,
    }


def _dataset_records(seed: int, dataset: str) -> list[dict[str, Any]]:
    """All records of one dataset, clip after clip, the questions of a clip together."""
    rng = random.Random(f"medvidbench-demo:{seed}:{dataset}")
    qa_types = [qa for qa, plan in TASK_PLAN.items() for _ in range(plan.get(dataset, 0))]
    rng.shuffle(qa_types)
    videos = _video_ids(rng, dataset)
    procedures = list(load_labels()["NurViD_by_procedure"])
    seen: set[str] = set()  # membership only; never iterated
    clips = []
    for group in _group_questions(rng, qa_types):
        index = rng.randrange(len(videos))
        procedure = procedures[index % len(procedures)] if dataset == "NurViD" else None
        clip = _make_clip(rng, dataset, videos[index], procedure)
        while clip.sample_id in seen:
            clip = _make_clip(rng, dataset, videos[index], procedure)
        seen.add(clip.sample_id)
        clips.append((clip, group))
    clips.sort(key=lambda pair: (pair[0].video_id, pair[0].start_frame))
    return [_record(rng, clip, qa_type) for clip, group in clips for qa_type in group]


def generate_testset(seed: int = 0) -> list[dict[str, Any]]:
    """The 6,245 ground-truth records in the official private format (spec 1), grouped by
    dataset and clip with the tasks interleaved, as the real file is."""
    return [record for dataset in DATASETS for record in _dataset_records(seed, dataset)]


# --------------------------------------------------------------------------- reading a record


def reference_answer(record: dict[str, Any]) -> str:
    """The last gpt turn: the reference answer (spec 1)."""
    return [t["value"] for t in record["conversations"] if t["from"] in ("gpt", "assistant")][-1]


def question_of(record: dict[str, Any]) -> str:
    human = [t["value"] for t in record["conversations"] if t["from"] in ("human", "user")][-1]
    return human.replace("<video>\n", "").replace("<video>", "")


def tal_spans(struc_info: list[dict[str, Any]]) -> list[tuple[float, float]]:
    return [(s["start"], s["end"]) for item in struc_info for s in item.get("spans", [])]


def stg_boxes(struc_info: Any) -> dict[str, list[float]]:
    """The reference box dict, whichever of the three accepted shapes holds it (spec 1)."""
    holder = struc_info[0] if isinstance(struc_info, list) else struc_info
    return holder.get("bbox_dict", holder)


def dense_segments(struc_info: list[Any]) -> list[dict[str, Any]]:
    first = struc_info[0] if struc_info else {}
    if isinstance(first, list):
        return first
    if isinstance(first, dict) and "dc_segments" in first:
        return first["dc_segments"]
    return struc_info


def clip_seconds(record: dict[str, Any]) -> float:
    """The clip's length, from its frame range and its dataset's native frame rate."""
    meta = record["metadata"]
    frames = int(meta["input_video_end_frame"]) - int(meta["input_video_start_frame"])
    return frames / PROFILES[record["data_source"]].native_fps


def named_procedure(question: str) -> str:
    """The NurViD procedure a question is about: the longest procedure name it contains.

    The official scorer takes the *first* name in file order instead (spec 4), so a question
    about "Subcutaneous Injection Insulin" is scored against the "Subcutaneous Injection" list.
    """
    lowered = question.lower()
    names = [p for p in load_labels()["NurViD_by_procedure"] if p.lower() in lowered]
    return max(names, key=len)
