import pytest
from django.core.management import call_command
from django.db import connection

from assessor.collection.importing import base

pytestmark = pytest.mark.django_db(transaction=True)


def last_analyzed(table: str):
    with connection.cursor() as cursor:
        cursor.execute("SELECT last_analyze FROM pg_stat_user_tables WHERE relname = %s", [table])
        return cursor.fetchone()[0]


def test_a_large_import_refreshes_postgresql_statistics(write_file, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("planner statistics are PostgreSQL's (DATABASE_URL selects it)")
    monkeypatch.setattr(base, "ANALYZE_AFTER_ROWS", 2)
    before = last_analyzed("assessor_topic")
    call_command("import_topics", str(write_file("topics.tsv", "2024-1\ta\n2024-2\tb\n")))
    after = last_analyzed("assessor_topic")
    assert after is not None and (before is None or after > before)


def test_a_small_import_leaves_postgresql_statistics_to_autovacuum(write_file):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's bounded ANALYZE follows every import (tests/collection/test_statistics.py)")
    result = base.ImportResult(path="x", created=base.ANALYZE_AFTER_ROWS - 1)
    assert base.statistics_refresh(result) is False


def test_an_import_that_wrote_nothing_leaves_statistics_alone():
    assert base.statistics_refresh(base.ImportResult(path="x", unchanged=5)) is False
