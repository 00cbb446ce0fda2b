"""The export commands: what they write, where, and what they say about unknown names."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from assessor.models import Answer, Citation
from assessor.scoring.kept import scores_refresh
from assignment.models import AssignmentLabel
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_batch,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    nuggets_of,
    source_of,
)

pytestmark = pytest.mark.django_db


def export(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def collection():
    batch = make_batch()
    t1, t2 = make_topic("2024-1", "first query"), make_topic("2024-2", "second query")
    a, b = make_segment("doc_a#0_0"), make_segment("doc_b#1_5")
    make_qrel(t1, b, 0)
    make_qrel(t1, a, 2)
    make_qrel(t2, a, 1)
    make_qrel(t2, b, 3, source="umbrela")
    n1 = nuggets_of(make_nugget_set(t1, importances=["vital", "okay"], batch=batch))
    n2 = nuggets_of(make_nugget_set(t2, importances=["okay"], batch=batch))
    make_nugget_set(t1, importances=["", ""], name="draft", batch=batch)
    r1, r2 = make_run("r1"), make_run("team.r2")
    a11 = make_answer(r1, t1, [("Sentence one.", [a, b]), ("Sentence two.", []), ("Sentence three.", [b])])
    a21 = make_answer(r2, t1, [("Only one.", [b])])
    a12 = make_answer(r1, t2, [("About topic two here.", [a])])
    for answer, nugget, label in [
        (a11, n1[0], "support"),
        (a11, n1[1], "partial_support"),
        (a21, n1[1], "support"),  # n1[0] unlabelled on this answer
        (a12, n2[0], "not_support"),
    ]:
        AssignmentLabel.objects.create(
            answer=answer,
            nugget=nugget,
            assigner="manual",
            source=source_of("assignment", "manual"),
            assigner_kind="manual",
            label=label,
            imported_from=batch,
        )

    def judge(answer, index, position, value):
        citation = Citation.objects.get(sentence__answer=answer, sentence__index=index, position=position)
        SupportLabel.objects.create(
            citation=citation,
            method="scratch",
            source=source_of("support", "scratch"),
            method_kind="scratch",
            label=value,
            imported_from=batch,
        )

    judge(a11, 0, 0, 2)
    judge(a11, 2, 0, -1)
    judge(a21, 0, 0, 1)
    scores_refresh(discover=True)  # as the import of these rows would
    return {"nuggets": n1}


def test_export_qrels_writes_trec_qrels_of_one_source(collection):
    assert export("export_qrels", "--source", "nist") == (
        "2024-1 Q0 doc_a#0_0 2\n2024-1 Q0 doc_b#1_5 0\n2024-2 Q0 doc_a#0_0 1\n"
    )
    assert export("export_qrels", "--source", "umbrela") == "2024-2 Q0 doc_b#1_5 3\n"


def test_export_nuggets_writes_one_topic_a_line(collection):
    lines = [json.loads(line) for line in export("export_nuggets", "--nuggets", "auto_edit").splitlines()]
    assert lines == [
        {
            "qid": "2024-1",
            "query": "first query",
            "nuggets": [{"text": "nugget 0", "importance": "vital"}, {"text": "nugget 1", "importance": "okay"}],
        },
        {"qid": "2024-2", "query": "second query", "nuggets": [{"text": "nugget 0", "importance": "okay"}]},
    ]


def test_drafts_are_written_without_importance(collection):
    lines = [json.loads(line) for line in export("export_nuggets", "--nuggets", "draft").splitlines()]
    assert lines == [{"qid": "2024-1", "query": "first query", "nuggets": [{"text": "nugget 0"}, {"text": "nugget 1"}]}]


def test_export_nuggets_needs_a_name_when_there_are_several(collection):
    with pytest.raises(CommandError, match=r"--nuggets NAME; nugget sets: auto_edit, draft"):
        export("export_nuggets")


def test_export_assignments_writes_nists_format(collection):
    lines = [
        json.loads(line)
        for line in export("export_assignments", "--nuggets", "auto_edit", "--assigner", "manual").splitlines()
    ]
    assert [list(line) for line in lines[:1]] == [
        ["query", "qid", "run_id", "answer_text", "response_length", "nuggets"]
    ]
    assert lines == [
        {
            "query": "first query",
            "qid": "2024-1",
            "run_id": "r1",
            "answer_text": "Sentence one. Sentence two. Sentence three.",
            "response_length": 6,
            "nuggets": [
                {"text": "nugget 0", "importance": "vital", "assignment": "support"},
                {"text": "nugget 1", "importance": "okay", "assignment": "partial_support"},
            ],
        },
        {
            "query": "first query",
            "qid": "2024-1",
            "run_id": "team.r2",
            "answer_text": "Only one.",
            "response_length": 2,
            "nuggets": [
                # No label on this answer: written not_support, which scores the same (0).
                {"text": "nugget 0", "importance": "vital", "assignment": "not_support"},
                {"text": "nugget 1", "importance": "okay", "assignment": "support"},
            ],
        },
        {
            "query": "second query",
            "qid": "2024-2",
            "run_id": "r1",
            "answer_text": "About topic two here.",
            "response_length": 4,
            "nuggets": [{"text": "nugget 0", "importance": "okay", "assignment": "not_support"}],
        },
    ]


def test_export_support_writes_every_sentence_and_citation(collection):
    lines = [json.loads(line) for line in export("export_support", "--method", "scratch").splitlines()]
    assert lines == [
        {
            "topic_id": "2024-1",
            "run_id": "r1",
            "sentences": [
                {
                    "sentenceID": 0,
                    "text": "Sentence one.",
                    "citations": [
                        {"citationID": 0, "reference": "doc_a#0_0", "support": "2"},
                        # Not labelled by the method: no support value.
                        {"citationID": 1, "reference": "doc_b#1_5"},
                    ],
                },
                {"sentenceID": 1, "text": "Sentence two.", "citations": []},
                {
                    "sentenceID": 2,
                    "text": "Sentence three.",
                    "citations": [{"citationID": 0, "reference": "doc_b#1_5", "support": "-1"}],
                },
            ],
        },
        {
            "topic_id": "2024-1",
            "run_id": "team.r2",
            "sentences": [
                {
                    "sentenceID": 0,
                    "text": "Only one.",
                    "citations": [{"citationID": 0, "reference": "doc_b#1_5", "support": "1"}],
                }
            ],
        },
    ]


def test_export_scores_writes_answers_then_the_run_mean(collection):
    text = export("export_scores", "--nuggets", "auto_edit", "--assigner", "manual")
    rows = [line.split("\t") for line in text.splitlines()]
    assert rows[0] == ["run_id", "topic_id", "metric", "value"]
    assert [(run, topic) for run, topic, _, _ in rows[1:]] == (
        [("r1", "2024-1")] * 7
        + [("r1", "2024-2")] * 7
        + [("r1", "all")] * 7
        + [("team.r2", "2024-1")] * 7
        + [("team.r2", "all")] * 7
    )
    assert [metric for _, _, metric, _ in rows[1:8]] == ["A", "Astrict", "V", "Vstrict", "W", "Wstrict", "L"]
    table = {(run, topic, metric): value for run, topic, metric, value in rows[1:]}
    # r1 on 2024-1: W = (1 + 0.5 * 0.5) / (1 + 0.5 * 1); the text reads back as exactly that float.
    assert float(table["r1", "2024-1", "W"]) == (1 + 0.5 * 0.5) / (1 + 0.5 * 1)
    assert table["r1", "2024-1", "W"] == repr((1 + 0.5 * 0.5) / (1 + 0.5 * 1))
    # team.r2 did not answer 2024-2: its mean V is (0 + 0) / 2, its mean A (0.5 + 0) / 2.
    assert float(table["team.r2", "all", "A"]) == (0.5 + 0) / 2
    assert float(table["r1", "all", "L"]) == (6 + 4) / 2


def test_export_support_scores_writes_precision_and_recall(collection):
    rows = [line.split("\t") for line in export("export_support_scores", "--method", "scratch").splitlines()]
    assert rows[0] == ["run_id", "topic_id", "metric", "value"]
    table = {(run, topic, metric): float(value) for run, topic, metric, value in rows[1:]}
    # r1: FS on sentence 0, sentence 1 uncited, sentence 2 unjudged: precision 1 / 1, recall 1 / 2.
    assert table == {
        ("r1", "2024-1", "weighted_precision"): 1.0,
        ("r1", "2024-1", "weighted_recall"): 0.5,
        ("r1", "all", "weighted_precision"): 1.0,
        ("r1", "all", "weighted_recall"): 0.5,
        ("team.r2", "2024-1", "weighted_precision"): 0.5,
        ("team.r2", "2024-1", "weighted_recall"): 0.5,
        ("team.r2", "all", "weighted_precision"): 0.5,
        ("team.r2", "all", "weighted_recall"): 0.5,
    }


def test_output_goes_to_a_file_when_asked(collection, tmp_path):
    target = tmp_path / "qrels.txt"
    assert export("export_qrels", "--source", "nist", "--output", str(target)) == ""
    assert target.read_text(encoding="utf-8") == export("export_qrels", "--source", "nist")
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize(
    "args, message",
    [
        (("export_qrels", "--source", "trec"), r"no qrels source named 'trec'; sources: nist, umbrela"),
        (("export_nuggets", "--nuggets", "manual"), r"no nugget sets named 'manual'; nugget sets: auto_edit, draft"),
        (("export_assignments", "--nuggets", "auto_edit", "--assigner", "auto"), r"no assignment labels .* 'auto'"),
        (
            ("export_scores", "--nuggets", "manual", "--assigner", "manual"),
            r"conditions with labels: nugget set 'auto_edit' by assigner 'manual'",
        ),
        (("export_support", "--method", "auto"), r"no support labels for method 'auto'; methods with labels: scratch"),
        (("export_support_scores", "--method", "auto"), r"no support labels for method 'auto'"),
    ],
)
def test_an_unknown_name_is_a_clear_command_error(collection, args, message):
    with pytest.raises(CommandError, match=message):
        export(*args)


def test_export_run_writes_the_trec_rag_run_format(collection):
    lines = [json.loads(line) for line in export("export_run", "--run", "r1").splitlines()]
    assert lines == [
        {
            "run_id": "r1",
            "topic_id": "2024-1",
            "topic": "first query",
            "references": ["doc_a#0_0", "doc_b#1_5"],
            "response_length": 6,
            "answer": [
                {"text": "Sentence one.", "citations": [0, 1]},
                {"text": "Sentence two.", "citations": []},
                {"text": "Sentence three.", "citations": [1]},
            ],
        },
        {
            "run_id": "r1",
            "topic_id": "2024-2",
            "topic": "second query",
            "references": ["doc_a#0_0"],
            "response_length": 4,
            "answer": [{"text": "About topic two here.", "citations": [0]}],
        },
    ]


def test_a_citation_without_reference_rank_adds_its_segment_to_the_references(collection):
    Citation.objects.filter(sentence__answer__run__run_id="team.r2").update(reference_rank=None)
    Answer.objects.get(run__run_id="team.r2").references.all().delete()
    [line] = export("export_run", "--run", "team.r2").splitlines()
    record = json.loads(line)
    assert record["references"] == ["doc_b#1_5"]
    assert record["answer"] == [{"text": "Only one.", "citations": [0]}]


def test_an_unknown_run_is_a_clear_command_error(collection):
    with pytest.raises(CommandError, match=r"no run named 'r3'; runs: r1, team.r2"):
        export("export_run", "--run", "r3")
