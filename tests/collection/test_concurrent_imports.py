"""One file imported five times at the same moment (five uploads, five workers): one import writes it, the
other four find it there ("unchanged"), none fails on a unique key."""

import json
import threading

import pytest
from django.db import connection, connections

from assessor.collection.importing.runs import run_import
from assessor.collection.importing.topics import topics_import
from assessor.models import Answer, ImportBatch, Segment, Topic
from tests.builders import make_topic

pytestmark = [
    pytest.mark.skipif(connection.vendor == "sqlite", reason="imports writing at once need PostgreSQL (set DATABASE_URL)"),
    pytest.mark.django_db(transaction=True),
]


def imported_at_once(function, path, count: int = 5) -> list[str]:
    start = threading.Barrier(count)
    outcomes: list[str] = [""] * count

    def one(index: int) -> None:
        try:
            connection.ensure_connection()
            start.wait()
            result = function(path=path)
            outcomes[index] = f"created {result.created}, unchanged {result.unchanged}"
        except Exception as exc:
            outcomes[index] = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()

    threads = [threading.Thread(target=one, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(outcomes)


def test_five_imports_of_one_topics_file_at_once(write_file):
    path = write_file("topics.tsv", "".join(f"2025-{i}\tquestion number {i}\n" for i in range(300)))
    outcomes = imported_at_once(topics_import, path)
    assert outcomes == ["created 0, unchanged 300"] * 4 + ["created 300, unchanged 0"], outcomes
    assert Topic.objects.count() == 300
    assert ImportBatch.objects.count() == 1


def test_five_imports_of_one_run_file_at_once(write_file):
    topics = [make_topic(f"2024-{i}") for i in range(20)]
    lines = [
        {"run_id": "team.run", "topic_id": topic.pk, "topic": topic.query, "references": [f"doc_{i}#0", f"doc_{i}#1"],
         "answer": [{"text": f"Answer {i} says this.", "citations": [0]}, {"text": "And that.", "citations": [1, 0]}]}
        for i, topic in enumerate(topics)
    ]  # fmt: skip
    path = write_file("run.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    outcomes = imported_at_once(run_import, path)
    assert len([outcome for outcome in outcomes if "Error" in outcome]) == 0, outcomes
    assert Answer.objects.count() == 20 and Segment.objects.count() == 40
    assert ImportBatch.objects.count() == 1
