"""Every path that fills a database leaves the planner statistics fresh: commands, uploads, the demo, jobs."""

from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import OperationalError, connection
from django.urls import reverse

from assessor.importing.base import ImportResult, statistics_refresh
from assessor.jobs.engine import job_run_sync
from assessor.work.roles import Role
from assignment.auto import auto_assign_job_create
from tests.builders import make_user
from tests.scenarios import make_scenario

pytestmark = pytest.mark.django_db(transaction=True)


def analyzed_tables() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")
            if not cursor.fetchone():
                return set()
            cursor.execute("SELECT DISTINCT tbl FROM sqlite_stat1")
        else:
            cursor.execute("SELECT relname FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL")
        return {name for (name,) in cursor.fetchall()}


def forget_statistics() -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")
            if cursor.fetchone():
                cursor.execute("DELETE FROM sqlite_stat1")


def test_an_import_command_refreshes_the_statistics_on_sqlite(write_file):
    if connection.vendor != "sqlite":
        pytest.skip("on PostgreSQL a small import is left to autovacuum (tests/collection/test_import_statistics.py)")
    forget_statistics()
    call_command("import_topics", str(write_file("topics.tsv", "2024-1\ta\n2024-2\tb\n")))
    assert "assessor_topic" in analyzed_tables()


def test_the_upload_page_refreshes_the_statistics_on_sqlite(client, upload_worker):
    if connection.vendor != "sqlite":
        pytest.skip("on PostgreSQL a small import is left to autovacuum (tests/collection/test_import_statistics.py)")
    forget_statistics()
    client.force_login(make_user(Role.ORGANIZER))
    client.post(reverse("collection:upload"), {"kind": "topics", "file": SimpleUploadedFile("t.tsv", b"2024-1\ta\n")})
    assert "assessor_topic" in analyzed_tables()


def test_the_demo_leaves_statistics_for_the_tables_it_filled():
    forget_statistics()
    call_command("load_demo", stdout=open("/dev/null", "w"))
    filled = {"assessor_topic", "assessor_segment", "assessor_qrel", "assessor_answer", "assessor_citation"}
    filled |= {"assignment_assignmentlabel", "support_supportlabel", "nuggets_nugget"}
    assert filled <= analyzed_tables()


def test_a_finished_job_leaves_statistics_for_the_labels_it_wrote(llm_server):
    if connection.vendor != "sqlite":
        pytest.skip("on PostgreSQL a small job is left to autovacuum, as a small import is")
    make_scenario(plant_llm=False)
    forget_statistics()
    job_run_sync(auto_assign_job_create(nuggets="manual", name="gpt").pk)
    assert "assignment_assignmentlabel" in analyzed_tables()


def test_a_path_that_wrote_nothing_leaves_the_statistics_alone():
    assert statistics_refresh(rows=0) is False
    assert statistics_refresh(ImportResult(path="x")) is False


def test_a_busy_database_leaves_the_statistics_for_later_without_failing_the_import():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's lock")
    busy = mock.patch.object(connection, "cursor", side_effect=OperationalError("database is locked"))
    with busy:
        assert statistics_refresh(ImportResult(path="x", created=1)) is False
    broken = mock.patch.object(connection, "cursor", side_effect=OperationalError("disk I/O error"))
    with broken, pytest.raises(OperationalError):
        statistics_refresh(ImportResult(path="x", created=1))
