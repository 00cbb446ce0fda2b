"""On SQLite an import stages its writes and switches them in at its end (assessor/importing/staging.py).

All or nothing still: a bad line anywhere, the last one included, leaves every
table as it was; and an import committed by someone else during the
preparation makes the import prepare again, on what is now stored.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection

from assessor.collection.importing import qrels, runs, segments, topics
from assessor.collection.importing.qrels import qrels_import
from assessor.collection.importing.runs import run_import
from assessor.collection.importing.segments import segments_import
from assessor.collection.importing.topics import topics_import
from assessor.importing import base
from assessor.importing.base import ImportFailure
from assessor.models import Answer, AnswerReference, Citation, ImportBatch, Run, Sentence, Topic
from tests.builders import REPO, make_segment, make_topic

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="imports stage their writes on SQLite only"),
]


@pytest.fixture(autouse=True)
def staging_dir(settings, tmp_path) -> Path:
    settings.IMPORT_STAGING_DIR = tmp_path / "staging"
    return settings.IMPORT_STAGING_DIR


def every_table() -> dict[str, list]:
    """Every row of every table of the project's models."""
    return {
        model._meta.db_table: sorted(map(repr, model.objects.values_list()))
        for model in apps.get_models()
        if model._meta.managed and not model._meta.proxy
    }


def run_line(topic: int, **overrides) -> str:
    record = {
        "run_id": "team.run",
        "topic_id": f"t{topic}",
        "topic": f"query {topic}",
        "references": [f"d{topic}#0", f"d{topic}#1"],
        "answer": [{"text": f"Answer {topic} cites.", "citations": [1, 0]}, {"text": "And ends.", "citations": []}],
    }
    record.update(overrides)
    return json.dumps(record) + "\n"


# Each importer's file: good lines over several chunks, then a bad last line, and where the error must point.
BAD_LAST_LINES = {
    "topics": (
        lambda write: topics_import(path=write("t.tsv", "".join(f"n{i}\tquery {i}\n" for i in range(7)) + "n7\n")),
        topics,
        r"t\.tsv, line 8: expected 2 tab-separated fields",
    ),
    "segments": (
        lambda write: segments_import(
            path=write("s.jsonl", "".join(json.dumps({"docid": f"s{i}#0", "segment": "text"}) + "\n" for i in range(7)) + '{"docid": "s7#0"}\n')
        ),
        segments,
        r"s\.jsonl, line 8, field 'segment': missing",
    ),
    "qrels": (
        lambda write: qrels_import(
            path=write("q.txt", "".join(f"t{i} 0 d{i}#0 2\n" for i in range(7)) + "t7 0 d7#0 9\n"), source="nist"
        ),
        qrels,
        r"q\.txt, line 8, field 'grade': grade 9 is not in 0-3",
    ),
    "runs": (
        lambda write: run_import(
            path=write("r.jsonl", "".join(run_line(i) for i in range(7)) + run_line(7, answer=[{"text": "x", "citations": [5]}]))
        ),
        runs,
        r"r\.jsonl, line 8, field 'answer\[0\]\.citations\[0\]': citation 5 is out of range",
    ),
}


@pytest.mark.parametrize("importer", sorted(BAD_LAST_LINES))
def test_a_bad_last_line_leaves_every_table_unchanged(importer, write_file, monkeypatch, staging_dir):
    run_it, module, message = BAD_LAST_LINES[importer]
    for number in range(8):
        make_topic(f"t{number}", query=f"query {number}")
    make_segment("d0#0", text="stored before")
    # Chunks of two lines: the good lines are staged, in several chunks, before the bad one is read.
    monkeypatch.setattr(module, "chunked", lambda items, size=2: base.chunked(items, 2))
    before = every_table()
    with pytest.raises(ImportFailure, match=message):
        run_it(write_file)
    assert every_table() == before
    assert list(staging_dir.iterdir()) == [], "the staging file outlived the import"


def test_the_rows_of_a_staged_import_get_their_keys_at_the_switch(write_file, staging_dir):
    for number in range(3):
        make_topic(f"t{number}", query=f"query {number}")
    # Rows made before, so that the staged keys must be moved past them.
    run_import(path=write_file("first.jsonl", run_line(0)))
    result = run_import(path=write_file("r.jsonl", run_line(1) + run_line(2, run_id="team.other")))
    assert result.created == 2
    batch = ImportBatch.objects.get(pk=result.batch.pk)
    assert (batch.file_name, batch.created) == ("r.jsonl", 2)
    answers = Answer.objects.filter(imported_from=batch).order_by("topic_id")
    assert [(a.run.run_id, a.topic_id) for a in answers] == [("team.run", "t1"), ("team.other", "t2")]
    assert Run.objects.get(run_id="team.other").imported_from == batch
    for answer in answers:
        topic = answer.topic_id[1:]
        assert list(answer.references.values_list("rank", "segment_id")) == [(0, f"d{topic}#0"), (1, f"d{topic}#1")]
        first = answer.sentences.get(index=0)
        assert list(first.citations.values_list("position", "segment_id", "reference_rank")) == [
            (0, f"d{topic}#1", 1),
            (1, f"d{topic}#0", 0),
        ]
    assert (Answer.objects.count(), Sentence.objects.count(), AnswerReference.objects.count(), Citation.objects.count()) == (
        3,
        6,
        6,
        6,
    )
    assert list(staging_dir.iterdir()) == []


def test_an_import_committed_during_the_preparation_makes_it_prepare_again(write_file, monkeypatch):
    prepared = []
    prepare = topics._topics_prepare

    def meanwhile(writes, **options):
        prepared.append(options["path"].name)
        result = prepare(writes, **options)
        if len(prepared) == 1:
            # Another import commits its rows while this one is prepared.
            topics_import(path=write_file("other.tsv", "t1\tanother query\n"))
        return result

    monkeypatch.setattr(topics, "_topics_prepare", meanwhile)
    result = topics_import(path=write_file("t.tsv", "t0\tquery 0\n"))
    # Prepared twice, before and after the other import.
    assert prepared == ["t.tsv", "other.tsv", "t.tsv"]
    assert result.created == 1
    assert dict(Topic.objects.values_list("id", "query")) == {"t0": "query 0", "t1": "another query"}


def test_a_conflicting_change_during_the_preparation_is_named_by_line_and_field(write_file, monkeypatch):
    prepare = topics._topics_prepare
    calls = []

    def meanwhile(writes, **options):
        calls.append(1)
        result = prepare(writes, **options)
        if len(calls) == 1:
            # Another import stores topic t1 with another query before this one switches.
            topics_import(path=write_file("other.tsv", "t1\tanother query\n"))
        return result

    monkeypatch.setattr(topics, "_topics_prepare", meanwhile)
    with pytest.raises(ImportFailure, match=r"t\.tsv, line 2, field 'query': topic t1 is stored with another query"):
        topics_import(path=write_file("t.tsv", "t0\tquery 0\nt1\tquery 1\n"))
    assert dict(Topic.objects.values_list("id", "query")) == {"t1": "another query"}


@pytest.mark.django_db(transaction=True)
def test_the_switch_on_a_database_file(tmp_path):
    """The switch copies rows inside SQLite (the staging file attached), which an in-memory test database cannot show."""
    environment = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environment.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        ASSESSOR_VAR_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="assessor.project.settings",
        PYTHONPATH=str(REPO),
    )
    result = subprocess.run(
        [sys.executable, "-m", "tests.collection.staging_probe", str(tmp_path)],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["failure"].startswith(str(tmp_path / "bad.jsonl") + ", line 5, field 'topic_id': unknown topic"), report
    assert report["after_failure"] == report["before"]
    assert report["answers"] == 4 and report["citations"] == 16 and report["references"] == 8, report
    assert report["foreign_key_violations"] == [], report
    assert report["staging_files"] == [], report
