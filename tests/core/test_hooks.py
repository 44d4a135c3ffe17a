"""Hooks filled with lazy callbacks (core/hooks.py): registering imports nothing heavy, every
registered path resolves, and a callback runs its target."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.hooks import Lazy, Slot, every_lazy, lazy, resolved

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.unit
def test_every_lazy_callback_registered_at_start_up_resolves_to_a_function():
    created = every_lazy()
    assert len(created) >= 15  # the apps' ready() hooks
    for callback in created:
        target = callback.resolve()
        assert callable(target), callback
        assert not isinstance(target, Lazy)
        assert target.__name__ == callback.path.rsplit(".", 1)[1]


@pytest.mark.unit
def test_a_lazy_callback_imports_its_target_on_the_first_call_and_keeps_it():
    callback = Lazy("os.path.join")
    assert callback._target is None
    assert callback("a", "b") == os.path.join("a", "b")
    assert callback._target is os.path.join
    assert resolved(callback) is os.path.join
    assert resolved(os.path.join) is os.path.join
    assert callback == Lazy("os.path.join")
    assert hash(callback) == hash(Lazy("os.path.join"))
    assert callback != Lazy("os.path.split")
    assert repr(callback) == "lazy('os.path.join')"
    assert callback.__name__ == "join"


@pytest.mark.unit
def test_a_misspelt_path_fails_on_the_first_call_with_the_path_named():
    callback = lazy("submissions.services.no_such_function")
    try:
        with pytest.raises(ImportError, match="no_such_function"):
            callback()
    finally:
        every_lazy_list = __import__("core.hooks", fromlist=["_created"])._created
        every_lazy_list.remove(callback)


@pytest.mark.unit
def test_a_hook_registered_twice_is_kept_once():
    from submissions import hooks

    before = list(hooks.step_guides)
    try:
        hooks.add_step_guide(Lazy("verifying.steps.rerun_step"))
        assert hooks.step_guides == before  # registered at start-up already
    finally:
        hooks.step_guides[:] = before


@pytest.mark.unit
def test_a_slot_holds_one_callback():
    slot = Slot("test")
    assert slot.callback is None
    slot.set(len)
    assert slot.callback is len
    slot.set(None)
    assert slot.callback is None


@pytest.mark.integration
def test_django_set_up_imports_no_service_selector_or_notification_module():
    """The apps' ready() hooks import only the light hook modules (docs/performance.md)."""
    script = (
        "import sys, django; django.setup()\n"
        "heavy = [name for name in sys.modules if name.split('.')[-1] in "
        "('services', 'selectors', 'notifications', 'evidence', 'steps', 'demo', 'judge_step', "
        "'boards', 'ratings', 'verification', 'next_step') and name.split('.')[0] in "
        "('submissions', 'judging', 'arena', 'hosting', 'verifying', 'benchmark')]\n"
        "print(sorted(heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.strip() == "[]", done.stdout
