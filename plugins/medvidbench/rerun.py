"""MedVidBench's verification re-run (benchmark/plugins.py, `Rerun`): which of a sample's
frames are sent, where they are on disk, the message (every sampled frame, then the question)
and the answers as a predictions file in MedVidBench's format, rows `{id, qa_type,
prediction}` in test-set order.

The sampling rule (docs/verification.md; the spec is silent): at most `limit` frames, at evenly
spaced indices that include the first and the last, `round(i * (n - 1) / (limit - 1))` for
i = 0 .. limit - 1; a sample with `limit` frames or fewer sends all of them. The frames are the
sample's `video` paths relative to the top of the private store's frames/ (where they were before there
were plugins, so `media_in_slug_folder` is False). No Django here.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from benchmark import media
from benchmark.plugins import DemoFiles
from benchmark.scoring.strict_json import without_refused_characters
from plugins.medvidbench.scoring import TestSet
from plugins.medvidbench.scoring.ground_truth import Sample


def sampled_indices(count: int, limit: int) -> list[int]:
    """The indices of the frames sent out of `count`, in order (the rule above)."""
    if count <= limit:
        return list(range(count))
    if limit == 1:
        return [0]
    return [round(i * (count - 1) / (limit - 1)) for i in range(limit)]


def sampled_frames(frames: Sequence[str], limit: int) -> list[str]:
    return [frames[i] for i in sampled_indices(len(frames), limit)]


def frame_urls(sample: Sample, root: media.Folder, limit: int) -> list[str]:
    """The data URLs of the sample's sampled frames (`OSError` if one cannot be read)."""
    return media.file_urls(root, sampled_frames(sample.frames, limit), what="frame")


def _samples(test_set: TestSet, indexes: Iterable[int] | None) -> Iterator[Sample]:
    if indexes is None:
        yield from test_set.samples
    else:
        for index in indexes:
            yield test_set.samples[index]


class MedVidBenchRerun:
    media_in_slug_folder = False
    media_label = "frame"

    def media_paths(
        self, test_set: TestSet, max_media: int, indexes: Iterable[int] | None = None
    ) -> list[str]:
        # Questions on one clip share its frames: each path once, in order.
        paths = dict.fromkeys(
            path
            for sample in _samples(test_set, indexes)
            for path in sampled_frames(sample.frames, max_media)
        )
        return list(paths)

    def missing_media(
        self,
        test_set: TestSet,
        root: media.Folder,
        max_media: int,
        indexes: Iterable[int] | None = None,
    ) -> list[str]:
        return media.missing_files(root, self.media_paths(test_set, max_media, indexes))

    def questions(
        self, test_set: TestSet, root: media.Folder, max_media: int, indexes: Iterable[int]
    ) -> Iterator[tuple[int, Callable[[], media.Content]]]:
        # A clip's questions are asked one after another and send the same frames: the last
        # clip's data URLs are kept (one clip, so memory stays small; a race between two
        # workers only reads a clip twice).
        last: dict[str, tuple[tuple[str, ...], list[str]]] = {}
        for sample in _samples(test_set, indexes):

            def build(sample: Sample = sample) -> media.Content:
                kept = last.get("clip")
                if kept is not None and kept[0] == sample.frames:
                    urls = kept[1]
                else:
                    urls = frame_urls(sample, root, max_media)
                    last["clip"] = (sample.frames, urls)
                return media.vision_content(sample.question, urls)

            yield sample.index, build

    def predictions_file(
        self, test_set: TestSet, answers: Mapping[int, str], options: Mapping[str, str]
    ) -> bytes:
        # A model may answer with control characters the strict reader refuses in any file (a
        # terminal colour code, say): they are dropped here, so the platform's own file is read.
        rows = [
            {
                "id": sample.id,
                "qa_type": sample.qa_type,
                "prediction": without_refused_characters(answers.get(sample.index, "")),
            }
            for sample in test_set.samples
        ]
        return json.dumps(rows, ensure_ascii=False).encode()

    def write_demo_media(
        self, files: DemoFiles, test_set: TestSet, root: Path, max_media: int
    ) -> tuple[int, str]:
        """The demo test set's frames, synthetic (one tiny PNG per clip, hard links for the
        rest: `demo_testset.frames`), unless a stamp under `root` says they were written for
        this very ground truth and frame limit."""
        ground_truth = files.test_set.read_bytes()
        stamp = f"{hashlib.sha256(ground_truth).hexdigest()} max_frames={max_media}\n"
        stamp_path = root / FRAMES_STAMP
        if stamp_path.is_file() and stamp_path.read_text() == stamp:
            return 0, f"The demo frames are in place under {root}."
        # Imported here: the demo package is a development machine's, and every process that
        # loads the plugins (`manage.py score` among them) would import it (issue 16).
        from plugins.medvidbench.demo_testset.frames import write_frames

        started = time.perf_counter()
        count = write_frames(root, json.loads(ground_truth), max_frames=max_media)
        stamp_path.write_text(stamp)
        return count, (
            f"Wrote the {count} demo frames a re-run sends under {root} in "
            f"{time.perf_counter() - started:.1f} s (one tiny PNG per clip, hard links for the "
            "rest)."
        )


# Written beside the demo frames: the ground truth and frame limit they were written for.
FRAMES_STAMP = ".demo-frames"

rerun = MedVidBenchRerun()
