"""The frames sent with each question: which of a sample's frame paths are picked, where they
are on disk, and how they travel (data URLs in the OpenAI vision format).

The sampling rule (docs/verification.md; the spec is silent): at most `limit` frames, at evenly
spaced indices that include the first and the last, `round(i * (n - 1) / (limit - 1))` for
i = 0 .. limit - 1; a sample with `limit` frames or fewer sends all of them. No Django here.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmark.scoring.ground_truth import Sample

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_SIGNATURE = b"\xff\xd8\xff"


def sampled_indices(count: int, limit: int) -> list[int]:
    """The indices of the frames sent out of `count`, in order (the rule above)."""
    if count <= limit:
        return list(range(count))
    if limit == 1:
        return [0]
    return [round(i * (count - 1) / (limit - 1)) for i in range(limit)]


def sampled_frames(frames: Sequence[str], limit: int) -> list[str]:
    return [frames[i] for i in sampled_indices(len(frames), limit)]


def frame_file(root: Path, relative: str) -> Path | None:
    """Where a frame path is under `root`, or None when it points outside it."""
    path = (root / relative).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def missing_frames(samples: Iterable[Sample], root: Path, limit: int) -> list[str]:
    """The sampled frame paths that are not files under `root`, in test-set order."""
    missing = []
    for sample in samples:
        for relative in sampled_frames(sample.frames, limit):
            path = frame_file(root, relative)
            if path is None or not path.is_file():
                missing.append(relative)
    return missing


def data_url(content: bytes, name: str = "") -> str:
    """`data:<type>;base64,...`; the type from the bytes (PNG, JPEG), else from the name."""
    if content.startswith(PNG_SIGNATURE):
        media_type = "image/png"
    elif content.startswith(JPEG_SIGNATURE):
        media_type = "image/jpeg"
    else:
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return f"data:{media_type};base64,{base64.b64encode(content).decode('ascii')}"


def frame_urls(sample: Sample, root: Path, limit: int) -> list[str]:
    """The data URLs of the sample's sampled frames (`OSError` if one cannot be read)."""
    urls = []
    for relative in sampled_frames(sample.frames, limit):
        path = frame_file(root, relative)
        if path is None:
            raise OSError(f"frame path {relative!r} points outside the frames folder")
        urls.append(data_url(path.read_bytes(), relative))
    return urls


def vision_content(question: str, image_urls: Sequence[str]) -> list[dict[str, Any]]:
    """One user message's content: every frame as an image, then the question."""
    return [{"type": "image_url", "image_url": {"url": url}} for url in image_urls] + [
        {"type": "text", "text": question}
    ]
