"""Reading the letter of a multiple-choice answer (docs/clinicalqa.md, "The letter rule").

A model asked "Answer with the letter." still writes "Answer: C", "(c)", "B) Fever" or a
sentence. The rule, tried in this order; the first step that finds a letter gives it:

1. **The whole answer is one letter**: after stripping whitespace and the decoration
   ``( ) [ ] * _ ` ' " . : ,`` around it, one of A-D in any case ("B", "c", "(d)", "**A**.").
2. **A stated answer**: the word "answer" (any case), optionally "is", a colon, dash or
   equals sign, "option" or "choice", then a letter: a capital A-D standing alone ("The answer
   is B because ..."), or any case in brackets ("answer: (c)") or followed by the end of the
   text or by ``. , ; : ) ]`` ("answer is d."). The first such statement counts.
3. **A letter in brackets**: the first "(x)" or "[x]" with x one of A-D in any case.
4. **A standalone capital**: the first capital A-D with no letter, digit, underscore,
   apostrophe or hyphen directly before or after it ("B. Fever", "I think C").

Lower-case letters are read only by steps 1-3, because "a" is an English word. Step 4 reads
the article "A" at the start of a sentence as the letter A ("A fever is likely" reads A): that
is the rule, kept because a model told to answer with the letter rarely starts so, and a
rule that guessed would be harder to state. A letter beyond D ("E") is never read. An answer
where no step finds a letter is unreadable: it scores 0 and is counted in the result.

Plain Python, no Django.
"""

from __future__ import annotations

import re

_DECORATION = "\\s()\\[\\]*_`'\".:,"
_WHOLE = re.compile(f"[{_DECORATION}]*([A-Da-d])[{_DECORATION}]*")
_STATED = re.compile(
    r"\banswer\b\s*(?:is\b\s*)?(?:[:=-]\s*)?(?:(?:option|choice)\s+)?"
    r"(?:"
    r"(?P<capital>(?-i:[A-D]))(?![\w'-])"
    r"|[(\[](?P<bracketed>[A-Da-d])[)\]]"
    r"|(?P<closing>[A-Da-d])(?=\s*(?:$|[.,;:)\]]))"
    r")",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"[(\[]([A-Da-d])[)\]]")
_STANDALONE = re.compile(r"(?<![\w'-])([A-D])(?![\w'-])")


def read_letter(text: str) -> str | None:
    """The capital letter A-D the answer `text` gives under the rule above, or None."""
    if found := _WHOLE.fullmatch(text):
        return found.group(1).upper()
    if found := _STATED.search(text):
        return (
            found.group("capital") or found.group("bracketed") or found.group("closing")
        ).upper()
    if found := _BRACKETED.search(text):
        return found.group(1).upper()
    if found := _STANDALONE.search(text):
        return found.group(1)
    return None
