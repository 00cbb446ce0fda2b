import pytest
from django.core.management import call_command
from django.db import connection

from assessor.collection.importing.runs import run_import
from assessor.importing import base
from assessor.models import Citation, Run, Sentence
from tests.builders import FIXTURES

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


def estimated_rows(table: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=False)
def test_an_import_analyzes_the_tables_it_filled_before_its_scores_read_them(monkeypatch):
    """Inside the import's transaction, so that the kept-score refresh plans on the rows just written."""
    if connection.vendor != "postgresql":
        pytest.skip("planner statistics are PostgreSQL's (DATABASE_URL selects it); staged SQLite imports analyze after")
    call_command("import_topics", str(FIXTURES / "collection" / "topics.tsv"))
    with connection.cursor() as cursor:
        for table in ("assessor_sentence", "assessor_citation", "assessor_run"):
            cursor.execute(f"ANALYZE {table}")  # empty: an estimate of 0 rows
    assert estimated_rows("assessor_sentence") == estimated_rows("assessor_run") == 0
    monkeypatch.setattr(base, "ANALYZE_WRITTEN_ROWS", 2)
    run_import(path=FIXTURES / "collection" / "run_l31_70b.jsonl")

    sentences, citations = Sentence.objects.count(), Citation.objects.count()
    assert sentences > 2 and citations > 2 and Run.objects.count() == 1
    # Still in the test's transaction: only an ANALYZE inside the import's can have counted these rows.
    assert estimated_rows("assessor_sentence") == sentences
    assert estimated_rows("assessor_citation") == citations
    # One run row is below the threshold: its table keeps the estimate it had.
    assert estimated_rows("assessor_run") == 0
