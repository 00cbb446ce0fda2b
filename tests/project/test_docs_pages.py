"""docs/pages.md lists every page the URLconf routes, under the name it is routed by, and no page that is gone."""

import re
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

PAGES_DOC = Path(__file__).resolve().parents[2] / "docs" / "pages.md"


def _of_the_test_settings(pattern: URLPattern) -> bool:
    """A page of the example app only the test settings install (tests/verdicts): not the product's."""
    return getattr(pattern.callback, "__module__", "").startswith("tests.")


def routed_names(resolver: URLResolver, namespace: str = "") -> set[str]:
    names: set[str] = set()
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            names |= routed_names(pattern, inner)
        elif isinstance(pattern, URLPattern) and pattern.name and not _of_the_test_settings(pattern):
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
    missing = [name for name in missing if name not in mentioned]
    assert missing == []


def test_every_page_in_the_url_table_is_routed():
    named = [re.match(r"\| `[^`]+`[^|]*\| `([^`]+)` \|", row).group(1) for row in url_table()]
    assert len(named) >= 20  # the table was found and read
    routed = routed_names(get_resolver())
    assert [name for name in named if name not in routed] == []
