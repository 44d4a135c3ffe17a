"""A small synthetic frames folder for the demo test set: a tiny PNG at every frame path that a
re-run would send, so the platform's re-run of a model (verifying) can be tried without the
real videos.

Which frames a re-run sends is the verifying app's rule (`plugins.medvidbench.rerun.sampled_indices`):
evenly spaced indices including the first and the last. It is repeated here because the
benchmark app may not import a higher one; tests/verifying holds the two together. Each image is
4 x 4 pixels whose colours are a hash of its clip's frame paths: deterministic, unique per clip,
about 100 bytes, one file per clip and hard links for its other frames. No Django, no Pillow."""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FRAME_SIZE = 4
DEFAULT_MAX_FRAMES = 8  # Benchmark.rerun_max_frames' default


def picked_indices(count: int, limit: int) -> list[int]:
    """The frames a re-run sends out of `count` (see the module docstring)."""
    if count <= limit:
        return list(range(count))
    if limit == 1:
        return [0]
    return [round(i * (count - 1) / (limit - 1)) for i in range(limit)]


def tiny_png(seed: str, size: int = FRAME_SIZE) -> bytes:
    """A `size` x `size` RGB PNG whose pixels are the sha256 stream of `seed`."""
    needed = size * size * 3
    stream = b""
    counter = 0
    while len(stream) < needed:
        stream += hashlib.sha256(f"{seed}\n{counter}".encode()).digest()
        counter += 1
    rows = b"".join(b"\x00" + stream[row * size * 3 : (row + 1) * size * 3] for row in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def clip_frames(records: Iterable[dict[str, Any]], max_frames: int) -> list[list[str]]:
    """The frame paths a re-run would send, one list per clip (the records sharing one `video`
    list, i.e. the questions on one clip), in first-seen order; a path two clips send is kept
    in the first clip only."""
    seen: set[str] = set()
    clips: dict[tuple[str, ...], list[str]] = {}
    for record in records:
        video = record.get("video")
        if not (isinstance(video, list) and all(isinstance(path, str) for path in video)):
            continue
        key = tuple(video)
        if key in clips:
            continue
        picked = [video[index] for index in picked_indices(len(video), max_frames)]
        clips[key] = [path for path in dict.fromkeys(picked) if path not in seen]
        seen.update(clips[key])
    return [paths for paths in clips.values() if paths]


def frame_paths(records: Iterable[dict[str, Any]], max_frames: int) -> list[str]:
    """The distinct frame paths a re-run would send for these records, in first-seen order."""
    return [path for paths in clip_frames(records, max_frames) for path in paths]


def write_frames(
    frames_dir: Path, records: Iterable[dict[str, Any]], *, max_frames: int = DEFAULT_MAX_FRAMES
) -> int:
    """Write every frame a re-run would send, named as the record's path (even where that ends
    in .jpg: the re-run reads the type from the bytes). Returns how many paths were written.

    One tiny PNG per clip, hashed from the clip's frame paths, so each question's frames are
    the same on every run and differ from every other clip's (a model, or the stand-in
    model, tells the clips apart by them); the clip's other frames are hard links to it
    (copies where the file system has none). That is 2,580 small files and 18,000 links for
    the demo test set instead of 20,600 files: about 10 MB on disk instead of 80 MB, and
    quicker to write (docs/verification.md has the figures). A path that already exists is
    replaced, never written through, so an old link cannot change another clip's frame."""
    root = frames_dir.resolve()
    made: set[Path] = set()
    count = 0
    for paths in clip_frames(records, max_frames):
        content = tiny_png("\n".join(paths))
        first: Path | None = None
        for relative in paths:
            target = _target(root, relative)
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            if first is None:
                _replace_with(target, content)
                first = target
            else:
                _link(first, target, content)
            count += 1
    return count


def _target(root: Path, relative: str) -> Path:
    # A plain check rather than Path.resolve() per frame (tens of thousands of syscalls): the
    # path must stay below the root.
    normal = os.path.normpath(relative)
    if os.path.isabs(normal) or normal == ".." or normal.startswith("../"):
        raise ValueError(f"frame path {relative!r} points outside the frames folder")
    return root / normal


def _replace_with(target: Path, content: bytes) -> None:
    temporary = target.with_name(target.name + ".part")
    temporary.write_bytes(content)
    os.replace(temporary, target)


def _link(source: Path, target: Path, content: bytes) -> None:
    try:
        os.link(source, target)
    except FileExistsError:
        target.unlink()
        os.link(source, target)
    except OSError:  # no hard links here (some network or FAT file systems): a copy
        _replace_with(target, content)
