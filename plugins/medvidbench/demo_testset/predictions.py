"""Submissions against the synthetic test set: a perfect one, a noisy fine-tuned model and a
prose-writing chat model."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from plugins.medvidbench.demo_testset.testset import (
    _box_text,
    _events_text,
    _spans_text,
    clip_seconds,
    dense_segments,
    named_procedure,
    question_of,
    reference_answer,
    stg_boxes,
    tal_spans,
    task_of,
)
from plugins.medvidbench.demo_testset.vocabulary import (
    CVS_CRITERIA,
    EGOSURGERY_ACTIONS,
    PARAPHRASES,
    SYNONYMS,
    load_labels,
)


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
    answers, ``noisy`` imitates a fine-tuned model, ``prose`` a general chat model.

    The two models answer like models: a question asked again on the same clip (the gpt and
    gemini variants of a caption task share the question and the frames, and differ only in
    their references) gets the answer it got the first time, so a re-run of the model
    (docs/verification.md) can reproduce the file. ``perfect`` is the references, not a model."""
    rows = []
    answered: dict[tuple[str, str], str] = {}
    for index, record in enumerate(records):
        prediction = _predict(kind, random.Random(f"{kind}:{seed}:{index}"), record)
        if kind != "perfect":
            asked = (question_of(record), repr(record.get("video")))
            prediction = answered.setdefault(asked, prediction)
        rows.append({"id": record["id"], "qa_type": record["qa_type"], "prediction": prediction})
    return rows


PREDICTION_KINDS = ("perfect", "noisy", "prose")
