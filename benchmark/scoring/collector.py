"""The cyclic garbage collector paused while a loader builds a test set (issue 16).

A ground-truth file becomes hundreds of thousands of small containers at once (decoded JSON,
tuples, frozen dataclasses), every one still alive when the loader returns and none part of a
reference cycle. Each allocation counts towards a collection, and each collection traverses all
the young objects, so the collector's share of MedVidBench's `load_ground_truth` grew with the
file, from 14% to 42% over the sizes issue 16 measured (17% of 200 ms on the 6,245-record demo
file). Reference counting frees everything as usual inside the block; only cycles wait until it
ends, when the collector runs as before.

Plain Python, no Django.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block, then as it was before. Blocks may nest and
    several threads may be inside one: the collector stays off until the last one leaves."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
