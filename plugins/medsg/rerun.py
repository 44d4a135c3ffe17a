"""MedSG-Bench's verification re-run (benchmark/plugins.py, `Rerun`): each item's images and
question as one user message, and the answers as a MedSG-Bench predictions file, rows
`{index, task, prediction}` in test-set order, the answer's text as the prediction (scored in
the box convention the entry declared, as its upload was).

Where the images are: the test set's `images` paths are relative to the evaluation JSON's
folder; on the server they are under the benchmark's media folder, the private store's frames/<slug>/
(`media_in_slug_folder`), at the same relative paths (docs/verification.md).

The message (our choice; the spec is silent): an item's question names its images with
`<image>` placeholders ("Image-1: <image>\\nImage-2: <image>\\n..."), so when it holds exactly
one placeholder per image, each image takes its placeholder's place between the pieces of
text; otherwise every image comes first, then the question as written. Every image of an item
is sent, whatever the benchmark's `rerun_max_frames`: the question refers to each of them.
No Django here.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from benchmark import media
from benchmark.plugins import DemoFiles
from benchmark.scoring.strict_json import without_refused_characters

from .scoring import Item, MedSGTestSet

IMAGE_PLACEHOLDER = "<image>"


def _items(test_set: MedSGTestSet, indexes: Iterable[int] | None) -> Iterator[Item]:
    if indexes is None:
        yield from test_set.items
    else:
        for index in indexes:
            yield test_set.items[index]


def item_content(item: Item, image_urls: list[str]) -> media.Content:
    """The user message's content for `item` with its images' data URLs (the rule above)."""
    pieces = item.question.split(IMAGE_PLACEHOLDER)
    if len(pieces) == len(image_urls) + 1:
        return media.interleaved_content(pieces, image_urls)
    return media.vision_content(item.question, image_urls)


class MedSGRerun:
    media_in_slug_folder = True
    media_label = "image"

    def media_paths(
        self, test_set: MedSGTestSet, max_media: int, indexes: Iterable[int] | None = None
    ) -> list[str]:
        return list(
            dict.fromkeys(path for item in _items(test_set, indexes) for path in item.images)
        )

    def missing_media(
        self,
        test_set: MedSGTestSet,
        root: media.Folder,
        max_media: int,
        indexes: Iterable[int] | None = None,
    ) -> list[str]:
        return media.missing_files(root, self.media_paths(test_set, max_media, indexes))

    def questions(
        self, test_set: MedSGTestSet, root: media.Folder, max_media: int, indexes: Iterable[int]
    ) -> Iterator[tuple[int, Callable[[], media.Content]]]:
        for item in _items(test_set, indexes):

            def build(item: Item = item) -> media.Content:
                return item_content(item, media.file_urls(root, item.images, what="image"))

            yield item.index, build

    def predictions_file(
        self, test_set: MedSGTestSet, answers: Mapping[int, str], options: Mapping[str, str]
    ) -> bytes:
        rows = [
            {
                "index": item.index,
                "task": item.task,
                # The strict reader refuses control characters in a text; a model's are dropped.
                "prediction": without_refused_characters(answers.get(item.index, "")),
            }
            for item in test_set.items
        ]
        return json.dumps(rows, ensure_ascii=False).encode()

    def write_demo_media(
        self, files: DemoFiles, test_set: MedSGTestSet, root: Path, max_media: int
    ) -> tuple[int, str]:
        """Copy the demo's images from the test set's folder (where `write_demo` put them) to
        `root`, each file whose copy is missing or differs (written aside, then moved in)."""
        source = files.test_set.parent
        copied = 0
        for relative in self.media_paths(test_set, max_media):
            origin, target = media.media_file(source, relative), media.media_file(root, relative)
            if origin is None or target is None:
                raise ValueError(f"the demo image path {relative!r} points outside its folder")
            content = origin.read_bytes()
            if target.is_file() and target.read_bytes() == content:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(content)
            os.replace(temporary, target)
            copied += 1
        if copied:
            return copied, f"MedSG-Bench: {copied} demo image files copied to {root}"
        return 0, f"MedSG-Bench: the demo image files are in place under {root}."


rerun = MedSGRerun()
