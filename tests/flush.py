"""Transactional tests empty the database after each test (Django's flush): on PostgreSQL by DELETE, not TRUNCATE.

A TRUNCATE gives every table it names, and each of their indexes, a new file, however few rows they hold: with the
project's tables that took 0.5-3 s a test on a two-CPU machine running both suites at once, where deleting the few
rows a test leaves took 6-25 ms all told. Every transactional test (the browser's, the workers') flushes once.

The deletes run in the flush's one transaction (`execute_sql_flush`), and Django makes its foreign keys DEFERRABLE
INITIALLY DEFERRED: they are checked at its commit, when every table is empty, so the order of the deletes does not
matter. A flush that asks for its sequences reset keeps the TRUNCATE ... RESTART IDENTITY it needs.
"""

from collections.abc import Sequence
from typing import Any

from django.db.backends.postgresql.operations import DatabaseOperations

_truncate = DatabaseOperations.sql_flush


def _sql_flush_by_delete(
    self: DatabaseOperations,
    style: Any,
    tables: Sequence[str],
    *,
    reset_sequences: bool = False,
    allow_cascade: bool = False,
) -> list[str]:
    if reset_sequences or not tables:
        return _truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
    # Said again for the keys Django made deferred; one made otherwise would fail the flush at its delete, loudly.
    return ["SET CONSTRAINTS ALL DEFERRED"] + [
        f"{style.SQL_KEYWORD('DELETE')} {style.SQL_KEYWORD('FROM')} {style.SQL_FIELD(self.quote_name(table))};"
        for table in tables
    ]


def flush_by_delete() -> None:
    """Make this process's PostgreSQL flushes delete rows instead of truncating tables (tests/conftest.py)."""
    DatabaseOperations.sql_flush = _sql_flush_by_delete  # type: ignore[method-assign]
