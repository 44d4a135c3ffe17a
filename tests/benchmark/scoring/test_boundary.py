"""The scoring code stays plain Python + numpy (house style): no Django, no project app. That is
the platform's generic `benchmark.scoring` (which imports no benchmark plugin either) and
MedVidBench's scorer, `plugins.medvidbench.scoring` (which may import the generic package).

The check reads every module's AST instead of importing it, so a forbidden import is caught even
inside a function or an ``if TYPE_CHECKING`` block, and without running any scoring code.
"""

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[3]
SCORING_DIR = REPO_ROOT / "benchmark" / "scoring"
ALLOWED_PACKAGE = "benchmark.scoring"
MEDVIDBENCH_SCORING_DIR = REPO_ROOT / "plugins" / "medvidbench" / "scoring"
MEDVIDBENCH_PACKAGE = "plugins.medvidbench.scoring"
# Django, the Django-only libraries, our settings and every app; `benchmark` and `plugins`
# themselves only below.
FORBIDDEN_ROOTS = {
    "django",
    "rest_framework",
    "django_q",
    "allauth",
    "config",
    "core",
    "accounts",
    "inference",
    "submissions",
    "judging",
    "arena",
    "verifying",
    "api",
}
# Stands for a relative import that climbs above `benchmark`: Python rejects it, and so do we.
BEYOND_TOP = "<relative import beyond the top package>"


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def is_forbidden(module: str, *, own: str = ALLOWED_PACKAGE) -> bool:
    """Whether a module of the scoring package `own` may not import `module`: anything of
    Django or an app, and of `benchmark` or `plugins` anything but the generic scoring package
    and `own` itself."""
    if module == BEYOND_TOP:
        return True
    root = module.split(".")[0]
    if root in ("benchmark", "plugins"):
        return not (_within(module, ALLOWED_PACKAGE) or _within(module, own))
    return root in FORBIDDEN_ROOTS


def imported_modules(source: str, module_path: str) -> list[tuple[int, str]]:
    """(line, dotted name) of everything ``source`` imports, relative imports resolved.

    ``module_path`` is the file's dotted path, e.g. ``benchmark.scoring.metrics.tal``, or
    ``benchmark.scoring.metrics.__init__`` for a package. ``from X import a`` yields ``X.a``, so
    ``from benchmark import scoring`` passes while ``from benchmark import models`` does not.
    String arguments of ``importlib.import_module`` and ``__import__`` count too.
    """
    package = module_path.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level > len(package):
                    found.append((node.lineno, BEYOND_TOP))
                    continue
                base = package[: len(package) - (node.level - 1)]
            else:
                base = []
            prefix = ".".join(base + ([node.module] if node.module else []))
            found.extend(
                (node.lineno, prefix if alias.name == "*" else f"{prefix}.{alias.name}".lstrip("."))
                for alias in node.names
            )
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((node.lineno, first.value))
    return found


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in {"__import__", "import_module"}
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def scoring_modules() -> list[Path]:
    return sorted(SCORING_DIR.rglob("*.py"))


def medvidbench_scoring_modules() -> list[Path]:
    return sorted(MEDVIDBENCH_SCORING_DIR.rglob("*.py"))


def dotted_path(path: Path) -> str:
    return ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)


def test_the_walk_finds_the_scoring_packages():
    # Guards against passing vacuously if a package moved or the path logic broke.
    assert scoring_modules(), f"no .py file found under {SCORING_DIR}"
    assert len(medvidbench_scoring_modules()) > 10, f"no scorer under {MEDVIDBENCH_SCORING_DIR}"


def test_medvidbench_scoring_imports_neither_django_nor_any_app_nor_another_plugin():
    violations = [
        f"{path.relative_to(REPO_ROOT)}:{line}: imports {module}"
        for path in medvidbench_scoring_modules()
        for line, module in imported_modules(path.read_text(encoding="utf-8"), dotted_path(path))
        if is_forbidden(module, own=MEDVIDBENCH_PACKAGE)
    ]

    assert violations == []


def test_scoring_imports_neither_django_nor_any_project_app():
    violations = [
        f"{path.relative_to(REPO_ROOT)}:{line}: imports {module}"
        for path in scoring_modules()
        for line, module in imported_modules(path.read_text(encoding="utf-8"), dotted_path(path))
        if is_forbidden(module)
    ]

    assert violations == []


# The checker itself, on sources written to break the rule.
CHECKER_CASES = [
    ("import django", True),
    ("from django.db import models", True),
    ("import rest_framework.serializers", True),
    ("from core.exceptions import DomainError", True),
    ("from submissions import services", True),
    ("import judging.tasks", True),
    ("from benchmark.models import TestSet", True),
    ("from benchmark import models", True),
    ("import benchmark", True),
    ("from ... import models", True),  # benchmark.models, from plugins/medvidbench/scoring/metrics/
    ("from .... import anything", True),  # above the top package
    ("def f():\n    from django.conf import settings", True),
    ("import importlib\nimportlib.import_module('django.conf')", True),
    ("__import__('core.exceptions')", True),
    ("import numpy as np", False),
    ("import json, re", False),
    ("from benchmark.scoring.errors import Problem", False),
    ("from benchmark import scoring", False),
    ("from plugins.medvidbench.scoring import tasks", True),  # generic code imports no plugin
    ("import plugins.medsg", True),
    ("from . import common", False),
    ("from .. import parsers", False),  # benchmark.scoring.parsers
    ("from ..errors import ScoringError", False),
    ("from .common import *", False),
    ("import djangoish", False),  # only the exact root name counts
]


@pytest.mark.parametrize(("source", "forbidden"), CHECKER_CASES)
def test_the_checker_flags_exactly_the_forbidden_imports(source, forbidden):
    modules = imported_modules(source, "benchmark.scoring.metrics.tal")

    assert any(is_forbidden(module) for _, module in modules) is forbidden
