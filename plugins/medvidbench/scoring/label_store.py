"""Class-label embeddings kept on disk between processes (docs/nap-engine.md, "The label store").

NAP_acc compares each answer that is not exactly a class label with the labels of its class
list: MedVidBench has ~27 lists of ~100 distinct labels. Embedding them costs ~1 s of CPU, more
than the rest of a scoring run, and gives the same bits on every run on one machine (a text's
embedding is a function of its token sequence alone, embedding.py). So `SentenceEncoder` keeps
each list's embeddings here once and reads them back (~0.1 ms a list) in every later process:
`manage.py score`, each web and worker process.

Never other bits than computing them would give:

- The folder of a store is named by a fingerprint of everything those bits depend on
  (`fingerprint`): the engine's source, the model's files, numpy's version and the CPU
  features it dispatches on, the BLAS library, its kernel and thread cap, and the encoder's
  settings. When any of them changes, a new folder is used; the old one is never read again.
- The first list a store reads is checked: its first label is embedded afresh and must equal
  the stored row bit for bit, else the store is not used again in that process. (A check for
  a change the fingerprint misses, not for a file edited by hand: only its first row is.)
- Files are written to a temporary name and renamed, so concurrent processes never read half
  a file; one that cannot be read, or has the wrong shape or dtype, is ignored and rewritten.

Besides lists, the store keeps single token sequences (`get_sequences`, `put_sequences`):
the submitted answers NAP_acc embeds, one small file each under `sequences/`, so an answer any
earlier run on the machine embedded (another model's identical answer, the same file scored
again, a re-run's answers) is read, not computed. The same fingerprint and check guard them.

The files are the embeddings of class labels, including (for a dataset without a fixed list)
labels gathered from the ground truth, and of submitted answers: keep the folder as private as
the test sets and the predictions (PODIUM_NAP_LABEL_STORE, .env.example). Pure Python + numpy,
no Django.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

#: The environment variable naming the stores' folder; empty or "off": no store.
ENVIRONMENT_VARIABLE = "PODIUM_NAP_LABEL_STORE"
_OFF = ("", "off", "none", "0")


def default_folder() -> Path | None:
    """PODIUM_NAP_LABEL_STORE when set (None when empty or "off"), else the user's cache
    folder: $XDG_CACHE_HOME/podium/nap-labels, or ~/.cache/podium/nap-labels."""
    value = os.environ.get(ENVIRONMENT_VARIABLE)
    if value is not None:
        return None if value.strip().lower() in _OFF else Path(value).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "podium" / "nap-labels"


def fingerprint(
    *, engine_source: Path | Sequence[Path], model_files: Sequence[Path], settings: object
) -> str:
    """A name for everything an embedding's bits depend on, besides the text (see the module
    docstring). `settings` are the encoder's own, any JSON-able value (heads, LayerNorm eps,
    sequence length, BLAS thread cap). Reads the engine's source and the model files' first
    64 KiB (the weights' header, the tokenizer's start), sizes and times: ~2 ms."""
    parts: dict[str, Any] = {
        "engine": [_digest(path.read_bytes()) for path in _paths(engine_source)],
        "model": [_file_identity(path) for path in model_files],
        "settings": settings,
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpu_features": _numpy_cpu_features(),
        "blas": _blas_libraries(),
    }
    return _digest(json.dumps(parts, sort_keys=True, default=str).encode())[:32]


def _paths(paths: Path | Sequence[Path]) -> list[Path]:
    return [paths] if isinstance(paths, Path) else list(paths)


class LabelStore:
    """The embeddings of label lists under `folder/<fingerprint>/`, one `.npy` file a list,
    and of single token sequences under `folder/<fingerprint>/sequences/`.

    `get` and `put` never raise for the file system: a store that cannot be written (a
    read-only home) logs it once and is only read from then on; one that does not match this
    machine is not used at all (`usable`)."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.folder = Path(folder) / fingerprint
        self.usable = True
        self.writable = True
        self.checked = False

    def get(
        self, labels: Sequence[str], dim: int, *, embed: Callable[[list[str]], np.ndarray]
    ) -> np.ndarray | None:
        """The stored (len(labels), dim) float32 embeddings of the list, or None. The first
        list found is checked with `embed` (the encoder's `encode`): if its first label
        embedded afresh has other bits, None, and the store is not used again."""
        stored = self._read(labels, dim)
        if stored is None or self.checked:
            return stored
        if embed(list(labels[:1])).tobytes() != stored[:1].tobytes():
            logger.warning("NAP label store %s does not match this machine: not used", self.folder)
            self.usable = False
            return None
        self.checked = True
        return stored

    def holds(self, labels: Sequence[str]) -> bool:
        """Whether the store has a file for the list (read, and checked, by `get`)."""
        return self.usable and self._path(labels).is_file()

    def _read(self, labels: Sequence[str], dim: int) -> np.ndarray | None:
        if not self.usable:
            return None
        try:
            array = np.load(self._path(labels), allow_pickle=False)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            logger.warning("NAP label store: ignoring %s (%s)", self._path(labels), error)
            return None
        if array.dtype != np.float32 or array.shape != (len(labels), dim):
            logger.warning("NAP label store: ignoring %s (shape or dtype)", self._path(labels))
            return None
        return np.ascontiguousarray(array)

    def put(self, labels: Sequence[str], embeddings: np.ndarray) -> None:
        """Keep the list's embeddings (atomically: a temporary file renamed into place)."""
        if not (self.usable and self.writable):
            return
        temporary = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".tmp", delete=False) as file:
                temporary = Path(file.name)
                np.save(file, np.ascontiguousarray(embeddings, dtype=np.float32))
            os.replace(temporary, self._path(labels))
        except OSError as error:
            self.writable = False
            logger.warning("NAP label store %s cannot be written: %s", self.folder, error)
            if temporary is not None:
                temporary.unlink(missing_ok=True)

    def _path(self, labels: Sequence[str]) -> Path:
        key = json.dumps(list(labels), ensure_ascii=False, separators=(",", ":"))
        return self.folder / f"{_digest(key.encode())[:40]}.npy"

    # -- single token sequences (answers) ----------------------------------------------------

    def get_sequences(
        self,
        sequences: Sequence[tuple[int, ...]],
        dim: int,
        *,
        embed: Callable[[tuple[int, ...]], np.ndarray],
    ) -> dict[int, np.ndarray]:
        """The stored (dim,) rows of those of `sequences` the store holds, by index. If the
        store has not been checked in this process, the first row found is embedded afresh
        with `embed` (one sequence -> (dim,)) and must have the stored bits, else nothing is
        returned and the store is not used again (as for a list, `get`)."""
        found: dict[int, np.ndarray] = {}
        if not self.usable:
            return found
        for i, sequence in enumerate(sequences):
            path = self._sequence_path(sequence)
            try:
                row = np.load(path, allow_pickle=False)
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as error:
                logger.warning("NAP label store: ignoring %s (%s)", path, error)
                continue
            if row.dtype != np.float32 or row.shape != (dim,):
                logger.warning("NAP label store: ignoring %s (shape or dtype)", path)
                continue
            if not self.checked:
                if embed(sequence).tobytes() != row.tobytes():
                    logger.warning(
                        "NAP label store %s does not match this machine: not used", self.folder
                    )
                    self.usable = False
                    return {}
                self.checked = True
            found[i] = row
        return found

    def put_sequences(self, sequences: Sequence[tuple[int, ...]], rows: np.ndarray) -> None:
        """Keep each sequence's row, one small file each (written as `put` writes a list)."""
        if not (self.usable and self.writable):
            return
        for sequence, row in zip(sequences, rows, strict=True):
            path = self._sequence_path(sequence)
            temporary = None
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with tempfile.NamedTemporaryFile(
                    dir=path.parent, suffix=".tmp", delete=False
                ) as file:
                    temporary = Path(file.name)
                    np.save(file, np.ascontiguousarray(row, dtype=np.float32))
                os.replace(temporary, path)
            except OSError as error:
                self.writable = False
                logger.warning("NAP label store %s cannot be written: %s", self.folder, error)
                if temporary is not None:
                    temporary.unlink(missing_ok=True)
                return

    def _sequence_path(self, sequence: tuple[int, ...]) -> Path:
        """`sequences/<2 hex>/<38 hex>.npy`, named by the digest of the token ids (fixed-width
        little-endian integers, so two sequences never share a name by concatenation)."""
        name = _digest(np.asarray(sequence, dtype="<i8").tobytes())[:40]
        return self.folder / "sequences" / name[:2] / f"{name[2:]}.npy"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_identity(path: Path) -> list:
    """Name, size, modification time and the digest of the first 64 KiB: a safetensors file's
    header (names, dtypes, shapes, offsets), the start of a tokenizer.json. Not the whole
    90 MB: a reinstall changes the time, and the first list read in a process is checked
    against a fresh embedding anyway (module docstring)."""
    with path.open("rb") as file:
        head = file.read(65536)
    status = path.stat()
    return [path.name, status.st_size, status.st_mtime_ns, _digest(head)]


def _numpy_cpu_features() -> list[str]:
    """The CPU features numpy's SIMD dispatch uses here (after NPY_DISABLE_CPU_FEATURES)."""
    features = getattr(np._core._multiarray_umath, "__cpu_features__", {})
    return sorted(name for name, enabled in features.items() if enabled)


def _blas_libraries() -> list:
    """Each BLAS numpy loaded: library, version, kernel (OPENBLAS_CORETYPE shows here) and
    threading layer. Without threadpoolctl (optional, as in embedding.py): the variable that
    chooses OpenBLAS's kernel."""
    try:
        from threadpoolctl import threadpool_info  # imported here: optional
    except ImportError:  # pragma: no cover - threadpoolctl is in requirements.txt
        return [os.environ.get("OPENBLAS_CORETYPE", "")]
    keys = ("internal_api", "version", "architecture", "threading_layer", "filepath")
    return [[info.get(key) for key in keys] for info in threadpool_info()]


class AnswerMemo:
    """An encoder's memory of answers' rows by token sequence: in this process (up to
    `capacity` rows, least recently used dropped first), then in a label store, the rest
    computed and kept in both. The same bits as computing them all: a row is a function of
    its sequence alone (embedding.py) and the store checks itself against a fresh row."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: dict[tuple[int, ...], np.ndarray] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def rows(
        self,
        sequences: Sequence[tuple[int, ...]],
        dim: int,
        compute: Callable[[Sequence[tuple[int, ...]]], np.ndarray],
        store: LabelStore | None,
    ) -> np.ndarray:
        """(len(sequences), dim) float32 rows of distinct sequences; `compute` embeds a list
        of sequences afresh."""
        with self._lock:
            known = {i: self._rows.get(sequence) for i, sequence in enumerate(sequences)}
        missing = [i for i, row in known.items() if row is None]
        if missing and store is not None:
            found = store.get_sequences(
                [sequences[i] for i in missing], dim, embed=lambda s: compute([s])[0]
            )
            known.update({missing[j]: row for j, row in found.items()})
            missing = [i for i in missing if known[i] is None]
        if missing:
            computed = compute([sequences[i] for i in missing])
            if store is not None:
                store.put_sequences([sequences[i] for i in missing], computed)
            known.update(zip(missing, computed, strict=True))
        rows = np.empty((len(sequences), dim), dtype=np.float32)
        for i, row in known.items():
            rows[i] = row
        with self._lock:
            for i, sequence in enumerate(sequences):
                self._rows.pop(sequence, None)  # most recently used last
                self._rows[sequence] = rows[i].copy()
            while len(self._rows) > self.capacity:
                self._rows.pop(next(iter(self._rows)))
        return rows
