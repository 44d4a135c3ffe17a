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
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

LABELS_PATH = Path(__file__).resolve().parent / "scoring" / "data" / "medvidbench_labels.json"

# spec 1: the official test set's qa_type counts (6,245 samples).
QA_TYPE_COUNTS: dict[str, int] = {
    "tal": 1637,
    "stg": 780,
    "dense_captioning_gpt": 751,
    "dense_captioning_gemini": 728,
    "next_action": 670,
    "cvs_assessment": 648,
    "video_summary_gemini": 302,
    "video_summary_gpt": 263,
    "skill_assessment": 160,
    "region_caption_gemini": 168,
    "region_caption_gpt": 138,
}

DATASETS = (
    "AVOS",
    "CholecT50",
    "CholecTrack20",
    "Cholec80_CVS",
    "CoPESD",
    "EgoSurgery",
    "JIGSAWS",
    "NurViD",
)

# How the samples of each qa_type spread over the datasets (each row sums to QA_TYPE_COUNTS).
TASK_PLAN: dict[str, dict[str, int]] = {
    "tal": {"AVOS": 352, "CholecT50": 401, "CoPESD": 298, "EgoSurgery": 200, "NurViD": 386},
    "stg": {"AVOS": 196, "CholecTrack20": 212, "CoPESD": 118, "EgoSurgery": 254},
    "dense_captioning_gpt": {
        "AVOS": 168, "CholecT50": 175, "CoPESD": 142, "EgoSurgery": 70, "NurViD": 196,
    },
    "dense_captioning_gemini": {
        "AVOS": 160, "CholecT50": 170, "CoPESD": 138, "EgoSurgery": 70, "NurViD": 190,
    },
    "next_action": {"AVOS": 120, "CholecT50": 180, "CoPESD": 150, "EgoSurgery": 60, "NurViD": 160},
    "cvs_assessment": {"Cholec80_CVS": 648},
    "video_summary_gemini": {
        "AVOS": 60, "CholecT50": 62, "Cholec80_CVS": 20, "CoPESD": 40, "EgoSurgery": 30,
        "JIGSAWS": 20, "NurViD": 70,
    },
    "video_summary_gpt": {
        "AVOS": 52, "CholecT50": 54, "Cholec80_CVS": 18, "CoPESD": 35, "EgoSurgery": 26,
        "JIGSAWS": 18, "NurViD": 60,
    },
    "skill_assessment": {"JIGSAWS": 160},
    "region_caption_gemini": {"AVOS": 28, "CholecTrack20": 60, "CoPESD": 40, "EgoSurgery": 40},
    "region_caption_gpt": {"AVOS": 24, "CholecTrack20": 50, "CoPESD": 32, "EgoSurgery": 32},
}  # fmt: skip

# A clip may carry several tal / stg / region questions (other actions, other objects) but at most
# one question of every other type, as in the real file.
REPEATABLE_ON_A_CLIP = ("tal", "stg", "region_caption_gemini", "region_caption_gpt")
QUESTIONS_PER_CLIP = (1, 2, 2, 3, 3, 3, 4, 4, 5)
MAX_FRAME_PATHS = 16  # keeps ground_truth.json small; the real file lists the sampled frames

SKILL_ASPECTS = (
    "Respect for tissue",
    "Suture/needle handling",
    "Time and motion",
    "Flow of operation",
    "Overall performance",
    "Quality of final product",
)
CVS_CRITERIA = (
    ("two_structures", "Two structures"),
    ("cystic_plate", "Cystic plate"),
    ("hepatocystic_triangle", "Hepatocystic triangle"),
)
EGOSURGERY_ACTIONS = (
    "incision", "dissection", "hemostasis", "suturing", "knot tying", "irrigation", "skin closure",
)  # fmt: skip


@dataclass(frozen=True)
class DatasetProfile:
    """How a source dataset's clips look: frame rates, lengths, frame sizes, what is in view."""

    native_fps: float
    sample_fps: tuple[tuple[str, float], ...]  # (metadata fps string, weight)
    seconds: tuple[int, int]
    frame_sizes: tuple[tuple[int, int], ...]
    objects: tuple[str, ...]  # what STG and region captions point at
    anatomy: tuple[str, ...]
    setting: str  # opening sentence of a video summary
    integer_boxes: bool = False


PROFILES: dict[str, DatasetProfile] = {
    "AVOS": DatasetProfile(
        30.0, (("1.0", 6), ("0.5", 2), ("2.0", 1)), (40, 180),
        ((1280, 720), (854, 480), (1920, 1080)),
        ("needle driver", "forceps", "scissors", "surgeon's right hand", "suture needle"),
        ("skin", "wound edge", "subcutaneous tissue", "fascia"),
        "This open-surgery video, filmed from above, shows a skin wound being closed.",
    ),
    "CholecT50": DatasetProfile(
        25.0, (("1.0", 7), ("0.5", 3)), (60, 240), ((854, 480),),
        ("grasper", "hook", "clipper", "scissors", "irrigator", "bipolar forceps"),
        ("gallbladder", "cystic duct", "cystic artery", "liver", "omentum", "gallbladder neck"),
        "This clip shows a laparoscopic cholecystectomy.",
    ),
    "CholecTrack20": DatasetProfile(
        25.0, (("1.0", 5), ("2.0", 2), ("0.5", 2), ("25.0", 1)), (20, 120), ((854, 480),),
        ("grasper", "hook", "clipper", "scissors", "irrigator", "specimen bag", "bipolar forceps"),
        ("gallbladder", "cystic duct", "liver", "hepatocystic triangle", "cystic plate"),
        "This clip shows instruments at work during a laparoscopic cholecystectomy.",
        integer_boxes=True,
    ),
    "Cholec80_CVS": DatasetProfile(
        25.0, (("1.0", 8), ("0.5", 2)), (20, 90), ((854, 480),),
        ("grasper", "hook", "clipper"),
        ("cystic duct", "cystic artery", "hepatocystic triangle", "cystic plate", "liver"),
        "This laparoscopic cholecystectomy clip shows the dissection before clipping.",
    ),
    "CoPESD": DatasetProfile(
        30.0, (("1.0", 5), ("2.0", 2), ("4.0", 2), ("25.0", 1)), (20, 90), ((1920, 1080),),
        ("electrosurgical knife", "forceps", "mucosal flap", "endoscope cap"),
        ("mucosal flap", "submucosa", "muscularis propria", "lesion margin"),
        "This clip shows an endoscopic submucosal dissection of a gastric lesion.",
    ),
    "EgoSurgery": DatasetProfile(
        30.0, (("1.0", 5), ("0.5", 3), ("2.0", 2)), (30, 150), ((1920, 1080), (1280, 720)),
        ("scalpel", "needle holder", "forceps", "scissors", "surgeon's left hand", "gauze"),
        ("skin", "subcutaneous fat", "fascia", "wound bed"),
        "This video, from the surgeon's head-mounted camera, shows open surgery.",
    ),
    "JIGSAWS": DatasetProfile(
        30.0, (("1.0", 6), ("2.0", 2), ("0.5", 2)), (60, 180), ((640, 480),),
        ("left needle driver", "right needle driver", "needle", "suture"),
        ("bench-top pad", "incision line", "ring"),
        "This robotic training video, filmed by the da Vinci endoscope, shows a dry-lab task.",
    ),
    "NurViD": DatasetProfile(
        25.0, (("1.0", 6), ("2.0", 2), ("0.5", 2)), (30, 150), ((1280, 720), (640, 360)),
        ("nurse's hands", "syringe", "gloves", "cotton swab", "tubing"),
        ("patient's arm", "bed", "skin"),
        "This nursing-skills video shows a procedure at the bedside.",
    ),
}  # fmt: skip

DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "cutting": (
        "the surgeon cuts the suture tails with scissors just above the knot",
        "scissors trim the thread close to the skin after the knot is secured",
    ),
    "tying": (
        "the surgeon ties a square knot with the needle driver and forceps",
        "an instrument tie secures the suture across the wound",
    ),
    "suturing": (
        "the needle driver passes the curved needle through both wound edges",
        "forceps evert the wound edge while the needle is driven through the skin",
    ),
    "preparation": ("the grasper retracts the fundus of the gallbladder to expose the field",),
    "carlot-triangle-dissection": (
        "the hook dissects the peritoneum over the hepatocystic triangle to expose the cystic duct",
        "the grasper retracts the gallbladder neck while the hook clears fat from the triangle",
    ),
    "clipping-and-cutting": (
        "the clipper places clips on the cystic duct and artery, which the scissors then divide",
    ),
    "gallbladder-dissection": (
        "the hook separates the gallbladder from the liver bed under traction from the grasper",
    ),
    "gallbladder-packaging": ("the grasper places the gallbladder into the specimen bag",),
    "cleaning-and-coagulation": (
        "the irrigator washes the liver bed and the bipolar forceps coagulate oozing points",
    ),
    "gallbladder-extraction": ("the specimen bag is withdrawn through the umbilical port",),
    "adjust camera": ("the endoscope is repositioned to bring the submucosal plane into view",),
    "position flap with forceps and knife": (
        "the forceps and the electrosurgical knife together position the mucosal flap",
    ),
    "dissect flap tissue with knife": (
        "the knife dissects the submucosal fibres beneath the flap",
    ),
    "position flap with forceps only": ("the forceps reposition the mucosal flap",),
    "retract flap edge with forceps only": (
        "the forceps retract the flap edge to expose the dissection plane",
    ),
    "retract flap edge with forceps and knife": (
        "the forceps retract the flap edge while the knife stays ready beneath it",
    ),
    "lift flap with forceps": ("the forceps lift the mucosal flap to reveal the submucosa",),
    "stabilize flap with forceps": ("the forceps hold the flap steady during dissection",),
    "incision": ("the surgeon makes a skin incision with the scalpel along the marked line",),
    "dissection": ("scissors and forceps dissect through the subcutaneous tissue",),
    "hemostasis": ("bleeding vessels are coagulated with the electrocautery pencil",),
    "knot tying": ("the surgeon ties the suture by hand and tightens the knot",),
    "irrigation": ("the wound is irrigated with saline and dried with gauze",),
    "skin closure": ("the skin edges are approximated with interrupted sutures",),
}

# What a model says instead of the label (noisy and prose next-action answers).
PARAPHRASES: dict[str, str] = {
    "tying": "the surgeon will tie the knot",
    "cutting": "cut the suture",
    "suturing": "place another stitch through the wound edge",
    "clipping-and-cutting": "clip and divide the cystic duct",
    "gallbladder-dissection": "dissect the gallbladder off the liver bed",
    "carlot-triangle-dissection": "dissect Calot's triangle",
    "cleaning-and-coagulation": "irrigate and coagulate the liver bed",
    "dissect flap tissue with knife": "cut the submucosa with the knife",
    "lift flap with forceps": "lift the flap",
    "adjust camera": "move the endoscope",
    "knot tying": "tie the knot",
    "skin closure": "close the skin",
    "Handwashing": "wash hands",
    "Disinfect skin": "disinfect the skin with iodine",
    "Document": "record the procedure in the chart",
}

SYNONYMS = (
    ("the surgeon", "the operator"), ("uses", "employs"), ("grasper", "grasping forceps"),
    ("dissects", "separates"), ("retracts", "pulls back"), ("needle driver", "needle holder"),
    ("the nurse", "the caregiver"), ("patient", "client"), ("wound", "incision"),
    ("is performed", "takes place"), ("carefully", "gently"), ("forceps", "tweezers"),
)  # fmt: skip


@cache
def load_labels() -> dict[str, Any]:
    """The NAP class lists, read from the scorer's data file so both always agree (spec 4)."""
    return json.loads(LABELS_PATH.read_text(encoding="utf-8"))


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


# --------------------------------------------------------------------------- predictions


def _jitter(rng: random.Random, value: float, spread: float, low: float, high: float) -> float:
    return round(min(high, max(low, value + rng.uniform(-spread, spread))), 1)


def _noisy_tal(rng: random.Random, record: dict[str, Any]) -> str:
    spans, end = tal_spans(record["struc_info"]), clip_seconds(record)
    spread = rng.choice((2.0, 4.0, 8.0, 15.0, 40.0))  # a few far-off guesses
    out = [(_jitter(rng, s, spread, 0, end), _jitter(rng, e, spread, 0, end)) for s, e in spans]
    out = [(s, e) if e > s else (e, s + 1.0) for s, e in out]
    if len(out) > 1 and rng.random() < 0.15:
        out.pop(rng.randrange(len(out)))
    if rng.random() < 0.12:
        start = rng.uniform(0, 100)
        out.append((round(start, 1), round(start + rng.uniform(2, 15), 1)))
    return _spans_text(out)


def _noisy_box(rng: random.Random, box: list[float]) -> list[float]:
    w, h = box[2] - box[0], box[3] - box[1]
    spread = rng.choice((0.2, 0.4, 0.8, 1.5, 3.0))
    dx, dy = rng.uniform(-spread, spread) * w, rng.uniform(-spread, spread) * h
    scale = rng.uniform(0.6, 1.6)
    x1, y1 = max(0.0, box[0] + dx), max(0.0, box[1] + dy)
    return [round(x1, 2), round(y1, 2), round(x1 + w * scale, 2), round(y1 + h * scale, 2)]


def _noisy_stg(rng: random.Random, record: dict[str, Any]) -> str:
    boxes = {k: _noisy_box(rng, b) for k, b in stg_boxes(record["struc_info"]).items()}
    if rng.random() < 0.08:  # raw double-bracketed integer boxes: the scorer's fallback path
        return " ".join(f"[[{', '.join(str(round(v)) for v in b)}]]" for b in boxes.values())
    kept = {k: b for i, (k, b) in enumerate(boxes.items()) if i == 0 or rng.random() > 0.2}
    return " ".join(f"{float(k):.1f} seconds: {_box_text(b)}" for k, b in kept.items())


def _class_list(record: dict[str, Any]) -> list[str]:
    labels, dataset = load_labels(), record["data_source"]
    if dataset == "NurViD":
        return list(labels["NurViD_by_procedure"][named_procedure(question_of(record))])
    return list(labels.get(dataset, EGOSURGERY_ACTIONS))


def _noisy_next_action(rng: random.Random, record: dict[str, Any]) -> str:
    answer, roll = reference_answer(record), rng.random()
    if roll < 0.4:
        return answer
    if roll < 0.55:
        return PARAPHRASES.get(answer, f"The next action is {answer.lower()}.")
    return rng.choice(_class_list(record))


def _noisy_scores(rng: random.Random, text: str, low: int, high: int, chance: float) -> str:
    def shift(match: re.Match[str]) -> str:
        value = int(match.group(1))
        if rng.random() < chance:
            value = min(high, max(low, value + rng.choice((-1, 1))))
        return f": {value}"

    return re.sub(r": (\d)", shift, text)


def _paraphrase(rng: random.Random, text: str) -> str:
    for old, new in SYNONYMS:
        if old in text and rng.random() < 0.6:
            text = text.replace(old, new)
    return text


def _noisy_dense(rng: random.Random, record: dict[str, Any]) -> str:
    segments = [dict(s) for s in dense_segments(record["struc_info"])]
    if len(segments) > 2 and rng.random() < 0.2:  # two events merged into one
        i = rng.randrange(len(segments) - 1)
        segments[i : i + 2] = [{**segments[i], "end": segments[i + 1]["end"]}]
    spread = rng.choice((2.0, 5.0, 10.0, 20.0))
    for seg in segments:
        seg["start"] = _jitter(rng, seg["start"], spread, 0, seg["end"] - 0.5)
        seg["end"] = _jitter(rng, seg["end"], spread, seg["start"] + 0.5, 10_000)
        seg["caption"] = _paraphrase(rng, seg["caption"])
    if len(segments) > 1 and rng.random() < 0.1:  # an event running into the next one
        segments[0]["end"] = round(segments[1]["end"] - 0.5, 1)
    return _events_text(segments)


def _noisy_caption(rng: random.Random, record: dict[str, Any]) -> str:
    sentences = _paraphrase(rng, reference_answer(record)).split(". ")
    if len(sentences) > 2 and rng.random() < 0.5:
        sentences.pop(rng.randrange(1, len(sentences)))
    return ". ".join(sentences)


NOISY: dict[str, Callable[[random.Random, dict[str, Any]], str]] = {
    "tal": _noisy_tal,
    "stg": _noisy_stg,
    "next_action": _noisy_next_action,
    "cvs_assessment": lambda rng, r: _noisy_scores(rng, reference_answer(r), 0, 2, 0.1),
    "skill_assessment": lambda rng, r: _noisy_scores(rng, reference_answer(r), 1, 5, 0.6),
    "dense_captioning": _noisy_dense,
    "video_summary": _noisy_caption,
    "region_caption": _noisy_caption,
}

BROKEN_ANSWERS = ("", "I'm sorry, I can't determine that from the video.", "<|im_end|>")


def _prose_tal(rng: random.Random, record: dict[str, Any]) -> str:
    start, end = tal_spans(record["struc_info"])[0]
    a, b = max(0, round(start + rng.uniform(-15, 15))), max(1, round(end + rng.uniform(-15, 15)))
    return rng.choice((
        f"The action occurs from about {a} seconds to {b} seconds.",  # "A to B" fallback reads it
        f"It happens between {a} and {b} seconds into the clip.",
        "The action takes place mainly in the first half of the video.",
        f"00:00:{a % 60:02d} to 00:00:{b % 60:02d}",
    ))  # fmt: skip


def _prose_stg(rng: random.Random, record: dict[str, Any]) -> str:
    key, box = next(iter(stg_boxes(record["struc_info"]).items()))
    guess = _box_text([round(v) for v in _noisy_box(rng, box)])
    return rng.choice((
        f"The instrument is located near the centre of the frame, at roughly {guess}.",
        f"At {key} s the object appears at approximately {guess}, then moves slightly right.",
        f"{float(key):.1f} seconds: {guess}",  # occasionally a chat model gets the format right
        "I cannot provide exact pixel coordinates, but the tool is in the upper left region.",
    ))  # fmt: skip


def _prose_next_action(rng: random.Random, record: dict[str, Any]) -> str:
    guess = rng.choice(_class_list(record))
    phrase = PARAPHRASES.get(guess, guess.lower())
    return rng.choice((
        f"I think the next step is to {phrase}.",
        f"Based on the video, the most likely next action is {phrase}.",
        "The surgeon will probably continue the current step.",
    ))  # fmt: skip


def _prose_cvs(rng: random.Random, record: dict[str, Any]) -> str:
    scores = {k: rng.choice((0, 1, 2)) for k, _ in CVS_CRITERIA}
    return rng.choice((
        "The critical view of safety is partially achieved.",
        "The critical view of safety is not yet achieved; the cystic plate is not exposed.",
        f"Two structures: {scores['two_structures']}, the cystic plate is not clearly visible, "
        f"hepatocystic triangle: {scores['hepatocystic_triangle']}.",
        f"Two structure: {scores['two_structures']}, Cystic plate: {scores['cystic_plate']}",
    ))  # fmt: skip


def _prose_skill(rng: random.Random, record: dict[str, Any]) -> str:
    score = rng.randint(2, 4)
    return rng.choice((
        "The surgeon appears to be at an intermediate level with reasonably smooth movements.",
        f"Overall, I would rate this performance around {score}/5.",
        f"Respect for tissue: {score}/5, needle handling is somewhat hesitant, "
        f"Overall performance: {score}/5.",
        f"respect for tissue: {score}/5, time and motion: {score}/5",
    ))  # fmt: skip


def _prose_dense(rng: random.Random, record: dict[str, Any]) -> str:
    """Evenly spaced guesses over the clip: a chat model does not see the event boundaries."""
    length, count = clip_seconds(record), rng.choice((3, 4, 5))
    bounds = [round(i * length / count) for i in range(count + 1)]
    dash = rng.choice(("-", "-", " - "))  # "0 - 20 seconds:" fails the strict event parser
    if rng.random() < 0.3:  # a chat model that copies the one-event-per-line format
        return "\n".join(
            f"{a}{dash}{b} seconds: {rng.choice(PROSE_EVENTS)}" for a, b in pairwise(bounds)
        )
    return (
        f"From {bounds[0]} to {bounds[1]} seconds, the video shows the preparation of the "
        f"operative field. Then the main step is performed until about {bounds[-2]} seconds, "
        "and finally the instruments are withdrawn."
    )


PROSE_EVENTS = (
    "The surgeon prepares the operative field.",
    "Instruments manipulate the tissue.",
    "The main step of the procedure continues.",
    "The instruments are withdrawn from view.",
)


def _prose_caption(rng: random.Random, record: dict[str, Any]) -> str:
    return rng.choice((
        "The video shows a medical procedure in which instruments interact with tissue. The "
        "clinician proceeds step by step, and the field remains clear throughout.",
        "This appears to be a surgical video. A surgical tool is visible, handling the tissue "
        "carefully; no complications are apparent.",
    ))  # fmt: skip


PROSE: dict[str, Callable[[random.Random, dict[str, Any]], str]] = {
    "tal": _prose_tal,
    "stg": _prose_stg,
    "next_action": _prose_next_action,
    "cvs_assessment": _prose_cvs,
    "skill_assessment": _prose_skill,
    "dense_captioning": _prose_dense,
    "video_summary": _prose_caption,
    "region_caption": _prose_caption,
}


def _predict(kind: str, rng: random.Random, record: dict[str, Any]) -> str:
    task = task_of(record["qa_type"])
    if kind == "perfect":
        return reference_answer(record)
    if kind == "noisy":
        if rng.random() < 0.03:  # truncated generations, refusals, stray special tokens
            return rng.choice(BROKEN_ANSWERS)
        return NOISY[task](rng, record)
    if kind == "prose":
        return PROSE[task](rng, record)
    raise ValueError(f"unknown prediction kind {kind!r}; use perfect, noisy or prose")


def make_predictions(records: list[dict[str, Any]], kind: str, seed: int) -> list[dict[str, str]]:
    """A submission (spec 2) for ``records``, in their order: ``perfect`` repeats the reference
    answers, ``noisy`` imitates a fine-tuned model, ``prose`` a general chat model."""
    return [
        {
            "id": record["id"],
            "qa_type": record["qa_type"],
            "prediction": _predict(kind, random.Random(f"{kind}:{seed}:{index}"), record),
        }
        for index, record in enumerate(records)
    ]


PREDICTION_KINDS = ("perfect", "noisy", "prose")
DEMO_FILENAMES: dict[str, str] = {
    "ground_truth": "ground_truth.json",
    **{kind: f"predictions_{kind}.json" for kind in PREDICTION_KINDS},
}


def write_demo_files(output_dir: Path, seed: int = 0) -> dict[str, Path]:
    """Write the ground truth and the three submissions as JSON files into ``output_dir``.

    Creates the directory if needed and overwrites the files named in ``DEMO_FILENAMES``;
    returns their paths under the same keys.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    records = generate_testset(seed)
    contents: dict[str, Any] = {"ground_truth": records}
    contents.update({kind: make_predictions(records, kind, seed) for kind in PREDICTION_KINDS})
    paths = {}
    for name, content in contents.items():
        path = output_dir / DEMO_FILENAMES[name]
        with path.open("w", encoding="utf-8") as handle:
            json.dump(content, handle, ensure_ascii=False)
        paths[name] = path
    return paths
