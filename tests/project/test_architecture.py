"""The foundation imports nothing above it: no module of `assessor` names an app."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APPS = ("nuggets", "assignment", "support", "relevance", "metaeval", "bench", "demo")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
            "import_module",
            "include",
        ):
            # A lazy import by name counts too: importlib.import_module("nuggets.auto"), include("nuggets.urls").
            for argument in node.args[:1]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    names.add(argument.value)
    return names


def test_no_module_of_assessor_imports_an_app():
    offenders = []
    for path in sorted((REPO / "assessor").rglob("*.py")):
        for name in imported_modules(path):
            if name.split(".")[0] in APPS:
                offenders.append(f"{path.relative_to(REPO)} imports {name}")
    assert offenders == []


def test_the_check_sees_a_lazy_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from nuggets.models import NuggetSet\n    return import_module('support.auto')\n")
    assert {"nuggets.models", "support.auto"} <= imported_modules(module)


def test_no_test_module_imports_another_test_module():
    """Shared setup lives in builders and conftest.py fixtures, never in a test module another one imports."""
    offenders = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        for name in imported_modules(path):
            parts = name.split(".")
            if parts[0] == "tests" and any(part.startswith("test_") for part in parts[1:]):
                offenders.append(f"{path.relative_to(REPO)} imports {name}")
    assert offenders == []


def test_the_check_sees_an_import_of_a_test_module(tmp_path):
    module = tmp_path / "test_m.py"
    module.write_text("from tests.test_pages import build\nfrom tests.work.test_roles import x\nimport tests.builders\n")
    names = imported_modules(module)
    assert {"tests.test_pages", "tests.work.test_roles"} <= names
    assert [name for name in names if "test_" not in name] == ["tests.builders"]
