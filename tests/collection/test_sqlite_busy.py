"""Imports on a file SQLite database: label saves go on while an import reads its file, and a save
that meets the import's write lock waits or is told to retry, never 500s.

An import reads, checks and stages its file with no write lock, and holds the lock only for
its switch (assessor/importing/staging.py): the saves made meanwhile land at once.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Each probe makes a SQLite file of its own, whatever the suite's database.
pytestmark = pytest.mark.database_independent
SAVERS = 6


def probe(tmp_path: Path, *, topics: int, busy_timeout: float, mode: str) -> dict:
    topics_file = tmp_path / "topics.tsv"
    with topics_file.open("w") as handle:
        for number in range(topics):
            handle.write(f"t{number}\tquery number {number} about a long import\n")
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environment.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        ASSESSOR_VAR_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="assessor.project.settings",
        SQLITE_BUSY_TIMEOUT=str(busy_timeout),
        PYTHONPATH=str(REPO),
    )
    result = subprocess.run(
        [sys.executable, "-m", "tests.collection.sqlite_busy_probe", str(topics_file), str(SAVERS), mode],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_saves_while_an_import_reads_its_file_land_at_once(tmp_path):
    # A busy timeout well below the import's time: a save that met a lock held for the whole import would
    # be told to retry until the import is over.
    report = probe(tmp_path, topics=150_000, busy_timeout=1.0, mode="early")
    assert report["import"]["ok"], report["import"]
    # The import held the write lock for its switch, a small part of its time, not for the whole of it.
    assert report["lock"]["longest_hold"] < 0.5 * report["import"]["seconds"], report["lock"]
    # Every save made while the import read its file landed at the first try, without waiting for the import.
    assert all(save["statuses"] == [302] for save in report["saves"]), report["saves"]
    assert all(save["end"] < report["import"]["end"] for save in report["saves"]), report
    assert len(report["saves"]) == report["labels"] == report["expected_labels"] == SAVERS


@pytest.mark.slow
def test_saves_that_meet_the_switch_are_told_to_retry_and_all_land(tmp_path):
    # A busy timeout below the switch's time, so that a save meeting it may be told to retry.
    report = probe(tmp_path, topics=150_000, busy_timeout=0.01, mode="at_lock")
    assert report["import"]["ok"], report["import"]
    statuses = [status for save in report["saves"] for status in save["statuses"]]
    assert 500 not in statuses, report
    assert set(statuses) <= {302, "503 Retry-After 5"}, report
    assert all(save["statuses"][-1] == 302 for save in report["saves"]), report
    assert len(report["saves"]) == report["labels"] == report["expected_labels"] == SAVERS


@pytest.mark.slow
def test_saves_wait_for_an_import_shorter_than_the_busy_timeout(tmp_path):
    report = probe(tmp_path, topics=20_000, busy_timeout=60, mode="at_lock")
    assert report["import"]["ok"], report["import"]
    assert len(report["saves"]) == SAVERS
    assert all(save["statuses"] == [302] for save in report["saves"]), report
    assert report["labels"] == SAVERS
