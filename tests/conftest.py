"""Fixtures shared by the whole suite."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
SHARED_DATA = REPO.parent / "shared" / "data" / "trec-rag-2024"


@pytest.fixture
def shared_data() -> Path:
    """The full TREC 2024 RAG data beside the checkout; tests using it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the full TREC data is not at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def write_file(tmp_path: Path):
    """Write text (or bytes) to a file in a temporary folder and return its path."""

    def write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write
