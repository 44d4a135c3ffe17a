"""The demo clinical QA benchmark's re-run (benchmark/plugins.py, `Rerun`), which hosted
evaluation uses too: each item's question as one text-only user message, and the model's
answers as a predictions file `[{"id", "answer"}]` in test-set order.

The message (docs/clinicalqa.md, "What a model is asked"): a multiple-choice item sends its
question, a blank line, the options one a line ("A. ..." to "D. ..."), a blank line and
"Answer with the letter."; an open-ended item sends its question as written (MEDIC: "without
special prompting"). There are no media: `media_paths` and `missing_media` are empty and
`write_demo_media` writes nothing.

Plain Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from benchmark import media
from benchmark.plugins import DemoFiles
from benchmark.scoring.strict_json import without_refused_characters

from .scoring import LETTERS, ClinicalQATestSet, Item

ANSWER_INSTRUCTION = "Answer with the letter."


def question_text(item: Item) -> str:
    """The text a model is asked for `item` (the rule above)."""
    if item.options is None:
        return item.question
    options = "\n".join(
        f"{letter}. {text}" for letter, text in zip(LETTERS, item.options, strict=True)
    )
    return f"{item.question}\n\n{options}\n\n{ANSWER_INSTRUCTION}"


class ClinicalQARerun:
    media_in_slug_folder = True
    media_label = "media"

    def media_paths(
        self, test_set: ClinicalQATestSet, max_media: int, indexes: Iterable[int] | None = None
    ) -> list[str]:
        return []

    def missing_media(
        self,
        test_set: ClinicalQATestSet,
        root: media.Folder,
        max_media: int,
        indexes: Iterable[int] | None = None,
    ) -> list[str]:
        return []

    def questions(
        self,
        test_set: ClinicalQATestSet,
        root: media.Folder,
        max_media: int,
        indexes: Iterable[int],
    ) -> Iterator[tuple[int, Callable[[], media.Content]]]:
        for index in indexes:
            item = test_set.items[index]

            def build(item: Item = item) -> media.Content:
                return [media.text_part(question_text(item))]

            yield item.index, build

    def predictions_file(
        self, test_set: ClinicalQATestSet, answers: Mapping[int, str], options: Mapping[str, str]
    ) -> bytes:
        rows = [
            # The strict reader refuses control characters in a text; a model's are dropped.
            {"id": item.id, "answer": without_refused_characters(answers.get(item.index, ""))}
            for item in test_set.items
        ]
        return json.dumps(rows, ensure_ascii=False).encode()

    def write_demo_media(
        self, files: DemoFiles, test_set: ClinicalQATestSet, root: Path, max_media: int
    ) -> tuple[int, str]:
        return 0, "Demo clinical QA: its questions are text only, no media to put in place."


rerun = ClinicalQARerun()
