"""The letter rule (docs/clinicalqa.md): which letter a multiple-choice answer gives, step by
step, and the answers that give none."""

import pytest

from plugins.clinicalqa.scoring import read_letter

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        # 1. the whole answer is one letter, in any case, with decoration around it
        ("B", "B"),
        ("c", "C"),
        (" (d) ", "D"),
        ("**A**.", "A"),
        ("[b]", "B"),
        ("'C'", "C"),
        # 2. a stated answer: a standalone capital, a bracketed or a closing letter
        ("Answer: C", "C"),
        ("The answer is B because the liver is affected.", "B"),
        ("The answer is (b)", "B"),
        ("answer is d.", "D"),
        ("ANSWER - option A", "A"),
        ("Final answer=choice c", "C"),
        ("Both A and B look right, but the answer is D.", "D"),  # the statement wins
        # 3. the first letter in brackets
        ("I think (c) is right", "C"),
        ("Options [a] and (b) both fit; [a] more.", "A"),
        # 4. the first standalone capital
        ("B) Fever", "B"),
        ("I think C", "C"),
        ("It must be D, not B.", "D"),
        ("A fever is likely", "A"),  # the article reads as A: the rule, documented
        ("**C**: the spleen", "C"),
    ],
)
def test_the_letter_each_step_reads(text, letter):
    assert read_letter(text) == letter


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "I am not sure.",
        "E",  # beyond D
        "The answer is a fever",  # a lower-case word is not a letter
        "a cat",
        "B-cell lymphoma",  # a hyphen joins the letter to a word
        "choose from A-D",
        "Vitamin D's role",  # an apostrophe joins it too
        "Bd",
        "d2",
        "option e",
    ],
)
def test_answers_without_a_letter(text):
    assert read_letter(text) is None


def test_a_stated_lower_case_letter_needs_brackets_or_an_end():
    assert read_letter("the answer is c, the lungs") == "C"
    assert read_letter("the answer is c the lungs") is None
