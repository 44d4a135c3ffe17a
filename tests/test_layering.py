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

Nor do two modules of the apps import each other, directly or round a longer loop (issue 33,
point 6): a loop is what left `api.rankings_serializers` meeting a half-built `board_json` in
a fresh process (the last test here), and only an import order that happens to work holds it
together. The shared piece moves to a module both import instead.
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


# Import circles allowed for now, each with its reason; the test fails when one is gone, so the
# list only shrinks, and the dict goes once empty. Temporary: `api/rankings_csv.py` is being
# moved (issue 33) by another change, which ends this circle.
def app_modules(app: str) -> list[Path]:
    return sorted((REPO_ROOT / app).rglob("*.py"))


def module_name(path: Path) -> str:
    """`submissions.selectors` for submissions/selectors/__init__.py, else the dotted path."""
    dotted = dotted_path(path)
    return dotted.removesuffix(".__init__")


def import_graph() -> dict[str, set[str]]:
    """Each module of our apps -> the modules of our apps it imports.

    `from X import a` names module `X.a` when that is a module, else `X` (a is a name in it).
    The packages above a module, which Python runs first, are not counted: a package's
    `__init__` that imports its own modules would otherwise be a loop by construction.
    """
    paths = {module_name(path): path for app in LEVEL for path in app_modules(app)}

    def module_of(imported: str) -> str | None:
        parts = imported.split(".")
        for end in range(len(parts), 0, -1):
            if (candidate := ".".join(parts[:end])) in paths:
                return candidate
        return None

    return {
        name: {
            target
            for _, imported in imported_modules(path.read_text(encoding="utf-8"), dotted_path(path))
            if (target := module_of(imported)) not in (None, name)
        }
        for name, path in paths.items()
    }


def circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The sets of modules that reach one another through their imports (the graph's strongly
    connected components of more than one module). A few hundred modules: a search from each
    is quick enough and plainer than Tarjan's."""
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in graph.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        reach[start] = seen
    return {
        frozenset({start} | {other for other in reach[start] if start in reach.get(other, ())})
        for start in graph
        if start in reach[start]
    }


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


def test_the_graph_names_modules_and_packages():
    graph = import_graph()

    assert "inference.client" in graph["inference.answering"]
    assert "submissions.hooks" in graph["judging.apps"]
    assert "submissions.selectors" in graph  # a package, by its own name


@pytest.mark.parametrize(
    ("graph", "found"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, set()),
        ({"a": {"b"}, "b": {"a"}}, {frozenset({"a", "b"})}),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, {frozenset({"a", "b", "c"})}),
        (
            {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "a"}},
            {frozenset({"a", "b"}), frozenset({"c", "d"})},
        ),
    ],
)
def test_circles_finds_every_loop_and_only_loops(graph, found):
    assert circles(graph) == found


def test_no_two_modules_import_each_other():
    found = circles(import_graph())

    assert found == set(), sorted(sorted(circle) for circle in found)


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
