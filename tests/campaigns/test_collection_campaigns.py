"""The collection's files in two campaigns: the same topics, segments, qrels and run imported into each stand side
by side (topics under their stored keys, runs matched within their campaign), each campaign's exports give back
the files' own ids, an id holding "@" is refused where it is read, and a closed campaign takes no import."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessor.campaigns.services import campaign_close, campaign_create
from assessor.collection.exporting import campaign_file_name
from assessor.collection.score_formats import ScoreFile, score_table_lines
from assessor.contracts import Scores
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import Answer, Campaign, ImportBatch, Qrel, QrelSource, Run, RunAlias, Segment, Topic
from assessor.models.scope import campaign_first, campaign_scope
from assessor.work.topic_picker import topic_choices
from tests.builders import REPO

FIXTURES = REPO / "tests" / "fixtures" / "collection"
TOPICS, SEGMENTS = FIXTURES / "topics.tsv", FIXTURES / "segments.jsonl"
QRELS, RUN = FIXTURES / "qrels.txt", FIXTURES / "run_l31_70b.jsonl"
RUN_ID = "baseline_rag24.test_l31_70b_instruct_top20"


# --- the files, read by hand --------------------------------------------------------------------


def file_topic_ids() -> list[str]:
    return [line.split("\t", 1)[0] for line in TOPICS.read_text(encoding="utf-8").splitlines() if line.strip()]


def file_qrels(path: Path = QRELS) -> list[tuple[str, str, str]]:
    """(topic, docid, grade) of each line; the iteration column may be "0" or "Q0"."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        topic, _, docid, grade = line.split()
        rows.append((topic, docid, grade))
    return rows


def file_answers(path: Path = RUN) -> dict[str, dict]:
    """Each line's answer by its topic: the fields an export writes back as they were."""
    answers = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        answers[record["topic_id"]] = {
            "run_id": record["run_id"],
            "topic": record["topic"],
            "references": record["references"],
            "answer": record["answer"],
        }
    return answers


# --- fixtures and helpers -----------------------------------------------------------------------


@pytest.fixture
def main(db) -> Campaign:
    return campaign_first()


@pytest.fixture
def b(main) -> Campaign:
    return campaign_create(slug="b", title="B")


def out(*args, **options) -> str:
    stdout = StringIO()
    call_command(*args, stdout=stdout, stderr=StringIO(), **options)
    return stdout.getvalue()


def collection_import(slug: str) -> None:
    out("import_topics", str(TOPICS), campaign=slug)
    out("import_segments", str(SEGMENTS), campaign=slug)
    out("import_qrels", str(QRELS), "--source", "nist", campaign=slug)
    out("import_run", str(RUN), campaign=slug)


def rows_of(campaign: Campaign) -> dict[str, int]:
    with campaign_scope(campaign):
        return {
            "topics": Topic.objects.count(),
            "runs": Run.objects.count(),
            "answers": Answer.objects.filter(run__campaign=campaign).count(),
            "qrel sources": QrelSource.objects.count(),
            "qrels": Qrel.objects.filter(source__campaign=campaign).count(),
        }


def written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def everything() -> tuple[int, ...]:
    """Counts of every kind of row an import of the collection writes, in every campaign."""
    return (
        Topic.objects.unscoped().count(),
        Run.objects.unscoped().count(),
        Answer.objects.count(),
        Qrel.objects.count(),
        QrelSource.objects.unscoped().count(),
        Segment.objects.count(),
        ImportBatch.objects.unscoped().count(),
    )


# --- side by side -------------------------------------------------------------------------------


def test_the_same_files_in_two_campaigns_stand_side_by_side(main, b):
    collection_import("main")
    segments = Segment.objects.count()
    assert segments >= 12  # the file's, and the documents the qrels and the run cite beyond it
    collection_import("b")
    ids = file_topic_ids()
    assert len(ids) == 3
    expected = {"topics": 3, "runs": 1, "answers": 3, "qrel sources": 1, "qrels": 15}
    assert rows_of(main) == expected
    assert rows_of(b) == expected
    keys = set(Topic.objects.unscoped().values_list("campaign__slug", "id"))
    assert keys == {("main", topic) for topic in ids} | {("b", f"{topic}@b") for topic in ids}
    # One run id, two runs: each campaign's own.
    runs = sorted(Run.objects.unscoped().filter(run_id=RUN_ID).values_list("campaign__slug", flat=True))
    assert runs == ["b", "main"]
    # Each campaign's answers are on its own topics.
    assert set(Answer.objects.filter(run__campaign=b).values_list("topic_id", flat=True)) == {f"{t}@b" for t in ids}
    # The segments are one corpus: imported twice, stored once.
    assert Segment.objects.count() == segments


def test_an_import_again_into_the_second_campaign_changes_nothing_and_leaves_the_first_alone(main, b):
    collection_import("main")
    collection_import("b")
    before = everything()
    summary = out("import_qrels", str(QRELS), "--source", "nist", campaign="b")
    assert "15 unchanged" in summary
    out("import_run", str(RUN), campaign="b")
    out("import_topics", str(TOPICS), campaign="b")
    assert everything()[:6] == before[:6]


def test_runs_are_matched_within_their_campaign_only(main, b, tmp_path):
    """A team-prefixed id and an alias of the first campaign name nothing in the second."""
    lines = RUN.read_text(encoding="utf-8").splitlines()
    out("import_topics", str(TOPICS), campaign="main")
    out("import_topics", str(TOPICS), campaign="b")
    prefixed = written(tmp_path, "prefixed.jsonl", lines[0].replace(RUN_ID, "team.x") + "\n")
    plain = written(tmp_path, "plain.jsonl", lines[1].replace(RUN_ID, "x") + "\n")
    out("import_run", str(prefixed), campaign="main")
    out("import_run", str(plain), campaign="main")
    out("import_run", str(plain), campaign="b")
    # In main "x" is "team.x" (the team-prefix rule); in b it is a run of its own.
    assert sorted(Run.objects.unscoped().values_list("campaign__slug", "run_id")) == [("b", "x"), ("main", "team.x")]
    with campaign_scope(main):
        assert Answer.objects.filter(run__run_id="team.x").count() == 2
    # An alias made in main (a joined run's id) lands main's files only.
    other = written(tmp_path, "other.jsonl", lines[2].replace(RUN_ID, "y") + "\n")
    out("import_run", str(other), campaign="main")
    out("join_runs", "team.x", "y", campaign="main")
    assert list(RunAlias.objects.unscoped().values_list("campaign__slug", "alias")) == [("main", "y")]
    out("import_run", str(other), campaign="b")
    assert sorted(Run.objects.unscoped().filter(campaign=b).values_list("run_id", flat=True)) == ["x", "y"]
    with campaign_scope(b):
        assert [run.run_id for run in runs_select(["x"])] == ["x"]
        assert [run.run_id for run in runs_select(None)] == ["x", "y"]
    with campaign_scope(main):
        assert [run.run_id for run in runs_select(["y"])] == ["team.x"]


# --- exports give back the files' ids -----------------------------------------------------------


def exported_qrels(slug: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in out("export_qrels", "--source", "nist", campaign=slug).splitlines():
        topic, iteration, docid, grade = line.split(" ")
        assert iteration == "Q0"
        rows.append((topic, docid, grade))
    return rows


def exported_run(slug: str) -> dict[str, dict]:
    answers = {}
    for line in out("export_run", "--run", RUN_ID, campaign=slug).splitlines():
        record = json.loads(line)
        answers[record.pop("topic_id")] = {key: record[key] for key in ("run_id", "topic", "references", "answer")}
    return answers


def test_each_campaigns_exports_give_back_the_ids_of_the_files(main, b):
    collection_import("main")
    collection_import("b")
    expected_qrels = sorted(file_qrels())
    expected_run = file_answers()
    assert len(expected_qrels) == 15 and len(expected_run) == 3
    for slug in ("main", "b"):
        qrels = exported_qrels(slug)
        assert sorted(qrels) == expected_qrels, slug
        assert [row[0] for row in qrels] == sorted(row[0] for row in qrels), slug  # by topic, as published
        assert exported_run(slug) == expected_run, slug


def test_an_export_orders_topics_as_published_whatever_the_keys_suffix(main, b, tmp_path):
    """Topic "1" comes before "10", though "10@b" sorts before "1@b"."""
    topics = written(tmp_path, "topics.tsv", "10\tten\n1\tone\n")
    qrels = written(tmp_path, "qrels.txt", "10 0 d1 1\n1 0 d2 2\n")
    for slug in ("main", "b"):
        out("import_topics", str(topics), campaign=slug)
        out("import_qrels", str(qrels), "--source", "nist", campaign=slug)
        assert exported_qrels(slug) == [("1", "d2", "2"), ("10", "d1", "1")], slug


def test_an_exported_run_and_qrels_import_into_the_other_campaign(main, b, tmp_path):
    collection_import("b")
    out("import_topics", str(TOPICS), campaign="main")
    out("import_segments", str(SEGMENTS), campaign="main")
    run_file, qrels_file = tmp_path / "run.jsonl", tmp_path / "qrels.txt"
    out("export_run", "--run", RUN_ID, "--output", str(run_file), campaign="b")
    out("export_qrels", "--source", "nist", "--output", str(qrels_file), campaign="b")
    out("import_run", str(run_file), campaign="main")
    out("import_qrels", str(qrels_file), "--source", "nist", campaign="main")
    assert rows_of(main) == rows_of(b)
    assert sorted(file_qrels(qrels_file)) == sorted(file_qrels())


def test_score_files_write_the_topics_as_published(b):
    scores = Scores(
        metrics=("V",),
        per_topic={("r1", "300@b"): {"V": 0.5}, ("r1", "301@b"): {"V": 0.25}},
        run_means={"r1": {"V": 0.375}},
        topics=["300@b", "301@b"],
        runs=["r1"],
    )
    with campaign_scope(b):
        tsv = "".join(score_table_lines(scores, ScoreFile(layout="tsv")))
        tot = "".join(score_table_lines(scores, ScoreFile(layout="tot")))
        jsonl = "".join(score_table_lines(scores, ScoreFile(layout="jsonl")))
    assert tsv == "run_id\ttopic_id\tmetric\tvalue\nr1\t300\tV\t0.5\nr1\t301\tV\t0.25\nr1\tall\tV\t0.375\n"
    assert tot == "r1\tV\t300\t0.5\nr1\tV\t301\t0.25\nr1\tV\tall\t0.375\n"
    assert [json.loads(line)["topic_id"] for line in jsonl.splitlines()] == ["300", "301", "all"]


def test_a_download_name_carries_the_campaign(main, b):
    assert campaign_file_name("qrels.nist.txt", b) == "b.qrels.nist.txt"
    with campaign_scope(main):
        assert campaign_file_name("scores.auto.tsv") == "main.scores.auto.tsv"


def test_a_launch_and_the_topic_picker_name_topics_as_the_files_do(main, b):
    collection_import("b")
    ids = file_topic_ids()
    with campaign_scope(b):
        assert [topic.id for topic in topics_select([ids[0]])] == [f"{ids[0]}@b"]
        assert [topic.id for topic in topics_select([f"{ids[1]}@b"])] == [f"{ids[1]}@b"]
        assert sorted(choice.topic_id for choice in topic_choices()) == sorted(ids)
    with campaign_scope(main), pytest.raises(Exception, match=f"unknown topic\\(s\\): {ids[0]}"):
        topics_select([ids[0]])


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command, name, text, line, options",
    [
        ("import_topics", "topics.tsv", "2024-1\tfirst\n2024-2@b\tsecond\n", 2, ()),
        ("import_qrels", "qrels.txt", "2024-1 0 d1 1\n2024-1 0 d2 0\n2024-1@main 0 d3 2\n", 3, ("--source", "nist")),
        (
            "import_run",
            "run.jsonl",
            json.dumps({"run_id": "r", "topic_id": "2024-1@b", "topic": "first", "references": [], "answer": []})
            + "\n",
            1,
            (),
        ),
    ],
)
def test_a_topic_id_holding_an_at_sign_is_refused_naming_file_line_and_field(
    main, b, tmp_path, command, name, text, line, options
):
    out("import_topics", str(written(tmp_path, "known.tsv", "2024-1\tfirst\n")), campaign="b")
    before = everything()
    path = written(tmp_path, name, text)
    with pytest.raises(CommandError) as refused:
        call_command(command, str(path), *options, campaign="b", stdout=StringIO(), stderr=StringIO())
    message = str(refused.value)
    assert message.startswith(f"{path}, line {line}, field 'topic_id': ")
    assert "may not hold '@'" in message
    assert "Nothing was imported." in message
    assert everything() == before


def test_an_unknown_topic_is_named_as_the_file_names_it(main, b, tmp_path):
    out("import_topics", str(written(tmp_path, "topics.tsv", "2024-1\tfirst\n")), campaign="main")
    path = written(tmp_path, "qrels.txt", "2024-1 0 d1 1\n")
    with pytest.raises(CommandError, match=r"line 1, field 'topic_id': unknown topic 2024-1 \(import"):
        call_command("import_qrels", str(path), "--source", "nist", campaign="b", stdout=StringIO())


def test_a_command_without_campaign_names_the_campaigns_there_are(main, b):
    for command, args in (
        ("import_topics", (str(TOPICS),)),
        ("import_qrels", (str(QRELS), "--source", "nist")),
        ("export_qrels", ("--source", "nist")),
        ("export_run", ("--run", RUN_ID)),
    ):
        with pytest.raises(CommandError, match=r"several campaigns: name one with --campaign \(main, b\)"):
            call_command(command, *args, stdout=StringIO())
    assert Topic.objects.unscoped().count() == 0


def test_a_closed_campaign_takes_no_import_and_still_exports(main, b):
    collection_import("b")
    campaign_close(b)
    before = everything()
    for command, args in (
        ("import_topics", (str(TOPICS),)),
        ("import_segments", (str(SEGMENTS),)),
        ("import_qrels", (str(QRELS), "--source", "umbrela")),
        ("import_run", (str(RUN),)),
    ):
        with pytest.raises(CommandError, match="'b' is closed"):
            call_command(command, *args, campaign="b", stdout=StringIO())
    assert everything() == before
    assert sorted(exported_qrels("b")) == sorted(file_qrels())


def test_a_join_in_the_second_campaign_names_and_chooses_topics_as_the_files_do(main, b, tmp_path):
    records = [json.loads(line) for line in RUN.read_text(encoding="utf-8").splitlines()]
    first, second, third = (record["topic_id"] for record in records)
    changed = dict(records[1], answer=[{"text": "Another answer.", "citations": []}])
    x = written(tmp_path, "x.jsonl", "".join(json.dumps(dict(r, run_id="x")) + "\n" for r in records[:2]))
    y = written(tmp_path, "y.jsonl", "".join(json.dumps(dict(r, run_id="y")) + "\n" for r in (changed, records[2])))
    out("import_topics", str(TOPICS), campaign="b")
    out("import_run", str(x), campaign="b")
    out("import_run", str(y), campaign="b")
    with pytest.raises(CommandError, match=f"both answer topic\\(s\\) {second} with different answers"):
        call_command("join_runs", "x", "y", campaign="b", stdout=StringIO())
    printed = out("join_runs", "x", "y", "--answer", f"{second}=y", campaign="b")
    assert f"  topic {third}: 1 answer\n" in printed
    assert f"  topic {second}: x's answer set aside in the join's history\n" in printed
    with campaign_scope(b):
        kept = Answer.objects.get(run__run_id="x", topic_id=f"{second}@b")
        assert kept.text == "Another answer."
        assert sorted(Answer.objects.filter(run__run_id="x").values_list("topic_id", flat=True)) == sorted(
            f"{topic}@b" for topic in (first, second, third)
        )
