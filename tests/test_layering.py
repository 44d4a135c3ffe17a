"""The apps depend one way (house style, issue 15):

    api -> verifying -> hosting -> arena -> judging -> submissions -> inference -> benchmark
    -> accounts -> core

A module of an app imports only its own app and the apps below it; everyone may use
`accounts` and `core`, and `core` imports no app at all (issue 33, point 6: its audit admin
asks the entry viewers' role through a hook `accounts` fills). A lower app that must react to
a higher one gets a hook (`core.workers.add_reaper`, `submissions.hooks.add_scored_listener`,
the console's `submissions.hooks.judge_panel_reader`, ...), never an import. `config`
(settings, URLs) is above them all and not checked.

The walk reads every module's AST (tests/benchmark/scoring/test_boundary.py's
`imported_modules`), so an import inside a function, an `if TYPE_CHECKING` block or an
`importlib.import_module` string counts too.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.benchmark.scoring.test_boundary import dotted_path, imported_modules

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[1]
# Lowest first; the apps of one tuple are one layer.
LAYERS = (
    ("core",),
    ("accounts",),
    ("benchmark",),
    ("inference",),
    ("submissions",),
    ("judging",),
    # Pairwise battles: the judge's endpoints, client and verdict cache (docs/ratings.md).
    ("arena",),
    # Hosted evaluation: the public request queue (docs/hosted.md); verifying takes its
    # evidence from it.
    ("hosting",),
    ("verifying",),
    ("api",),
)
LEVEL = {app: level for level, apps in enumerate(LAYERS) for app in apps}


def app_modules(app: str) -> list[Path]:
    return sorted((REPO_ROOT / app).rglob("*.py"))


def upward(source: str, path: Path, app: str) -> set[str]:
    """What `source` (the module at `path`, of `app`) imports from an app above `app`."""
    return {
        module
        for _, module in imported_modules(source, dotted_path(path))
        if LEVEL.get(module.split(".")[0], -1) > LEVEL[app]
    }


def upward_imports(path: Path, app: str) -> set[str]:
    return upward(path.read_text(encoding="utf-8"), path, app)


def test_the_walk_finds_every_app():
    counts = {app: len(app_modules(app)) for app in LEVEL}

    assert all(count > 3 for count in counts.values()), counts
    assert REPO_ROOT / "inference" / "client.py" in app_modules("inference")


def test_every_app_imports_only_its_own_layer_and_below():
    found = {
        str(path.relative_to(REPO_ROOT)): imports
        for app in LEVEL
        for path in app_modules(app)
        if (imports := upward_imports(path, app))
    }

    assert found == {}


def test_the_engine_imports_none_of_its_users():
    found = {
        str(path.relative_to(REPO_ROOT)): imports
        for path in app_modules("inference")
        if (imports := upward_imports(path, "inference"))
    }

    assert found == {}


def test_installed_apps_list_our_apps_lowest_first():
    ours = [app for app in settings.INSTALLED_APPS if app in LEVEL]

    assert ours == [app for apps in LAYERS for app in apps]


@pytest.mark.parametrize(
    ("app", "source", "flagged"),
    [
        ("inference", "from judging.client import judge_many", {"judging.client.judge_many"}),
        ("inference", "def f():\n    import verifying.models", {"verifying.models"}),
        ("inference", "import importlib\nimportlib.import_module('submissions')", {"submissions"}),
        ("inference", "from benchmark import media\nfrom core import audit", set()),
        ("core", "from accounts.roles import is_maintainer", {"accounts.roles.is_maintainer"}),
        ("accounts", "from core import audit", set()),
        ("benchmark", "from inference.client import Reply", {"inference.client.Reply"}),
        ("api", "from verifying import services", set()),
        ("judging", "from .client import judge_many", set()),
    ],
)
def test_the_walk_flags_exactly_the_imports_up_the_chain(app, source, flagged):
    assert upward(source, REPO_ROOT / app / "probe.py", app) == flagged


@pytest.mark.parametrize(
    "module", ["api.rankings_serializers", "submissions.board_json", "submissions.selectors"]
)
def test_a_module_imported_first_in_a_fresh_process_finds_what_it_imports(module):
    """The order of imports is the test run's, not the code's: `api.rankings_serializers`
    imported first went board_json, selectors, status, the board refresh, the writer and back
    to board_json half-built ("cannot import name 'enqueue_board_json'"), which a test module
    importing it first met."""
    found = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); import {module}"],
        cwd=REPO_ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr[-2000:]
