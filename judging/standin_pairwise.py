"""The stand-in judge's pairwise mode (issue 15, docs/ratings.md): a deterministic reply to a
battle prompt in MT-Bench's reference-guided pairwise format (Zheng et al. 2023, figure 8).

It is NOT a model and judges nothing: it counts the words each answer shares with the reference
answer and prefers the answer that shares more, replying "[[A]]" or "[[B]]" as an MT-Bench judge
does. When the two counts are within `TIE_MARGIN` words of each other it always prefers the
answer shown first, "[[A]]": a position bias on purpose, so that such a battle, judged twice
with the positions swapped, is a tie under MEDIC's rule (`benchmark.scoring.battles.
battle_winner`), and a clearly better answer wins both rounds. It never replies "[[C]]".

A word is a run of ASCII letters, lower-cased, of four letters or more (so "the", "and", "of"
never count); each distinct word counts once. The reply names the two counts and no word of the
reference, so a verdict carries no ground truth.

`pairwise_reply(prompt)` is the whole contract: a prompt with the reference section and both
answers' sections gets a reply, any other prompt None (the stand-in then answers with the
rubric verdict it gives every other prompt, `judging.standin`). Stdlib only, no Django.
"""

from __future__ import annotations

import re

# MT-Bench's section markers, exactly as its reference-guided pairwise prompt writes them.
REFERENCE_START = "[The Start of Reference Answer]"
REFERENCE_END = "[The End of Reference Answer]"
ANSWER_A_START = "[The Start of Assistant A's Answer]"
ANSWER_A_END = "[The End of Assistant A's Answer]"
ANSWER_B_START = "[The Start of Assistant B's Answer]"
ANSWER_B_END = "[The End of Assistant B's Answer]"

# Overlaps this close (in distinct shared words) are "too close to call": the first answer wins.
# Three words of a reference's 18 to 28: the demo's neighbouring models then tie on a third of
# their battles, so even the strongest has ties and a bounded interval (docs/ratings.md).
TIE_MARGIN = 3
MIN_WORD_LENGTH = 4
_WORD = re.compile(r"[a-z]+")


def words(text: str) -> set[str]:
    """The distinct words of `text` that count: ASCII letters, lower-cased, four or more."""
    return {word for word in _WORD.findall(text.lower()) if len(word) >= MIN_WORD_LENGTH}


def _section(prompt: str, start: str, end: str, *, after: int = 0) -> tuple[str, int] | None:
    """The text between `start` and the first `end` after it (searching from `after`), and the
    position just past `end`; None when either marker is missing."""
    begin = prompt.find(start, after)
    if begin < 0:
        return None
    begin += len(start)
    stop = prompt.find(end, begin)
    if stop < 0:
        return None
    return prompt[begin:stop], stop + len(end)


def battle_sections(prompt: str) -> tuple[str, str, str] | None:
    """(reference, answer A, answer B) of a pairwise prompt, in that order in the prompt; None
    when it is not one. Answer B is the last B section, so an answer A that quotes the markers
    cannot hide answer B."""
    reference = _section(prompt, REFERENCE_START, REFERENCE_END)
    if reference is None:
        return None
    first = _section(prompt, ANSWER_A_START, ANSWER_A_END, after=reference[1])
    if first is None:
        return None
    begin = prompt.rfind(ANSWER_B_START)
    if begin < first[1]:
        return None
    second = _section(prompt, ANSWER_B_START, ANSWER_B_END, after=begin)
    if second is None:
        return None
    return reference[0], first[0], second[0]


def overlaps(prompt: str) -> tuple[int, int] | None:
    """How many distinct words of the reference answer A and answer B share; None when the
    prompt is not a pairwise one."""
    sections = battle_sections(prompt)
    if sections is None:
        return None
    reference, first, second = (words(text) for text in sections)
    return len(first & reference), len(second & reference)


def pairwise_reply(prompt: str, *, margin: int = TIE_MARGIN) -> str | None:
    """The stand-in's reply to a pairwise battle prompt: "[[A]]" when answer A shares more than
    `margin` words more of the reference than answer B, "[[B]]" when B does, and "[[A]]" (the
    first answer, a position bias) when the two are within `margin`. None for any other
    prompt."""
    counted = overlaps(prompt)
    if counted is None:
        return None
    first, second = counted
    shares = (
        f"Assistant A's answer shares {first} words with the reference answer, "
        f"assistant B's {second}."
    )
    if second - first > margin:
        return f"{shares} [[B]]"
    if first - second > margin:
        return f"{shares} [[A]]"
    return f"{shares} Too close to call; this stand-in then prefers the first answer. [[A]]"
