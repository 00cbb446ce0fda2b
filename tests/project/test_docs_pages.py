"""docs/pages.md lists every page the URLconf routes, under the name it is routed by, and no page that is gone.

Which pages are the product's is read from the installed apps: those of the foundation, of
the apps of project_apps.py and of Django's own (the login); not those of an app of this
repository installed beside them (the test settings' example, tests/verdicts).
"""

import re
from pathlib import Path

from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from project_apps import PROJECT_APPS

REPO = Path(__file__).resolve().parents[2]
PAGES_DOC = REPO / "docs" / "pages.md"


def beside_the_project(module: str) -> bool:
    """A module of an installed app of this repository that is neither the foundation nor one of the project's apps."""
    config = apps.get_containing_app_config(module)
    return (
        config is not None
        and Path(config.path) == REPO.joinpath(*config.name.split("."))
        and config.name not in {"assessor", *PROJECT_APPS}
    )


def routed_names(resolver: URLResolver, namespace: str = "") -> set[str]:
    """The pages' names, but those that an app beside the project routes (its URL module) or serves (its view)."""
    names: set[str] = set()
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            if not beside_the_project(getattr(pattern.urlconf_module, "__name__", "")):
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                names |= routed_names(pattern, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            if not beside_the_project(getattr(pattern.callback, "__module__", "")):
                names.add(namespace + pattern.name)
    return names


def kit_pages(resolver: URLResolver, namespace: str = "", module: str = "") -> set[str]:
    """The pages an app's URL module routes to views of the foundation: the label-app kit's, documented once for every
    app by the table's `<app>:` rows."""
    names: set[str] = set()
    module = module or getattr(resolver.urlconf_module, "__name__", "")
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            names |= kit_pages(pattern, inner, getattr(pattern.urlconf_module, "__name__", module))
        elif isinstance(pattern, URLPattern) and pattern.name and not module.startswith("assessor."):
            if getattr(pattern.callback, "__module__", "").startswith("assessor."):
                names.add(namespace + pattern.name)
    return names


def url_table() -> list[str]:
    """The rows of the "URLs" section's table."""
    text = PAGES_DOC.read_text()
    section = text[text.index("## URLs") :]
    section = section[: section.index("\n## ", 1)]
    return [line for line in section.splitlines() if line.startswith("| `")]


def test_every_routed_page_is_in_the_url_table():
    # A row names its page in its second column; the requests a page makes (saves, submits, CSV) in its text.
    mentioned = {name for row in url_table() for name in re.findall(r"`([a-z_]+(?::[a-z_]+)?)`", row)}
    missing = sorted(name for name in routed_names(get_resolver()) if not name.startswith("admin:"))
    kit_rows = [row for row in url_table() if "| `<app>:" in row]
    if kit_rows:
        missing = [name for name in missing if name not in kit_pages(get_resolver())]
    missing = [name for name in missing if name not in mentioned]
    assert missing == []


def test_every_page_in_the_url_table_is_routed():
    named = [re.match(r"\| `[^`]+`[^|]*\| `([^`]+)` \|", row).group(1) for row in url_table()]
    named = [name for name in named if not name.startswith("<app>:")]  # the kit's rows, for every app on it
    assert len(named) >= 20  # the table was found and read
    routed = routed_names(get_resolver())
    assert [name for name in named if name not in routed] == []


def test_the_pages_asked_for_are_read_from_the_installed_apps():
    names = routed_names(get_resolver())
    # The foundation's, Django's login and the apps' of project_apps.py; not the example app's.
    assert {"home", "login", "collection:topics", "argue:judge", "grades:judge", "metaeval:index"} <= names
    assert "verdicts:judge" not in names
    assert beside_the_project("tests.verdicts.parts")  # its URL module (the label-app kit's pages)
    assert "labels:leaderboard" in names  # the answer-label kit's boards, documented once for its apps
    assert not beside_the_project(resolve(reverse("argue:judge", args=[1])).func.__module__)
    assert not beside_the_project("argue.urls")


def test_the_kits_pages_are_read_from_the_urlconf():
    """A label app's pages the kit serves need no row of their own; every other page of an app does."""
    kit = kit_pages(get_resolver())
    assert {"argue:judge", "argue:sentence", "argue:label", "argue:reopen", "grades:organize_work"} <= kit
    assert not {"metaeval:index", "collection:topics", "home", "grades:rerun_stale"} & kit
    assert [row for row in url_table() if "| `<app>:judge` |" in row]  # the kit's rows are in the table
