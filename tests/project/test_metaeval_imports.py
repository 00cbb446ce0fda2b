"""The meta-evaluation builds on the foundation alone, and no import cycle runs through an app.

metaeval/ compares whatever label and score families the apps register (assessor.registry): the first
family's parts (support/, assignment/) are registered by their apps like any other's, so that no module of
metaeval/ names a protocol app, at the top or lazily. The import graph counts lazy imports too (an import
inside a function is still a dependency), and imports under `if TYPE_CHECKING:` not (they run nothing).
"""

import ast
from pathlib import Path

from django.apps import apps

REPO = Path(__file__).resolve().parents[2]
FOUNDATION = "assessor"


def project_apps() -> dict[str, Path]:
    """{module name: folder} of every installed app that lives in this repository (not in its .venv/)."""
    found = {}
    for config in apps.get_app_configs():
        path = Path(config.path).resolve()
        if path.is_relative_to(REPO) and not path.relative_to(REPO).parts[0].startswith("."):
            found[config.name] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[ast.AST]:
    inside: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            for statement in node.body:
                inside.update(ast.walk(statement))
    return inside


def runtime_imports(path: Path) -> set[str]:
    """The modules a file imports when it runs, at the top or inside a function, with the names imported from
    each as possible submodules (`from metaeval import studies`)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped = _type_checking_nodes(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "import_module":
            names.update(
                arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
    return names


def package_modules(root: Path, name: str) -> dict[str, Path]:
    """{dotted module name: file} of a package's modules, its migrations left out."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        if "migrations" in path.relative_to(root).parts:
            continue
        parts = [*name.split("."), *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def apps_imported(root: Path, name: str, others: set[str]) -> list[str]:
    """Each import, by a module of the package `name` at `root`, of a module of the packages `others`."""
    offenders = []
    for module, path in package_modules(root, name).items():
        for imported in sorted(runtime_imports(path)):
            if any(imported == other or imported.startswith(f"{other}.") for other in others):
                offenders.append(f"{module} imports {imported}")
    return offenders


def protocol_apps() -> set[str]:
    """The apps the meta-evaluation must not name: every app of the project but the foundation and itself."""
    return set(project_apps()) - {FOUNDATION, "metaeval"}


def test_metaeval_imports_the_foundation_and_no_protocol_app():
    assert {"support", "assignment", "nuggets", "argue"} <= protocol_apps()  # the apps were found
    assert apps_imported(REPO / "metaeval", "metaeval", protocol_apps()) == []


def test_the_metaeval_check_sees_an_import_of_support(tmp_path):
    package = tmp_path / "metaeval"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fine.py").write_text("from assessor.registry import registry\nfrom metaeval import stats\n")
    (package / "judges.py").write_text(
        "def labels():\n    from support.selectors import counted_labels\n    return import_module('assignment.auto')\n"
    )
    assert apps_imported(package, "metaeval", protocol_apps()) == [
        "metaeval.judges imports assignment.auto",
        "metaeval.judges imports support.selectors",
        "metaeval.judges imports support.selectors.counted_labels",
    ]


def import_graph(packages: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of the same packages it imports at run time."""
    modules: dict[str, Path] = {}
    for name, root in packages.items():
        modules.update(package_modules(root, name))
    return {module: runtime_imports(path) & modules.keys() for module, path in modules.items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of two or more modules (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycle_runs_through_an_app():
    """The meta-evaluation's models once reached its studies, which reached the first family's job code, which
    reached back: any cycle among the apps' modules (lazy imports counted) fails here. Cycles inside the
    foundation are held by tests/project/test_architecture.py's layers instead."""
    graph = import_graph(project_apps())
    assert len(graph) > 100  # every app's modules were read
    through_apps = [cycle for cycle in import_cycles(graph) if any(not m.startswith(f"{FOUNDATION}.") for m in cycle)]
    assert through_apps == []


def test_the_cycle_check_sees_a_lazy_cycle(tmp_path):
    package = tmp_path / "metaeval"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text("def compares():\n    from metaeval.studies import study_judging\n")
    (package / "studies.py").write_text("from metaeval.models import Study\nfrom metaeval import stats\n")
    (package / "stats.py").write_text("import math\n")
    assert import_cycles(import_graph({"metaeval": package})) == [["metaeval.models", "metaeval.studies"]]
