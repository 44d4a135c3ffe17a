"""The demo clinical QA scoring core stays plain Python + numpy: no Django, no project app, and
from `benchmark` only the platform's pure scoring modules. The demo generator and the battle
prompt are held to the same rule. The walk reads the AST, as tests/benchmark/scoring does."""

from pathlib import Path

import pytest

from tests.benchmark.scoring.test_boundary import FORBIDDEN_ROOTS, imported_modules

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[3]
PLUGIN = REPO_ROOT / "plugins" / "clinicalqa"
PURE_FILES = [
    *sorted((PLUGIN / "scoring").rglob("*.py")),
    PLUGIN / "demo.py",
    PLUGIN / "pairwise.py",
]
# The platform's generic pure modules a plugin's scorer may use.
ALLOWED_BENCHMARK = (
    "benchmark.scoring.errors",
    "benchmark.scoring.strict_json",
    "benchmark.scoring.json_file",
    "benchmark.scoring.row_fields",
    "benchmark.scoring.weights",
)


def is_forbidden(module: str) -> bool:
    root = module.split(".")[0]
    if root == "benchmark":
        return not any(module == ok or module.startswith(ok + ".") for ok in ALLOWED_BENCHMARK)
    if root == "plugins":
        return not (
            module == "plugins.clinicalqa.scoring"
            or module.startswith("plugins.clinicalqa.scoring.")
        )
    return root in FORBIDDEN_ROOTS | {"verifying", "api", "tests"} or module.startswith("<")


def dotted_path(path: Path) -> str:
    return ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)


def test_the_walk_finds_the_files():
    assert [path.name for path in PURE_FILES] == [
        "__init__.py",
        "evaluate.py",
        "letters.py",
        "predictions.py",
        "testset.py",
        "demo.py",
        "pairwise.py",
    ]


def test_the_pure_code_imports_no_django_and_no_app():
    violations = [
        f"{path.relative_to(REPO_ROOT)}:{line}: imports {module}"
        for path in PURE_FILES
        for line, module in imported_modules(path.read_text(encoding="utf-8"), dotted_path(path))
        if is_forbidden(module)
    ]
    assert violations == []


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("django.db", True),
        ("benchmark.models", True),
        ("benchmark.plugins", True),
        ("plugins.medsg.scoring.boxes", True),
        ("plugins.clinicalqa.plugin", True),
        ("benchmark.scoring.errors.Problem", False),
        ("benchmark.scoring.json_file", False),
        ("plugins.clinicalqa.scoring.letters", False),
        ("numpy", False),
    ],
)
def test_the_rule_itself(module, forbidden):
    assert is_forbidden(module) is forbidden
