"""Descriptive statistics on NIST's real TREC 2024 RAG judgments, against counts read here from the files."""

import json
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data, pytest.mark.slow]

NUGGET_FILE = "nugget_assignment.20241108.jl"
SUPPORT_FILES = {
    "postedit": "final.citation_judgments_with_prediction.20241025.jsonl",
    "scratch": "final.citation_judgments_without_prediction.20241025.jsonl",
}


def _require_commands(*names: str) -> None:
    missing = [name for name in names if name not in get_commands()]
    if missing:
        pytest.skip(f"not available yet: {', '.join(missing)}")


def _lines(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _describe(*sources: str) -> dict:
    out = StringIO()
    call_command("describe", *sources, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_descriptive_statistics_of_nists_auto_edit_manual_condition(shared_data):
    _require_commands("import_topics", "import_assignments")
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=StringIO())
    call_command(
        "import_assignments", str(shared_data / NUGGET_FILE), "--nuggets", "auto_edit", "--assigner", "manual",
        stdout=StringIO(),
    )  # fmt: skip

    # Independently: the nuggets of a topic repeat on each of its answers; count them once a topic.
    topic_nuggets: dict[str, list[dict]] = {}
    labels: Counter = Counter()
    for record in _lines(shared_data / NUGGET_FILE):
        topic_nuggets.setdefault(record["qid"], record["nuggets"])
        labels.update(nugget["assignment"] for nugget in record["nuggets"])
    nuggets = [nugget for listed in topic_nuggets.values() for nugget in listed]
    importance = Counter(nugget["importance"] for nugget in nuggets)
    total_labels = sum(labels.values())

    described = _describe("auto_edit/manual")["auto_edit/manual"]
    assert described["topics"] == len(topic_nuggets) == 21
    assert described["avg_nuggets"] == pytest.approx(len(nuggets) / len(topic_nuggets))
    assert described["avg_nugget_words"] == pytest.approx(sum(len(n["text"].split()) for n in nuggets) / len(nuggets))
    assert described["pct_vital"] == pytest.approx(100 * importance["vital"] / len(nuggets))
    assert described["pct_okay"] == pytest.approx(100 * importance["okay"] / len(nuggets))
    for label in ("not_support", "partial_support", "support"):
        assert described[f"pct_{label}"] == pytest.approx(100 * labels[label] / total_labels)


def test_descriptive_statistics_of_nists_support_judgments(shared_data):
    _require_commands("import_topics", "import_support")
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=StringIO())
    for method, name in SUPPORT_FILES.items():
        call_command("import_support", str(shared_data / name), "--method", method, stdout=StringIO())

    described = _describe(*(f"support:{method}" for method in SUPPORT_FILES))
    for method, name in SUPPORT_FILES.items():
        topics: set[str] = set()
        grades: Counter = Counter()
        for record in _lines(shared_data / name):
            topics.add(record["topic_id"])
            for sentence in record["sentences"]:
                if sentence["citations"]:
                    # Only the first citation of a sentence is judged.
                    grades[int(sentence["citations"][0]["support"])] += 1
        assert described[f"support:{method}"] == {
            "topics": len(topics),
            "pairs": grades[0] + grades[1] + grades[2],
            "FS": grades[2],
            "PS": grades[1],
            "NS": grades[0],
        }


def test_nists_condition_compared_with_itself_agrees_fully(shared_data):
    """The whole chain on real data: every label pairs with itself, every tau is 1 where defined."""
    _require_commands("import_topics", "import_assignments")
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=StringIO())
    call_command(
        "import_assignments", str(shared_data / NUGGET_FILE), "--nuggets", "auto_edit", "--assigner", "manual",
        stdout=StringIO(),
    )  # fmt: skip
    answers = sum(1 for _ in _lines(shared_data / NUGGET_FILE))
    out = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/manual", "--metric", "Vstrict", "--json", stdout=out)
    data = json.loads(out.getvalue())
    values = data["metrics"]["Vstrict"]
    assert values["pairs"] == answers
    assert values["topics"] == 21
    assert values["tau_run"] == pytest.approx(1.0) and values["tau_all"] == pytest.approx(1.0)
    assert data["confusion"]["kappa"] == pytest.approx(1.0)
    counts = data["confusion"]["counts"]
    assert sum(counts[i][i] for i in range(3)) == sum(map(sum, counts))
