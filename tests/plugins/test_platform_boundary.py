"""The plugin boundary (issue 14): no platform module imports a benchmark plugin. The platform
reaches a benchmark's files, scorer, judge and re-run only through `benchmark.plugins`
(`plugin_for(benchmark)`), so a third benchmark needs no platform edit.

The walk reads every module's AST (as tests/benchmark/scoring/test_boundary.py does), so an
import inside a function, an `if TYPE_CHECKING` block or an `importlib.import_module` string is
caught too. Migrations are platform modules like any other.

"""

from pathlib import Path

import pytest

from tests.benchmark.scoring.test_boundary import dotted_path, imported_modules

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[2]
PLATFORM_APPS = (
    "accounts",
    "api",
    "arena",
    "benchmark",
    "config",
    "core",
    "hosting",
    "inference",
    "judging",
    "submissions",
    "verifying",
)
PLUGIN_PACKAGE = "plugins"


def platform_modules() -> list[Path]:
    return sorted(path for app in PLATFORM_APPS for path in (REPO_ROOT / app).rglob("*.py"))


def plugin_imports(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    return [
        f"{line}: {module}"
        for line, module in imported_modules(source, dotted_path(path))
        if module == PLUGIN_PACKAGE or module.startswith(PLUGIN_PACKAGE + ".")
    ]


def test_the_walk_finds_the_platform():
    modules = platform_modules()
    assert len(modules) > 150
    assert REPO_ROOT / "submissions" / "services.py" in modules


def test_no_platform_module_imports_a_benchmark_plugin():
    found = {
        str(path.relative_to(REPO_ROOT)): imports
        for path in platform_modules()
        if (imports := plugin_imports(path))
    }

    assert found == {}, "platform modules import a plugin: go through benchmark.plugins"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from plugins.medvidbench.scoring import tasks", True),
        ("import plugins.medsg.plugin", True),
        ("def f():\n    from plugins import medsg", True),
        ("import importlib\nimportlib.import_module('plugins.medvidbench')", True),
        ("from benchmark.plugins import plugin_for", False),
        ("from benchmark.scoring.errors import Problem", False),
        ("import pluginsish", False),
    ],
)
def test_the_walk_flags_exactly_the_imports_of_a_plugin(source, found):
    imports = [
        name
        for _, name in imported_modules(source, "submissions.module")
        if name == PLUGIN_PACKAGE or name.startswith(PLUGIN_PACKAGE + ".")
    ]
    assert bool(imports) is found
