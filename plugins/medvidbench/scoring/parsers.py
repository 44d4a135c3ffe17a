"""Answer parsers, one per task, as the official scorer reads answers (spec 3).

They are deliberately strict and reproduce the official regular expressions,
including their quirks; a "better" parser would publish different numbers.
Each function takes the raw answer text and returns plain Python values.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# --- temporal action localisation (tal) --------------------------------------

# Every "number - number" pair is a (start, end) segment in seconds.
_TAL_RANGE = re.compile(r"(?<!\d)(\d++(?:\.\d++)?)\s*+-\s*+(\d++(?:\.\d++)?)")
# Zero-shot fallbacks: "from 12.1 to 117.0", "113.2s to 163.4s", "10 seconds to 15 seconds".
_TAL_FROM_TO = re.compile(
    r"(?!(?<=\d)\d)(?!(?<=\s)\s)(?:from|is from|takes place from)?\s*+"
    r"(\d++(?:\.\d++)?)(?:s| seconds?)?\s*+"
    r"to\s*+"
    r"(\d++(?:\.\d++)?)(?:s| seconds?)?",
    flags=re.IGNORECASE,
)
_TAL_CLOCK = re.compile(
    r"(?<!\d)(\d++):(\d++):(\d++)\s++to\s++(\d++):(\d++):(\d++)", flags=re.IGNORECASE
)


def parse_tal(text: str) -> list[tuple[float, float]]:
    """Segments (start, end) in seconds, in the order they appear.

    Only when no "A-B" pair exists are the fallbacks tried; the official code then
    keeps the matches of *both* fallback forms (from-to first, rounded to 2
    decimals, then HH:MM:SS), so "00:00:00 to 00:00:08" yields (0, 0) and (0, 8).
    """
    segments = [(float(start), float(end)) for start, end in _TAL_RANGE.findall(text)]
    if segments:
        return segments
    segments = [
        (round(float(start), 2), round(float(end), 2)) for start, end in _TAL_FROM_TO.findall(text)
    ]
    for h1, m1, s1, h2, m2, s2 in _TAL_CLOCK.findall(text):
        start = int(h1) * 3600 + int(m1) * 60 + int(s1)
        end = int(h2) * 3600 + int(m2) * 60 + int(s2)
        segments.append((float(start), float(end)))
    return segments


# --- spatio-temporal grounding (stg) -----------------------------------------

# Deviation (docs/scoring.md): a coordinate this large is no coordinate (its area would
# overflow a double and turn the IoU into NaN), so such a box counts as malformed.
MAX_COORDINATE = 2.0**60
_STG_KEYED_BOX = re.compile(r"(?<!\d)(\d++(?:\.\d++)?)\s++seconds:\s*+\[([^\]]++)\]")
_STG_BARE_BOX = re.compile(r"\[\[([\d\s,]+)\]\]")


@dataclass(frozen=True, slots=True)
class StgPrediction:
    """A parsed STG answer.

    `keyed` maps `str(float(t))` to a box when the answer used "t seconds: [...]";
    otherwise `bare` holds the `[[a, b, c, d]]` integer boxes in order, which the
    metric assigns to the reference timestamps.
    """

    keyed: dict[str, list[float]] | None
    bare: list[list[int]]

    @property
    def parsed(self) -> bool:
        return bool(self.keyed) or bool(self.bare)


def _box_numbers(raw: str) -> list[float] | None:
    try:
        numbers = [float(part.strip().lstrip("[").rstrip("]")) for part in raw.split(",")]
    except ValueError:
        return None
    # Deviation (docs/scoring.md): "nan"/"inf" pass float() but are no coordinates
    # (nan fails the comparison below).
    if len(numbers) != 4 or not all(abs(number) < MAX_COORDINATE for number in numbers):
        return None
    return numbers


def parse_stg(text: str) -> StgPrediction:
    """Boxes keyed by timestamp; a malformed box reuses the last valid one."""
    matches = _STG_KEYED_BOX.findall(text)
    if not matches:
        return StgPrediction(keyed=None, bare=_parse_bare_boxes(text))
    keyed: dict[str, list[float]] = {}
    last_valid: list[float] | None = None
    for timestamp, raw_box in matches:
        box = _box_numbers(raw_box)
        if box is not None:
            last_valid = box
        elif last_valid is not None:
            box = last_valid
        else:
            continue
        keyed[str(float(timestamp))] = box
    return StgPrediction(keyed=keyed, bare=[])


def _parse_bare_boxes(text: str) -> list[list[int]]:
    boxes = []
    for match in _STG_BARE_BOX.findall(text):
        try:
            box = [int(part.strip()) for part in match.split(",")]
        except ValueError:
            continue
        if len(box) == 4 and all(abs(value) < MAX_COORDINATE for value in box):
            boxes.append(box)
    return boxes


# --- dense video captioning ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaptionEvent:
    start: float
    end: float
    caption: str


_DVC_HEADER = r"\d++(?:\.\d++)?-\d++(?:\.\d++)?\s++seconds?:"
# The caption runs to the next line that starts with an event's header, or to the end. The
# official form reads it lazily, `(.*?)(?=\n<header>|\Z)`, trying the lookahead after each of
# its characters; this one takes the runs of a line whole and looks ahead only after each line
# break: the same text (the first place the official lookahead holds is the first line break
# before a header, or the end), in a quarter of the time (issue 16).
_DVC_EVENT = re.compile(
    r"(?<!\d)(\d++(?:\.\d++)?)-(\d++(?:\.\d++)?)\s++seconds?:\s++"
    r"((?:[^\n]++|\n(?!" + _DVC_HEADER + r"))*+)",
    flags=re.DOTALL,
)
# The official zero-shot fallback, applied line by line when the strict form finds nothing.
_DVC_ZERO_SHOT = re.compile(
    r"(?:\*\*Start Time:\*\*|Start\s*\(?Time\)?|Time\s*Range:|Time\s*Interval:|^|\n)"
    r"\s*+(\d++\.?+\d*+)\s*+[-\u2013]\s*+(\d++\.?+\d*+)\s*+seconds?.*?(?:\*\*Description:\*\*|-)\s*(.+?)(?=\n\d|$)",
    flags=re.DOTALL,
)


def parse_dense_captions(text: str) -> list[CaptionEvent]:
    """Events "A-B seconds: caption", duplicates of (start, end) dropped."""
    fields, strict = _dense_caption_fields(text)
    if strict:
        return [
            CaptionEvent(start, end, raw.strip().replace("\n", " ")) for start, end, raw in fields
        ]
    return [CaptionEvent(start, end, raw.strip().rstrip(".")) for start, end, raw in fields]


def parse_dense_caption_spans(text: str) -> list[tuple[float, float]]:
    """The (start, end) of each event `parse_dense_captions` reads, without its caption: what
    DVC_F1 needs (issue 16: building the captions was a fifth of the metric's time)."""
    return [(start, end) for start, end, _ in _dense_caption_fields(text)[0]]


def _dense_caption_fields(text: str) -> tuple[list[tuple[float, float, str]], bool]:
    """Each event's start, end and caption as matched, and whether the strict form found them
    (else they are the zero-shot fallback's, line by line)."""
    events: list[tuple[float, float, str]] = []
    seen: set[tuple[float, float]] = set()
    for start, end, caption in _DVC_EVENT.findall(text):
        key = (float(start), float(end))
        if not (math.isfinite(key[0]) and math.isfinite(key[1])):
            continue  # deviation (docs/scoring.md): a 309-digit time is no time
        if key in seen:
            continue
        seen.add(key)
        events.append((key[0], key[1], caption))
    if events:
        return events, True
    fallback = []
    for line in text.strip().split("\n"):
        for start, end, caption in _DVC_ZERO_SHOT.findall(line):
            times = (float(start), float(end))
            if math.isfinite(times[0]) and math.isfinite(times[1]):
                fallback.append((times[0], times[1], caption))
    return fallback, False


# --- skill assessment ----------------------------------------------------------

_SKILL_SCORE = re.compile(r"(?<!\d)(\d++)/5")
_SKILL_ASPECT = re.compile(r"(?:^|(?<=:))([^:]++):\s*+(\d++)/5")


def has_skill_score(text: str) -> bool:
    """Whether the text carries any "N/5": without one a sample is skipped."""
    return _SKILL_SCORE.search(text) is not None


def parse_skill_aspects(text: str) -> dict[str, int]:
    """`{aspect name: score}` from "Name: N/5" parts split on commas (names case-sensitive)."""
    aspects: dict[str, int] = {}
    for part in text.split(","):
        match = _SKILL_ASPECT.search(part.strip())
        if match:
            aspects[match.group(1).strip()] = int(match.group(2))
    return aspects


# --- critical view of safety assessment ----------------------------------------

CVS_COMPONENTS = ("two_structures", "cystic_plate", "hepatocystic_triangle")
_CVS_RULES = (
    ("two structures", re.compile(r"two structures?:\s*(\d+)"), "two_structures"),
    ("cystic plate", re.compile(r"cystic plate:\s*(\d+)"), "cystic_plate"),
    (
        "hepatocystic triangle",
        re.compile(r"hepatocystic triangle:\s*(\d+)"),
        "hepatocystic_triangle",
    ),
)


def parse_cvs(text: str) -> dict[str, int]:
    """Component scores; each comma-separated part is read by the first rule whose name
    it contains (so "Two structure: 2" is never read, as in the official code)."""
    components: dict[str, int] = {}
    for part in text.split(","):
        part = part.strip().lower()
        for name, pattern, component in _CVS_RULES:
            if name in part:
                match = pattern.search(part)
                if match:
                    components[component] = int(match.group(1))
                break
    return components


# --- next action -----------------------------------------------------------------


def normalize_action(text: str, dataset: str, legacy_labels: dict[str, str]) -> str:
    """Stripped label; CoPESD's legacy label names map to the current ones."""
    text = text.strip()
    if dataset == "CoPESD":
        return legacy_labels.get(text, text)
    return text
