"""A small synthetic frames folder for the demo test set: one tiny PNG per frame path that a
re-run would send, so the platform's re-run of a model (verifying) can be tried without the
real videos.

Which frames a re-run sends is the verifying app's rule (`verifying.frames.sampled_indices`):
evenly spaced indices including the first and the last. It is repeated here because the
benchmark app may not import a higher one; tests/verifying holds the two together. Each image is
4 x 4 pixels whose colours are a hash of its path: deterministic, unique per frame (hence per
clip), about 100 bytes. No Django, no Pillow.
"""

from __future__ import annotations

import hashlib
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


def frame_paths(records: Iterable[dict[str, Any]], max_frames: int) -> list[str]:
    """The distinct frame paths a re-run would send for these records, in first-seen order."""
    seen: dict[str, None] = {}
    for record in records:
        video = record.get("video")
        if not (isinstance(video, list) and all(isinstance(path, str) for path in video)):
            continue
        for index in picked_indices(len(video), max_frames):
            seen.setdefault(video[index], None)
    return list(seen)


def write_frames(
    frames_dir: Path, records: Iterable[dict[str, Any]], *, max_frames: int = DEFAULT_MAX_FRAMES
) -> int:
    """Write a tiny PNG for every frame a re-run would send (named as the record's path, even
    where that ends in .jpg: the re-run reads the type from the bytes). Returns how many."""
    paths = frame_paths(records, max_frames)
    root = frames_dir.resolve()
    for relative in paths:
        target = (root / relative).resolve()
        if not target.is_relative_to(root):
            raise ValueError(f"frame path {relative!r} points outside {frames_dir}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(tiny_png(relative))
    return len(paths)
