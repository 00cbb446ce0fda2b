"""A benchmark vacuums and analyzes the database before it times anything, and says how much earlier runs left."""

import pytest
from django.db import connection, transaction

from assessor.models import Run, Topic
from bench.tidy import bench_leftovers, database_tidied
from tests.builders import make_answer, make_run, make_topic


def _sqlite_free_pages() -> int:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA freelist_count")
        return cursor.fetchone()[0]


def _postgresql_maintained(table: str) -> tuple[bool, bool]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT last_vacuum IS NOT NULL, last_analyze IS NOT NULL FROM pg_stat_user_tables "
                       "WHERE relname = %s", [table])  # fmt: skip
        vacuumed, analyzed = cursor.fetchone()
        return vacuumed, analyzed


def _analyzed_tables() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT DISTINCT tbl FROM sqlite_stat1")
        else:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT relname FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL")
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_it_vacuums_and_analyzes():
    Topic.objects.bulk_create(Topic(id=f"t{i}", query="a query long enough to fill pages " * 8) for i in range(3000))
    Topic.objects.exclude(id__in=["t1", "t2"]).delete()  # SQLite's ANALYZE writes no statistics of an empty table
    free_before = _sqlite_free_pages() if connection.vendor == "sqlite" else 0
    if connection.vendor == "sqlite":
        assert free_before > 50  # the deleted rows' pages, until a VACUUM gives them back
    line = database_tidied()
    assert line.startswith("vacuumed and analyzed (")
    assert line.endswith(" s")
    if connection.vendor == "sqlite":
        # The VACUUM gave the pages back; the ANALYZE after it may free a page or two of the statistics it rewrote
        # (more of them in a database other tests analyzed before).
        assert _sqlite_free_pages() < free_before // 10
    else:
        assert _postgresql_maintained(Topic._meta.db_table) == (True, True)
    assert Topic._meta.db_table in _analyzed_tables()


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_it_analyzes_only():
    with transaction.atomic():
        make_answer(make_run("r1"), make_topic("t1"), [("a sentence", [])])
        line = database_tidied()
        assert line.startswith("analyzed (inside the benchmark's transaction")
        assert Run._meta.db_table in _analyzed_tables()


@pytest.mark.django_db
def test_leftovers_count_the_rows_of_earlier_runs_only():
    assert bench_leftovers() == "leftovers of earlier runs (bench-*): none"
    old_run = make_run("bench-0123abcd-r00")
    for t in range(2):
        make_answer(old_run, make_topic(f"bench-0123abcd-t00{t}"), [("a sentence", [])])
    make_answer(make_run("team.run"), make_topic("2024-1"), [("not a benchmark's", [])])
    line = bench_leftovers()
    assert line.startswith("leftovers of earlier runs (bench-*): 2 topics, 1 runs, 2 answers, 0 segments, 0 jobs;")
