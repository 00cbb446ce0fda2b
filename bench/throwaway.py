"""A throw-away database of the configured kind, made and dropped like a test database, so that a
benchmark never touches the real data: a file in `folder` on SQLite, `<prefix>_<pid>` on PostgreSQL."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection


@contextmanager
def throwaway_database(folder: Path, *, prefix: str) -> Iterator[None]:
    test_settings = connection.settings_dict.setdefault("TEST", {})
    # One database per process: two benchmarks at once must not drop each other's.
    name = f"{prefix}_{os.getpid()}"
    test_settings["NAME"] = str(folder / f"{name}.sqlite3") if connection.vendor == "sqlite" else name
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
