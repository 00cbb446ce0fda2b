"""The foundation imports nothing above it: no module of `assessor` names an app."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APPS = ("nuggets", "assignment", "support", "metaeval", "bench")


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
