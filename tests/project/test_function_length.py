"""Product code keeps its functions short: at most ten run over 60 lines (issue 44's measure).

Product code is the foundation (`assessor`) and the project's apps (project_apps.py), their
migrations left out (makemigrations writes them). A function counts from its `def` line to its
last line, its decorators apart, nested functions counted on their own as well.
"""

import ast
from pathlib import Path

from project_apps import PROJECT_APPS

REPO = Path(__file__).resolve().parents[2]
LONG = 60
MOST_LONG_FUNCTIONS = 10


def long_functions(path: Path, *, longer_than: int = LONG) -> list[tuple[int, str]]:
    """The functions of a module longer than `longer_than` lines, as (lines, name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        (node.end_lineno - node.lineno + 1, node.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > longer_than
    ]


def product_modules() -> list[Path]:
    return [
        path
        for package in ("assessor", *PROJECT_APPS)
        for path in sorted((REPO / package).rglob("*.py"))
        if "migrations" not in path.relative_to(REPO).parts
    ]


def test_it_counts_a_function_of_61_lines_and_not_one_of_60(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        "def sixty():\n" + "    x = 1\n" * 59 + "\n\n"
        "def sixty_one():\n" + "    x = 1\n" * 60 + "\n\n"
        "class C:\n    def method(self):\n" + "        x = 1\n" * 60
    )
    assert sorted(long_functions(module)) == [(61, "method"), (61, "sixty_one")]


def test_product_code_has_at_most_ten_functions_over_60_lines():
    modules = product_modules()
    assert len(modules) > 100  # the walk found the product code
    long = sorted(
        (
            f"{path.relative_to(REPO)}: {name} ({lines} lines)"
            for path in modules
            for lines, name in long_functions(path)
        ),
    )
    assert len(long) <= MOST_LONG_FUNCTIONS, "\n".join(long)
