"""The vocabulary of the synthetic test set: qa_type counts, source datasets, per-dataset profiles,
captions, paraphrases and the NAP class lists shared with the scorer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

LABELS_PATH = (
    Path(__file__).resolve().parent.parent / "scoring" / "data" / "medvidbench_labels.json"
)

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
