"""Display names people type (a model's, a team's, an institution's, authors): normalised so that
what is stored is what a reader sees, refused when a character would hide, reorder or break
the text, and compared by what they look like (docs/names.md).

`normalise_display_name` is the rule; `confusable_key` is what two names share when they look
the same. The confusables data and the skeleton algorithm are ICU's (`icu.SpoofChecker`,
Unicode TR39 "Security Mechanisms" section 4), the reference implementation kept in step with
each Unicode release; see requirements.txt for why that package rather than the two pure-Python
confusables packages. General categories and character names come from Python's `unicodedata`.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import icu

from .exceptions import InvalidName

# Zl, Zp and these Cc are line breaks and tabs: said so in the message, for they are typed by
# accident (a pasted list of authors) rather than smuggled in.
LINE_BREAKS = frozenset("\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029")

# Bidirectional controls (Cf): embeddings, overrides, isolates and marks. They make a name
# display in another order than it is stored ("ledoM" shown as "Model"), so they get their
# own words in the message.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)

# Characters that display as blank space yet are not spaces, and so are not default-ignorable
# in Unicode's sense: the braille pattern blank, and the object replacement and replacement
# characters (U+FFFD usually means the text was not valid UTF-8 on its way here).
BLANK_LOOKING = {
    "\u2800": "a blank braille pattern, which displays as an empty space",
    "\ufffc": "a placeholder for an embedded object, not text",
    "\ufffd": "the replacement character, which usually means the text was not valid UTF-8",
}

# Categories refused outright (Unicode's General_Category): control, format, surrogate,
# private use, unassigned (noncharacters included), line and paragraph separators.
REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Cs": "a lone surrogate, which is not a character (the text was not valid Unicode)",
    "Co": "a private-use character, which has no agreed appearance",
    "Cn": (
        f"not an assigned character in Unicode {unicodedata.unidata_version} "
        "(the version this server knows)"
    ),
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}

# A raw value this many times over the limit is refused before it is even looked at: a
# 10 MB "name" costs nothing to refuse. NFKC expands a character to at most 18 (U+FDFA), but
# shrinks a long combining sequence by far less than 4x, so no name that would fit once
# normalised is refused by this early check.
RAW_LENGTH_FACTOR = 4

_SPACES = re.compile(r"\s+")


# Controls have no Unicode name, only aliases (NameAliases.txt), which `unicodedata.name` does
# not return: the ones people meet in pasted text, spelled as there.
CONTROL_NAMES = {
    "\x00": "NULL",
    "\t": "CHARACTER TABULATION",
    "\n": "LINE FEED",
    "\v": "LINE TABULATION",
    "\f": "FORM FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
    "\x85": "NEXT LINE",
}
UNNAMED = {"Cc": "<control>", "Cs": "<surrogate>", "Co": "<private use>", "Cn": "<unassigned>"}


def describe_character(character: str) -> str:
    """ "U+202E RIGHT-TO-LEFT OVERRIDE": the code point and its Unicode name (a control's
    alias; "<surrogate>", "<private use>" or "<unassigned>" for code points without one)."""
    name = (
        unicodedata.name(character, "")
        or CONTROL_NAMES.get(character)
        or UNNAMED.get(unicodedata.category(character), "<unnamed>")
    )
    return f"U+{ord(character):04X} {name}"


def refused_character(character: str, *, multiline_hint: str = "") -> str | None:
    """Why `character` may not appear in a display name, or None when it may."""
    if character in LINE_BREAKS:
        return f"a line break or tab (a name is one line{multiline_hint})"
    if character in BIDI_CONTROLS:
        return (
            "a bidirectional-text control, which makes a name display in another order "
            "than it is stored"
        )
    if character in BLANK_LOOKING:
        return BLANK_LOOKING[character]
    category = unicodedata.category(character)
    if category in REFUSED_CATEGORIES:
        return REFUSED_CATEGORIES[category]
    # Default_Ignorable_Code_Point (Unicode DerivedCoreProperties): characters every renderer
    # may draw as nothing: fillers such as U+3164 HANGUL FILLER, U+115F and U+FFA0, variation
    # selectors, the combining grapheme joiner. (Most are Cf, caught above.)
    if icu.Char.hasBinaryProperty(character, icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT):
        return "an invisible character, which displays as nothing"
    return None


def _first_refused(text: str, label: str, *, multiline_hint: str, normalised: bool) -> None:
    """Raise `InvalidName` naming the first refused character of `text` (1-based position),
    with how many there are in all when there are several."""
    found = [
        (position, character, why)
        for position, character in enumerate(text, start=1)
        if (why := refused_character(character, multiline_hint=multiline_hint))
    ]
    if not found:
        return
    position, character, why = found[0]
    where = "once normalised, character" if normalised else "character"
    more = f" ({len(found)} such characters in all)" if len(found) > 1 else ""
    raise InvalidName(
        f"{label}: {where} {position} is {describe_character(character)}, {why}; remove it{more}."
    )


def normalise_display_name(
    value: str, *, label: str, max_length: int, required: bool = True, multiline_hint: str = ""
) -> str:
    """The name as stored: no white space at either end, Unicode NFKC (full-width letters, ligatures such as "ﬁ" and other
    compatibility forms become the plain characters they stand for), every space character a
    plain space, runs of spaces one space, no space at either end.

    Refuses (`InvalidName`, the message naming `label`, the character's code point, Unicode
    name and 1-based position) a control character (line breaks and tabs included; see
    `refused_character` for the full list), an invisible formatting, bidi or filler character,
    a surrogate, a private-use or unassigned code point; a name longer than `max_length`
    characters once normalised; an empty name when `required`. `multiline_hint` is added to
    the message about a line break (e.g. how to separate authors).
    """
    if len(value) > max_length * RAW_LENGTH_FACTOR:
        raise InvalidName(
            f"{label} is {len(value):,} characters long; at most {max_length} are allowed."
        )
    # Surrounding white space goes first, as the web form and the API strip it: positions are
    # then counted alike on every path, and a trailing newline is tidied rather than refused.
    value = value.strip()
    _first_refused(value, label, multiline_hint=multiline_hint, normalised=False)
    text = unicodedata.normalize("NFKC", value)
    # NFKC can produce nothing refused from allowed characters in Unicode today; checked again
    # so that a future Unicode version cannot open a hole.
    _first_refused(text, label, multiline_hint=multiline_hint, normalised=True)
    text = _SPACES.sub(" ", text).strip()
    if required and not text:
        raise InvalidName(f"{label} is empty; it is required.")
    if len(text) > max_length:
        raise InvalidName(
            f"{label} is {len(text):,} characters long once normalised; at most {max_length} "
            "are allowed."
        )
    return text


@functools.cache
def _spoof_checker() -> icu.SpoofChecker:
    # One per process: building it loads the confusables table; `getSkeleton` is a const
    # method, safe to call from several threads (ICU's SpoofChecker documentation).
    return icu.SpoofChecker()


def skeleton(text: str) -> str:
    """Unicode TR39's skeleton(X): NFD, each character replaced by its confusables prototype,
    NFD again; two strings are confusable exactly when their skeletons are equal."""
    return _spoof_checker().getSkeleton(0, text)  # the type argument is unused since ICU 58


def confusable_key(name: str) -> str:
    """What two names share when a reader cannot tell them apart, case ignored: the skeleton
    of the case-folded skeleton of the NFKC form.

    Why both skeletons: TR39's skeleton keeps case, and case-folding first would miss an
    upper-case look-alike whose lower case looks different (Cyrillic U+041C looks like "M", but
    its lower case U+043C does not look like "m"); folding the skeleton alone would miss a
    lower-case look-alike ("m" becomes "rn", "M" stays "M"). The prototypes are a fixed point
    of the mapping (skeleton(skeleton(x)) == skeleton(x)), so the outer skeleton only maps
    what the folding produced.
    """
    return skeleton(skeleton(unicodedata.normalize("NFKC", name)).casefold())


def one_line(text: str, *, max_length: int | None = None) -> str:
    """`text` safe for a one-line context such as an email header: every control, format and
    line-breaking character replaced by a space, runs of spaces collapsed, cut to `max_length`
    (with an ellipsis). For text that was stored before names were checked."""
    cleaned = "".join(
        " " if unicodedata.category(character) in REFUSED_CATEGORIES else character
        for character in text
    )
    cleaned = _SPACES.sub(" ", cleaned).strip()
    if max_length is not None and len(cleaned) > max_length:
        cleaned = cleaned[: max_length - 1].rstrip() + "…"
    return cleaned
