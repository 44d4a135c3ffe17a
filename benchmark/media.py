"""What a verification re-run sends with a question, for any benchmark: media files found under
a folder, read as data URLs, and one user message's content in OpenAI's vision format.

The folder is a local `Path` (a development machine's files, the stand-in model's) or a
`MediaFolder`: the server's media, in the private store (`core.private_files.MediaFolder`,
docs/storage.md), which may be an S3 bucket rather than a disk.

Plugins build their re-run's messages with these (benchmark/plugins.py, `Rerun`), and so does
the verifying app; a plugin may import `benchmark.*` but never `verifying`, so the shared part
lives here. Plain Python, no Django.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_SIGNATURE = b"\xff\xd8\xff"

# One user message's content: a list of parts, {"type": "text", ...} or {"type": "image_url", ...}.
Content = list[dict[str, Any]]


@runtime_checkable
class MediaFolder(Protocol):
    """Media files named by their path relative to the folder; a path that leads outside it
    is missing and cannot be read."""

    def read(self, relative: str) -> bytes:
        """The file's bytes (`OSError` when it cannot be read or points outside)."""
        ...

    def missing(self, relatives: Sequence[str]) -> list[str]:
        """The paths of `relatives` that are not files in the folder, in order."""
        ...


# Where a re-run's media are: a local folder or a media folder of the private store.
Folder = Path | MediaFolder


def media_file(root: Path, relative: str) -> Path | None:
    """Where a media path is under `root`, or None when it points outside it."""
    path = (root / relative).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def missing_files(root: Folder, relatives: Iterable[str]) -> list[str]:
    """The paths of `relatives` that are not files under `root` (a path leading outside it
    counts as missing), in order."""
    if isinstance(root, MediaFolder):
        return root.missing(list(relatives))
    missing = []
    for relative in relatives:
        path = media_file(root, relative)
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


def file_urls(root: Folder, relatives: Iterable[str], *, what: str = "media") -> list[str]:
    """The data URLs of the files `relatives` under `root`, in order (`OSError` if one cannot
    be read or points outside `root`)."""
    urls = []
    for relative in relatives:
        if isinstance(root, MediaFolder):
            urls.append(data_url(root.read(relative), relative))
            continue
        path = media_file(root, relative)
        if path is None:
            raise OSError(f"{what} path {relative!r} points outside the {what} folder")
        urls.append(data_url(path.read_bytes(), relative))
    return urls


def image_part(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def vision_content(question: str, image_urls: Sequence[str]) -> Content:
    """One user message's content: every image, then the question."""
    return [image_part(url) for url in image_urls] + [text_part(question)]


def interleaved_content(texts: Sequence[str], image_urls: Sequence[str]) -> Content:
    """One user message's content with each image between two pieces of text: `texts[0]`,
    image 1, `texts[1]`, image 2, ..., `texts[-1]` (len(texts) == len(image_urls) + 1); an
    empty piece of text is left out."""
    if len(texts) != len(image_urls) + 1:
        raise ValueError(
            f"{len(image_urls)} images go between {len(image_urls) + 1} pieces of text, "
            f"not {len(texts)}"
        )
    content = [text_part(texts[0])] if texts[0] else []
    for url, text in zip(image_urls, texts[1:], strict=True):
        content.append(image_part(url))
        if text:
            content.append(text_part(text))
    return content
