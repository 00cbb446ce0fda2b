"""docs/trust.md names, for each family of checks, the tests that keep it: every one of them exists."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FAMILIES = ["Access", "Blinding", "Injection", "Bad input", "Concurrency", "Jobs", "Settings", "Lifecycle"]


def sections() -> dict[str, list[str]]:
    text = (REPO / "docs" / "trust.md").read_text()
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {
        title: re.findall(r"`(tests/[\w/]+\.py)`", body) for title, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def test_every_family_keeps_tests_and_every_named_test_file_exists():
    named = sections()
    assert list(named) == FAMILIES
    for family, paths in named.items():
        assert paths, f"{family}: no test named"
        for path in paths:
            assert (REPO / path).is_file(), f"{family}: {path} does not exist"
            assert "def test_" in (REPO / path).read_text(), f"{family}: {path} holds no test"
