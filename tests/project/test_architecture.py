"""The foundation imports nothing above it: no module of `assessor` names an app, and its packages are layered.

The layers of `assessor/`, lowest first: a package imports packages of its own
layer's lower layers only, so no two of them import each other and a new one
has a place to go. An import under `if TYPE_CHECKING:` counts like any other:
the registry names what its contracts describe through the lowest layer
(`assessor/contracts.py`), so no such import stands in for a cycle.
"""

import ast
import re
import tomllib
from pathlib import Path

from django.apps import apps

from project_apps import PROJECT_APPS

REPO = Path(__file__).resolve().parents[2]


def repository_apps() -> tuple[str, ...]:
    """The installed apps of this repository but the foundation: the project's (project_apps.py) and the test settings' example."""
    return tuple(
        config.name
        for config in apps.get_app_configs()
        if Path(config.path) == REPO.joinpath(*config.name.split(".")) and config.name != "assessor"
    )


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


def app_imports(foundation: Path, app_names: tuple[str, ...]) -> list[str]:
    """The imports of an app (or of a module inside one) by the modules under `foundation`."""
    offenders = []
    for path in sorted(foundation.rglob("*.py")):
        for name in imported_modules(path):
            if any(name == app or name.startswith(f"{app}.") for app in app_names):
                offenders.append(f"{path.relative_to(foundation.parent)} imports {name}")
    return offenders


def test_no_module_of_assessor_imports_an_app():
    app_names = repository_apps()
    assert {"nuggets", "argue", "demo", "tests.verdicts"} <= set(app_names)  # read from the installed apps
    assert app_imports(REPO / "assessor", app_names) == []


def test_the_check_fails_on_an_import_of_any_installed_app(tmp_path):
    """Each app, imported from a copy of a foundation module in each of the three ways, is caught."""
    app_names = repository_apps()
    for app in app_names:
        foundation = tmp_path / app / "assessor"
        foundation.mkdir(parents=True)
        module = foundation / "registry.py"
        original = (REPO / "assessor" / "registry.py").read_text()
        imports = (
            f"import {app}.models\n",
            f"from {app} import parts\n",
            f"def later():\n    return import_module('{app}.parts')\n",
        )
        for added in imports:
            module.write_text(original + added)
            assert app_imports(foundation, app_names), f"an import of {app} from assessor/ passed: {added!r}"
    assert set(app_names) == {*PROJECT_APPS, "tests.verdicts"}  # the loop ran over every app


def unchecked_modules(mypy: dict, app_names: tuple[str, ...]) -> list[str]:
    """The modules of these apps that mypy's `files` and `exclude` (pyproject.toml) leave out of the type check."""
    left_out = []
    for app in app_names:
        for path in sorted(REPO.joinpath(*app.split(".")).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if "migrations" in path.parts or path.name.startswith("test_") or path.name == "conftest.py":
                continue
            listed = any(top in (".", relative) or relative.startswith(f"{top.rstrip('/')}/") for top in mypy["files"])
            # mypy skips a folder whose path, with a final slash, an exclude pattern matches.
            parts = path.relative_to(REPO).parts
            seen = [*("/".join(parts[:end]) + "/" for end in range(1, len(parts))), relative]
            if not listed or any(re.search(pattern, name) for pattern in mypy.get("exclude", []) for name in seen):
                left_out.append(relative)
    return left_out


def test_the_type_check_covers_every_installed_app():
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    assert unchecked_modules(mypy, repository_apps()) == []


def test_the_type_check_rule_sees_an_app_left_out():
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    excluded = {**mypy, "exclude": [*mypy["exclude"], "^argue/"]}
    assert "argue/parts.py" in unchecked_modules(excluded, repository_apps())
    folder_excluded = {**mypy, "exclude": [*mypy["exclude"], "^tests/(?!verdicts/)"]}  # "tests/" itself matches
    assert "tests/verdicts/parts.py" in unchecked_modules(folder_excluded, repository_apps())
    listed = {**mypy, "files": ["assessor", "nuggets"]}
    assert "tests/verdicts/parts.py" in unchecked_modules(listed, repository_apps())
    assert not any(path.startswith("nuggets/") for path in unchecked_modules(listed, repository_apps()))


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


# Lowest first. A package may import its own modules and those of the layers below it.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"contracts"}),  # the values the registry's contracts name
    frozenset({"registry", "http", "project", "source_fill", "names"}),  # declarations, request types, settings, Celery; data migrations; the rule of names
    frozenset({"models"}),
    frozenset({"scoring"}),  # what is counted (the lifecycle rule) and the kept scores
    frozenset({"importing"}),  # atomic imports, which refresh the kept scores
    frozenset({"sources"}),  # who owns a label name
    frozenset({"work"}),  # people's work: roles, access, judging, queue
    frozenset({"campaigns"}),  # campaigns: who sees one, its pages, its commands
    frozenset({"collection"}),  # topics, runs, qrels, leaderboards, uploads
    frozenset({"jobs"}),  # the LLM job engine
    frozenset({"accounts"}),
    frozenset({"labelkit"}),  # a judge of answers in a few lines: work, job, file, scores and boards together
    frozenset({"site", "management", "admin", "apps", "templatetags", "__init__"}),  # the site, commands, admin, start-up, filters
)


def package_of(path: Path, foundation: Path = REPO / "assessor") -> str:
    relative = path.relative_to(foundation).parts
    return relative[0] if len(relative) > 1 else relative[0].removesuffix(".py")


def layer_of(package: str) -> int:
    return next(index for index, layer in enumerate(LAYERS) if package in layer)


def foundation_imports(foundation: Path = REPO / "assessor") -> dict[tuple[str, str], list[str]]:
    """{(package, imported package): [modules that import it]} between packages of assessor/, under
    `if TYPE_CHECKING:` too."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(foundation.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        source = package_of(path, foundation)
        for name in imported_modules(path):
            parts = name.split(".")
            if parts[0] == "assessor" and len(parts) > 1 and parts[1] != source:
                edges.setdefault((source, parts[1]), []).append(str(path.relative_to(foundation.parent)))
    return edges


def upward_imports(foundation: Path = REPO / "assessor") -> list[str]:
    return [
        f"{source} imports {target} (in {', '.join(sorted(set(modules)))})"
        for (source, target), modules in foundation_imports(foundation).items()
        if target in set().union(*LAYERS) and layer_of(target) >= layer_of(source)
    ]


def test_every_package_of_assessor_has_a_layer():
    packages = {package_of(path) for path in (REPO / "assessor").rglob("*.py") if "migrations" not in path.parts}
    placed = set().union(*LAYERS)
    assert packages - placed == set(), "place the new package in LAYERS"


def test_the_packages_of_assessor_import_only_the_layers_below():
    assert upward_imports() == []


def test_no_two_packages_of_assessor_import_each_other():
    edges = foundation_imports()
    mutual = sorted({tuple(sorted(pair)) for pair in edges if (pair[1], pair[0]) in edges})
    assert mutual == []


def test_the_layer_check_sees_an_upward_import(tmp_path):
    """The registry and its contracts naming a model, at run time or for the type checker only, go up a layer."""
    foundation = tmp_path / "assessor"
    foundation.mkdir()
    for name in ("registry.py", "contracts.py"):
        (foundation / name).write_text((REPO / "assessor" / name).read_text())
    assert upward_imports(foundation) == []
    with (foundation / "contracts.py").open("a") as contracts:
        contracts.write("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from assessor.models import Job\n")
    assert upward_imports(foundation) == ["contracts imports models (in assessor/contracts.py)"]
    with (foundation / "registry.py").open("a") as registry_module:
        registry_module.write("from assessor.jobs.forms import LaunchForm\n")
    assert "registry imports jobs (in assessor/registry.py)" in upward_imports(foundation)


def app_kinds() -> set[str]:
    """Every kind of job, work, file and label family an app declared: the foundation declares only its own."""
    from assessor.collection import kinds as collection_kinds
    from assessor.registry import registry

    declared = {*registry.job_kinds, *registry.work_pages, *registry.importers, *registry.label_families}
    own = {value for name, value in vars(collection_kinds).items() if name.isupper()}
    return declared - own


def app_namespaces() -> set[str]:
    """The URL namespaces of the apps' pages (`nuggets:`, `judge:`...), from the URL modules they registered."""
    from importlib import import_module

    from assessor.registry import registry

    return {getattr(import_module(include.module), "app_name", "") for include in registry.url_includes} - {""}


def named_kinds(path: Path, kinds: set[str], namespaces: set[str]) -> list[str]:
    """The string constants of a module that are an app's kind or a URL of an app's page."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in kinds or node.value.split(":", 1)[0] in namespaces and ":" in node.value:
                found.append(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path.name}:{node.lineno} {node.value!r}")
    return found


def test_no_module_of_assessor_names_an_apps_kind_or_page():
    kinds, namespaces = app_kinds(), app_namespaces()
    assert {"auto_nuggets", "assign_manual", "support", "umbrela"} <= kinds  # the apps have registered
    offenders = []
    for path in sorted((REPO / "assessor").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        offenders += named_kinds(path, kinds, namespaces)
    assert offenders == []


def test_no_template_of_the_foundation_names_an_apps_kind_or_page():
    kinds, namespaces = app_kinds(), app_namespaces()
    offenders = []
    for path in sorted((REPO / "templates").rglob("*.html")):
        text = path.read_text()
        offenders += [f"{path.name}: {kind!r}" for kind in kinds if f'"{kind}"' in text or f"'{kind}'" in text]
        offenders += [f"{path.name}: {ns}:" for ns in namespaces if f'"{ns}:' in text or f"'{ns}:" in text]
    assert offenders == []


def test_the_kinds_check_sees_a_kind_and_a_page(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('KIND = "auto_support"\nURL = "judge:organize"\nTEXT = "support the claim"\n')
    assert [line.split(" ", 1)[1] for line in named_kinds(module, app_kinds(), app_namespaces())] == [
        "'auto_support'",
        "'judge:organize'",
    ]
