"""The hooks `benchmark` offers the apps above it (core/hooks.py: light, so that filling them
from an `AppConfig.ready()` imports nothing heavy)."""

from __future__ import annotations

from collections.abc import Callable

# Callbacks, each taking a benchmark's id, called in the transaction of a change that can alter
# the benchmark's board: its ranking policy or its metrics (columns, labels, precision). The
# boards live in `submissions`, which registers here at start-up (SubmissionsConfig.ready) the
# function that counts the change and recomputes the board once it commits: benchmark must not
# import a higher app, so it calls back instead.
board_input_listeners: list[Callable[[int], None]] = []


def add_board_input_listener(listener: Callable[[int], None]) -> None:
    """Call ``listener(benchmark_id)`` in the transaction of every change to a board's inputs
    (the listener defers what must follow the commit: `transaction.on_commit`)."""
    if listener not in board_input_listeners:
        board_input_listeners.append(listener)
