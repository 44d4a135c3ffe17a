"""Callbacks named by dotted path, imported when first called.

A lower app offers hooks that a higher app fills from its `AppConfig.ready()` (the app chain,
docs/architecture in the developers' guide): `judging` asks to hear when a run is scored,
`verifying` installs the re-run check. `ready()` runs in every process, `manage.py score` and
each worker included, and importing the callbacks' modules there (the services, the
selectors, through them most of the platform) cost ~0.1 s of every start (docs/performance.md).
So an app registers `lazy("judging.services.start_judge_if_automatic")`: a callable that
imports its target on the first call, and the hooks themselves live in light modules
(`benchmark/hooks.py`, `submissions/hooks.py`) that import nothing heavy.

A misspelt path would only fail on its first call: `every_lazy()` lists each one created, and a
test resolves them all (tests/core/test_hooks.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.utils.module_loading import import_string

_created: list[Lazy] = []


class Lazy:
    """A callable standing for the function at `path`, imported on first use. Two are equal
    when they name the same path, so a hook registered twice is kept once."""

    __slots__ = ("_lock", "_target", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._target: Callable[..., Any] | None = None
        self._lock = threading.Lock()

    def resolve(self) -> Callable[..., Any]:
        if self._target is None:
            with self._lock:
                if self._target is None:
                    self._target = import_string(self.path)
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lazy) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def __name__(self) -> str:  # as the function's own, for logs and callers that name it
        return self.path.rpartition(".")[2]

    def __repr__(self) -> str:
        return f"lazy({self.path!r})"


def lazy(path: str) -> Lazy:
    """The function at `path` ("package.module.name"), imported when first called."""
    created = Lazy(path)
    _created.append(created)
    return created


def resolved(callback: Callable[..., Any]) -> Callable[..., Any]:
    """The function a registered callback stands for (itself unless it is `lazy`)."""
    return callback.resolve() if isinstance(callback, Lazy) else callback


def every_lazy() -> list[Lazy]:
    return list(_created)


class Slot:
    """One registry slot: a single callback an app above installs (None: none installed)."""

    __slots__ = ("callback", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.callback: Callable[..., Any] | None = None

    def set(self, callback: Callable[..., Any] | None) -> None:
        self.callback = callback
