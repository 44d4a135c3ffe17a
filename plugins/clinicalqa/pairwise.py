"""The demo clinical QA benchmark's pairwise-judged category (benchmark/plugins.py, `Pairwise`):
the open-ended questions, a model's answers to them, the judge's prompt for one battle and how
its reply is read. The platform schedules the battles, sends each prompt twice with the
answers swapped and calls a battle whose preferred answer changes with the positions a tie
(docs/ratings.md).

The prompt is MT-Bench's reference-guided pairwise format (Zheng et al., 2023, "Judging
LLM-as-a-Judge", figure 8): an instruction, then "[User Question]", the reference answer
between "[The Start of Reference Answer]" and "[The End of Reference Answer]", and each
assistant's answer between its own start and end markers; the judge ends with "[[A]]",
"[[B]]" or "[[C]]" (a tie).

Where the reference goes: `questions` gives the bare question (public: battles are exported
by question key), `references` the reference answers (ground truth: for the judge's prompt
only), and `battle_prompt(question, first, second, reference=...)` lays them out as MT-Bench
does (docs/clinicalqa.md, "The open-ended category").

Plain Python, no Django.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .scoring import OPEN_ENDED, ClinicalQATestSet, Item

# The board category rated from battles, and the item category its questions come from.
RATING_CATEGORY = "open_ended"
REFERENCE_START = "[The Start of Reference Answer]"
REFERENCE_END = "[The End of Reference Answer]"
ANSWER_A_START = "[The Start of Assistant A's Answer]"
ANSWER_A_END = "[The End of Assistant A's Answer]"
ANSWER_B_START = "[The Start of Assistant B's Answer]"
ANSWER_B_END = "[The End of Assistant B's Answer]"
INSTRUCTION = (
    "Please act as an impartial judge and compare the answers two AI assistants gave to the "
    "clinical question below. Judge correctness and helpfulness. You are given a reference "
    "answer, assistant A's answer and assistant B's answer: start by comparing both answers "
    "with the reference answer, and point out any mistakes. Do not let the order of the "
    "answers, their length or the assistants' names influence you, and be as objective as "
    "possible. After your explanation, give your final verdict in exactly this format: "
    '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.'
)
VERDICTS = {"A": "first", "B": "second", "C": "tie"}
_VERDICT = re.compile(r"\[\[([ABC])\]\]")


class ClinicalQAPairwise:
    def _items(self, test_set: ClinicalQATestSet, category: str) -> tuple[Item, ...]:
        if category != RATING_CATEGORY:
            raise ValueError(
                f"the demo clinical QA benchmark rates only its {RATING_CATEGORY!r} category "
                f"from battles, not {category!r}"
            )
        return test_set.of_category(OPEN_ENDED)

    def questions(self, test_set: ClinicalQATestSet, category: str) -> Sequence[tuple[str, str]]:
        """(item id, question), for the open-ended items in test-set order."""
        return tuple((item.id, item.question) for item in self._items(test_set, category))

    def references(self, test_set: ClinicalQATestSet, category: str) -> Mapping[str, str]:
        """Item id -> its reference answer (private: for the judge's prompt only)."""
        return {item.id: item.reference for item in self._items(test_set, category)}

    def answers(
        self, test_set: ClinicalQATestSet, predictions: Sequence[str], category: str
    ) -> Mapping[str, str]:
        """Item id -> the model's answer, from `check_predictions`' result (answers in
        test-set order)."""
        if len(predictions) != len(test_set):
            raise ValueError(f"{len(predictions)} answers for {len(test_set)} test items")
        return {item.id: predictions[item.index] for item in self._items(test_set, category)}

    def battle_prompt(self, question: str, first: str, second: str, *, reference: str = "") -> str:
        """The judge's prompt with `first` as assistant A's answer and `second` as B's, the
        reference answer in MT-Bench's reference section after the question."""
        shown = f"{question}\n\n{REFERENCE_START}\n{reference}\n{REFERENCE_END}"
        return (
            f"{INSTRUCTION}\n\n"
            f"[User Question]\n{shown}\n\n"
            f"{ANSWER_A_START}\n{first}\n{ANSWER_A_END}\n\n"
            f"{ANSWER_B_START}\n{second}\n{ANSWER_B_END}"
        )

    def read_verdict(self, text: str) -> str | None:
        """ "first" for [[A]], "second" for [[B]], "tie" for [[C]]: the last of these markers
        in the reply wins (a judge that explains itself may quote the format before its
        verdict); None when the reply holds none. Exactly as written: "[[a]]" or "[[ A ]]"
        is no verdict."""
        found = _VERDICT.findall(text)
        return VERDICTS[found[-1]] if found else None


pairwise = ClinicalQAPairwise()
