"""The hooks `benchmark` offers the apps above it (core/hooks.py: light, so that filling them
from an `AppConfig.ready()` imports nothing heavy)."""

from __future__ import annotations

from collections.abc import Callable

# Callbacks, each taking a benchmark's id, run after the commit of a change that can alter the
# benchmark's board: its ranking policy or its metrics (columns, labels, precision). The boards
# live in `submissions`, which registers its recompute here at start-up (SubmissionsConfig.ready):
# benchmark must not import a higher app, so it calls back instead.
board_input_listeners: list[Callable[[int], None]] = []


def add_board_input_listener(listener: Callable[[int], None]) -> None:
    """Call ``listener(benchmark_id)`` after every committed change to a board's inputs."""
    if listener not in board_input_listeners:
        board_input_listeners.append(listener)
