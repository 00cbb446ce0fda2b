"""Weighted support precision and recall, checked against hand arithmetic and an independent reading of NIST's files."""

import io
import json
from collections import defaultdict

import pytest
from django.core.management import CommandError, call_command

from assessor.models import Citation
from assessor.scoring.kept import scores_refresh
from support.models import SupportLabel
from support.scoring import answer_support_metrics
from support.selectors import support_label_pairs, support_methods_list, support_scores
from tests.builders import make_answer, make_batch, make_run, make_segment, make_topic, read_scores_tsv, source_of

pytestmark = pytest.mark.django_db


def judge(answer, sentence_index: int, position: int, value: int, *, method: str = "scratch") -> SupportLabel:
    citation = Citation.objects.get(sentence__answer=answer, sentence__index=sentence_index, position=position)
    label = SupportLabel.objects.create(
        citation=citation,
        method=method,
        source=source_of("support", method),
        method_kind="scratch",
        label=value,
        imported_from=make_batch(),
    )
    # As the import of the label would.
    scores_refresh(family="methods", columns=(method,), topics=[answer.topic_id], answers=[answer.pk])
    return label


# --- pure functions --------------------------------------------------------


def test_precision_and_recall_of_one_answer_by_hand():
    # FS, PS, uncited, unjudged, NS
    metrics = answer_support_metrics([2, 1, None, -1, 0])
    assert metrics["weighted_precision"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert metrics["weighted_recall"] == pytest.approx((1 + 0.5 + 0) / 4)


def test_empty_denominators_give_zero():
    assert answer_support_metrics([-1, -1]) == {"weighted_precision": 0.0, "weighted_recall": 0.0}
    # Uncited sentences only: nothing judged for precision, zeros for recall.
    assert answer_support_metrics([None, None]) == {"weighted_precision": 0.0, "weighted_recall": 0.0}
    assert answer_support_metrics([]) == {"weighted_precision": 0.0, "weighted_recall": 0.0}


# --- a method in the database ----------------------------------------------


@pytest.fixture
def judged():
    t1, t2 = make_topic("2024-1"), make_topic("2024-2")
    a, b, c = make_segment("doc_a#0_0"), make_segment("doc_b#0_0"), make_segment("doc_c#0_0")
    r1, r2 = make_run("r1"), make_run("r2")
    a11 = make_answer(
        r1,
        t1,
        [
            ("Full, with a second citation that says nothing.", [a, b]),
            ("Partial.", [b]),
            ("No citation at all.", []),
            ("Unjudged.", [a]),
            ("First citation unlabelled, second one full.", [c, a]),
            ("No support.", [b]),
        ],
    )
    judge(a11, 0, 0, 2)
    judge(a11, 0, 1, 0)  # not the first citation: ignored
    judge(a11, 1, 0, 1)
    judge(a11, 3, 0, -1)
    judge(a11, 4, 1, 2)  # the first citation has no label: the sentence is out
    judge(a11, 5, 0, 0)
    judge(a11, 4, 0, 2, method="auto")  # another method's label does not count for this one
    a12 = make_answer(r1, t2, [("Cited.", [a]), ("Uncited.", [])])
    judge(a12, 0, 0, 2)
    a21 = make_answer(r2, t1, [("Cited.", [a]), ("Also cited.", [b])])
    judge(a21, 0, 0, 1)
    judge(a21, 1, 0, 2)
    make_answer(r2, t2, [("Never judged.", [a])])  # no label of the method: not evaluated
    return {"a11": a11}


def test_a_method_scores_each_answer_by_hand(judged):
    scores = support_scores(method="scratch")
    assert scores.topics == ["2024-1", "2024-2"] and scores.runs == ["r1", "r2"]
    assert set(scores.per_topic) == {("r1", "2024-1"), ("r1", "2024-2"), ("r2", "2024-1")}
    r1t1 = scores.per_topic["r1", "2024-1"]
    # Judged first citations: FS, PS, NS; plus one uncited sentence in recall; two sentences out.
    assert r1t1["weighted_precision"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert r1t1["weighted_recall"] == pytest.approx((1 + 0.5 + 0) / 4)
    r1t2 = scores.per_topic["r1", "2024-2"]
    assert r1t2["weighted_precision"] == pytest.approx(1 / 1)
    assert r1t2["weighted_recall"] == pytest.approx(1 / 2)
    assert scores.per_topic["r2", "2024-1"]["weighted_recall"] == pytest.approx((0.5 + 1) / 2)


def test_a_run_mean_counts_a_missing_topic_as_zero(judged):
    scores = support_scores(method="scratch")
    assert scores.run_means["r1"]["weighted_precision"] == pytest.approx((0.5 + 1) / 2)
    assert scores.run_means["r1"]["weighted_recall"] == pytest.approx((1.5 / 4 + 1 / 2) / 2)
    # r2's answer to 2024-2 has no label of the method: it counts 0.
    assert scores.run_means["r2"]["weighted_precision"] == pytest.approx((0.75 + 0) / 2)
    only_r2 = support_scores(method="scratch", runs=["r2"])
    assert only_r2.topics == ["2024-1", "2024-2"] and only_r2.run_means["r2"] == scores.run_means["r2"]


def test_the_other_method_is_scored_apart(judged):
    auto = support_scores(method="auto")
    assert auto.topics == ["2024-1"] and auto.runs == ["r1"]
    # Only sentence 4's first citation is labelled by auto: the others are unjudged (out), one uncited.
    assert auto.per_topic["r1", "2024-1"] == {"weighted_precision": 1.0, "weighted_recall": pytest.approx(1 / 2)}
    assert support_methods_list() == ["auto", "scratch"]


def test_label_pairs_hold_first_citations_only(judged):
    pairs = support_label_pairs(method="scratch")
    first_citations = Citation.objects.filter(sentence__answer=judged["a11"], position=0)
    assert set(pairs.values()) <= {-1, 0, 1, 2}
    assert len(pairs) == 4 + 1 + 2
    assert {pairs[c.pk] for c in first_citations if c.pk in pairs} == {2, 1, -1, 0}


def test_an_unknown_method_is_a_lookup_error(judged):
    with pytest.raises(
        LookupError, match=r"no support labels for method 'postedit'; methods with labels: auto, scratch"
    ):
        support_scores(method="postedit")
    with pytest.raises(CommandError, match="no support labels for method 'nobody'"):
        call_command("export_support_scores", "--method", "nobody", stdout=io.StringIO())


# --- NIST's real files --------------------------------------------------------

SUPPORT_FILE = "final.citation_judgments_without_prediction.20241025.jsonl"
SCORE = {"2": 1.0, "1": 0.5, "0": 0.0}


def expected_from_file(path) -> tuple[dict, dict]:
    """Per (run, topic) and per run, straight from the JSONL: only answers with a judged citation are evaluated."""
    per_topic = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if not any(c.get("support") is not None for s in record["sentences"] for c in s["citations"]):
            continue
        total = 0.0
        cited_judged = 0
        counted = 0
        for sentence in record["sentences"]:
            if not sentence["citations"]:
                counted += 1
                continue
            support = sentence["citations"][0]["support"]
            if support not in SCORE:
                continue
            total += SCORE[support]
            cited_judged += 1
            counted += 1
        per_topic[record["run_id"], record["topic_id"]] = {
            "weighted_precision": total / cited_judged if cited_judged else 0.0,
            "weighted_recall": total / counted if counted else 0.0,
        }
    topics = {topic for _, topic in per_topic}
    means = defaultdict(dict)
    for run in {run for run, _ in per_topic}:
        for metric in ("weighted_precision", "weighted_recall"):
            means[run][metric] = sum(per_topic.get((run, t), {}).get(metric, 0.0) for t in topics) / len(topics)
    return per_topic, means


@pytest.mark.shared_data
def test_export_support_scores_matches_the_protocol_on_nists_file(shared_data):
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=io.StringIO())
    call_command(
        "import_support",
        str(shared_data / SUPPORT_FILE),
        "--method",
        "scratch",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    out = io.StringIO()
    call_command("export_support_scores", "--method", "scratch", stdout=out)
    table = read_scores_tsv(out.getvalue())
    per_topic, means = expected_from_file(shared_data / SUPPORT_FILE)
    run = "coordinators.baseline_rag24.test_l31_70b_instruct_top20"
    assert table[run, "all", "weighted_precision"] == pytest.approx(means[run]["weighted_precision"], abs=1e-12)
    assert table[run, "all", "weighted_recall"] == pytest.approx(means[run]["weighted_recall"], abs=1e-12)
    for (run_id, topic), values in per_topic.items():
        for metric, value in values.items():
            assert table[run_id, topic, metric] == pytest.approx(value, abs=1e-12)
    for run_id, values in means.items():
        for metric, value in values.items():
            assert table[run_id, "all", metric] == pytest.approx(value, abs=1e-12)
    assert len(table) == 2 * (len(per_topic) + len(means))


def test_a_method_costs_a_fixed_number_of_queries(judged, django_assert_num_queries):
    with django_assert_num_queries(3):
        support_scores(method="scratch")
