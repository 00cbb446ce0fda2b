"""The benchmark collection generator, at a tiny size."""

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessor.models import Topic
from assignment.models import AssignmentLabel
from bench import collection_data as benchmark
from bench.collection_data import benchmark_collection_build


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def collection(tmp_path):
    return benchmark_collection_build(folder=tmp_path, topics=4, runs=3, nuggets=6, seed=7)


def test_it_writes_the_counts_asked_for(collection):
    with collection["topics"].open(encoding="utf-8", newline="") as handle:
        topics = [row for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)]
    assert len(topics) == 4 and all(len(row) == 2 for row in topics)
    topic_ids = {row[0] for row in topics}
    assert len(topic_ids) == 4

    assert len(collection["runs"]) == 3
    for run_path in collection["runs"]:
        answers = _jsonl(run_path)
        assert {answer["topic_id"] for answer in answers} == topic_ids
        assert len({answer["run_id"] for answer in answers}) == 1

    for name in ("assignments_manual", "assignments_auto", "support_scratch", "support_auto"):
        records = _jsonl(collection[name])
        assert len(records) == 4 * 3, name


def test_the_answers_agree_across_files(collection):
    runs = {}
    for run_path in collection["runs"]:
        for answer in _jsonl(run_path):
            runs[(answer["run_id"], answer["topic_id"])] = answer
            assert 1 <= len(answer["references"]) <= 20
            for sentence in answer["answer"]:
                assert all(0 <= index < len(answer["references"]) for index in sentence["citations"])
            text = " ".join(sentence["text"] for sentence in answer["answer"])
            assert answer["response_length"] == len(text.split())
    assert len(runs) == 3 * 4  # every run answers every topic

    manual = _jsonl(collection["assignments_manual"])
    assert len(manual) == 3 * 4
    for record in manual:
        answer = runs[(record["run_id"], record["qid"])]
        assert record["answer_text"] == " ".join(sentence["text"] for sentence in answer["answer"])

    scratch = _jsonl(collection["support_scratch"])
    assert len(scratch) == 3 * 4
    for record in scratch:
        team, run_id = record["run_id"].split(".", 1)
        assert team.startswith("team")
        answer = runs[(run_id, record["topic_id"])]
        assert [s["text"] for s in record["sentences"]] == [s["text"] for s in answer["answer"]]
        for judged, sentence in zip(record["sentences"], answer["answer"], strict=True):
            if sentence["citations"]:
                (citation,) = judged["citations"]
                assert citation["reference"] == answer["references"][sentence["citations"][0]]
                assert citation["support"] in {"0", "1", "2"}
            else:
                assert judged["citations"] == []


def test_the_two_conditions_share_the_nuggets_of_each_topic(collection):
    nuggets_of_topic: dict[str, list[tuple[str, str]]] = {}
    for name in ("assignments_manual", "assignments_auto"):
        for record in _jsonl(collection[name]):
            nuggets = [(n["text"], n["importance"]) for n in record["nuggets"]]
            assert len(nuggets) == 6
            assert nuggets_of_topic.setdefault(record["qid"], nuggets) == nuggets
            importances = [importance for _, importance in nuggets]
            assert importances == sorted(importances, key=lambda i: i != "vital")
            assert {n["assignment"] for n in record["nuggets"]} <= {"support", "partial_support", "not_support"}
    assert len(nuggets_of_topic) == 4


def test_qrels_and_segments_cover_every_cited_segment(collection):
    segments = {record["docid"] for record in _jsonl(collection["segments"])}
    qrels = [line.split() for line in collection["qrels"].read_text().splitlines()]
    assert all(len(row) == 4 and row[1] == "0" and row[3] in {"0", "1", "2", "3"} for row in qrels)
    assert {row[2] for row in qrels} == segments
    relevant = Counter(row[0] for row in qrels if row[3] != "0")
    assert all(3 <= count <= 7 for count in relevant.values()) and len(relevant) == 4
    for run_path in collection["runs"]:
        for answer in _jsonl(run_path):
            assert set(answer["references"]) <= segments


def test_the_llm_condition_labels_partial_support_more_often(tmp_path):
    paths = benchmark_collection_build(folder=tmp_path, topics=10, runs=10, nuggets=20, seed=1)
    shares = {}
    for name in ("assignments_manual", "assignments_auto"):
        labels = Counter(n["assignment"] for record in _jsonl(paths[name]) for n in record["nuggets"])
        shares[name] = labels["partial_support"] / sum(labels.values())
    assert 0.08 < shares["assignments_manual"] < 0.22
    assert shares["assignments_auto"] > shares["assignments_manual"] + 0.05


def test_the_same_seed_writes_the_same_files(tmp_path):
    first = benchmark_collection_build(folder=tmp_path / "a", topics=2, runs=2, nuggets=3, seed=5)
    second = benchmark_collection_build(folder=tmp_path / "b", topics=2, runs=2, nuggets=3, seed=5)
    for name in ("topics", "segments", "qrels", "assignments_auto", "support_auto"):
        assert first[name].read_bytes() == second[name].read_bytes(), name


def test_without_the_real_topics_it_makes_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(benchmark, "REAL_TOPICS_FILE", tmp_path / "absent.txt")
    paths = benchmark_collection_build(folder=tmp_path / "c", topics=3, runs=1, nuggets=2)
    rows = [line.split("\t") for line in paths["topics"].read_text().splitlines()]
    assert len(rows) == 3 and all(topic_id.startswith("2024-") and query for topic_id, query in rows)


def test_it_takes_the_real_topics_when_they_are_there(tmp_path, shared_data):
    paths = benchmark_collection_build(folder=tmp_path, topics=5, runs=1, nuggets=2)
    real = (shared_data / "topics.rag24.test.txt").read_text(encoding="utf-8").splitlines()[:5]
    assert paths["topics"].read_text(encoding="utf-8").splitlines() == real


@pytest.mark.django_db
def test_bench_collection_imports_and_scores_a_tiny_collection(tmp_path):
    out = io.StringIO()
    # No worker: it could not see the test's uncommitted collection.
    arguments = ["--topics", "3", "--runs", "2", "--nuggets", "4", "--folder", str(tmp_path), "--in-place", "--no-worker"]
    call_command("bench_collection", *arguments, stdout=out)
    printed = out.getvalue()
    steps = (
        "import_topics",
        "import_run x2",
        "import_assignments (auto)",
        "import_support (scratch)",
        "nugget_scores(auto_edit, manual)",
        "support_scores(scratch)",
    )
    for step in steps:
        assert step in printed, step
    assert "skipped" not in printed
    # 3 topics x 2 runs, scored under one condition.
    assert printed.count("6 answers, 2 runs") == 2
    assert AssignmentLabel.objects.filter(assigner="auto").count() == 3 * 2 * 4


@pytest.mark.django_db
def test_bench_collection_refuses_a_database_that_holds_topics(tmp_path):
    Topic.objects.create(id="2024-1", query="q")
    with pytest.raises(CommandError, match="already holds topics"):
        arguments = ["--topics", "1", "--runs", "1", "--folder", str(tmp_path), "--in-place"]
        call_command("bench_collection", *arguments, stdout=io.StringIO())
