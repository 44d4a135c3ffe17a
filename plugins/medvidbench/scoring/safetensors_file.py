"""Reading a `.safetensors` file's tensors into numpy, the largest one memory-mapped.

The format (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length
N, N bytes of JSON header `{name: {"dtype", "shape", "data_offsets": [begin, end]}, ...}`
(plus an optional "__metadata__"), then the tensors' bytes, offsets relative to the end of the
header. `safetensors.numpy.load_file` reads every tensor into memory: ~90 MB for
all-MiniLM-L6-v2, of which the word-embedding table (30,522 x 384, 47 MB) is mostly never
touched, since a scoring run looks up a few thousand token ids. Here the tables named in
`mapped` (the NAP encoder maps them all) are read-only arrays over a memory map of the file
(only the pages used are paged in, and shared between processes through the page cache); the
rest are read into ordinary arrays. Values and shapes are the same as `load_file`'s (tests/benchmark/scoring/test_embedding.py).

Pure Python + numpy, no Django.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from pathlib import Path
from typing import Literal

import numpy as np

# The dtypes this reader knows (all-MiniLM-L6-v2 has F32 weights and I64 position ids).
DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
# A header larger than this is not a model file we read (the format caps it at 100 MB).
MAX_HEADER_BYTES = 100_000_000


def read_tensors(
    path: Path, *, mapped: Collection[str] | Literal["all"] = ()
) -> dict[str, np.ndarray]:
    """Every tensor of the file by name: those in `mapped` (or all, with "all") as read-only
    memory maps, the rest read into memory. Raises ValueError naming the file when it is not
    a safetensors file of known dtypes whose tensors lie inside it."""
    path = Path(path)
    size = path.stat().st_size
    with path.open("rb") as file:
        prefix = file.read(8)
        header_length = int.from_bytes(prefix, "little") if len(prefix) == 8 else -1
        if not 0 < header_length <= min(MAX_HEADER_BYTES, size - 8):
            raise ValueError(f"{path}: not a safetensors file (header length {header_length})")
        try:
            header = json.loads(file.read(header_length))
        except ValueError:
            raise ValueError(f"{path}: the safetensors header is not JSON") from None
        start = 8 + header_length
        tensors = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            dtype, shape, offset = _place(path, name, entry, size - start)
            if mapped == "all" or name in mapped:
                array = np.memmap(path, dtype=dtype, mode="r", offset=start + offset, shape=shape)
            else:
                file.seek(start + offset)
                array = np.fromfile(file, dtype=dtype, count=math.prod(shape)).reshape(shape)
            tensors[name] = array
    return tensors


def _place(path: Path, name: str, entry: object, data_size: int) -> tuple[np.dtype, tuple, int]:
    """(dtype, shape, offset in the data) of one header entry, checked against the file."""
    try:
        dtype = DTYPES[entry["dtype"]]
        shape = tuple(int(n) for n in entry["shape"])
        begin, end = (int(n) for n in entry["data_offsets"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{path}: tensor {name!r} has an unreadable header entry") from None
    if min(shape, default=0) < 0 or not 0 <= begin <= end <= data_size:
        raise ValueError(f"{path}: tensor {name!r} lies outside the file")
    if end - begin != math.prod(shape) * dtype.itemsize:
        raise ValueError(f"{path}: tensor {name!r} has {end - begin} bytes, not {shape} {dtype}")
    return dtype, shape, begin
