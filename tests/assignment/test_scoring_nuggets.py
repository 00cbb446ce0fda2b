"""The nugget metrics, checked against hand arithmetic and against an independent reading of NIST's file."""

import io
import json
from collections import defaultdict

import pytest
from django.core.management import CommandError, call_command

from assessor.scoring.scores import NUGGET_METRICS, runs_ranked
from assignment.models import AssignmentLabel
from assignment.scoring import answer_metrics
from assignment.selectors import assignment_label_pairs, conditions_list, nugget_scores, nugget_scores_from_labels
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_run,
    make_topic,
    nuggets_of,
    read_scores_tsv,
)

pytestmark = pytest.mark.django_db


def label(answer, nugget, value: str, *, assigner: str = "manual") -> AssignmentLabel:
    return make_assignment_label(answer, nugget, value, assigner=assigner)


def answer_of(run, topic, words: int):
    answer = make_answer(run, topic, [(" ".join(["word"] * words), [])])
    assert answer.words == words
    return answer


# --- pure functions --------------------------------------------------------


def test_the_seven_metrics_of_one_answer_by_hand():
    nuggets = [("vital", "support"), ("vital", "partial_support"), ("okay", "partial_support"), ("okay", "not_support")]
    metrics = answer_metrics(nuggets=nuggets, words=120)
    assert metrics["A"] == pytest.approx((1 + 0.5 + 0.5 + 0) / 4)
    assert metrics["Astrict"] == pytest.approx(1 / 4)
    assert metrics["V"] == pytest.approx((1 + 0.5) / 2)
    assert metrics["Vstrict"] == pytest.approx(1 / 2)
    assert metrics["W"] == pytest.approx((1 + 0.5 + 0.5 * (0.5 + 0)) / (2 + 0.5 * 2))
    assert metrics["Wstrict"] == pytest.approx((1 + 0 + 0.5 * (0 + 0)) / (2 + 0.5 * 2))
    assert metrics["L"] == 120


def test_an_unlabelled_nugget_counts_zero_but_stays_in_the_denominators():
    metrics = answer_metrics(nuggets=[("vital", "support"), ("vital", None), ("okay", "support")], words=5)
    assert metrics["V"] == pytest.approx(1 / 2)
    assert metrics["A"] == pytest.approx(2 / 3)
    assert metrics["W"] == pytest.approx((1 + 0.5 * 1) / (2 + 0.5 * 1))


def test_empty_denominators_give_zero():
    only_okay = answer_metrics(nuggets=[("okay", "support"), ("okay", "partial_support")], words=3)
    assert only_okay["V"] == 0 and only_okay["Vstrict"] == 0
    # W still has the okay nuggets: (0 + 0.5 * 1.5) / (0 + 0.5 * 2)
    assert only_okay["W"] == pytest.approx(0.75)
    no_nuggets = answer_metrics(nuggets=[], words=0)
    assert all(no_nuggets[metric] == 0 for metric in NUGGET_METRICS)


# --- a condition in the database -------------------------------------------


@pytest.fixture
def condition():
    """Two evaluated topics, three runs; r2 did not answer t2; r3 has an answer but no label."""
    t1, t2, t3 = make_topic("2024-1"), make_topic("2024-2"), make_topic("2024-3")
    n1 = nuggets_of(make_nugget_set(t1, importances=["vital", "vital", "okay", "okay"]))
    n2 = nuggets_of(make_nugget_set(t2, importances=["vital", "okay", "okay"]))
    nuggets_of(make_nugget_set(t3, importances=["vital"]))  # a nugget set nobody labelled: not an evaluated topic
    r1, r2, r3 = make_run("r1"), make_run("r2"), make_run("r3")
    a11, a12 = answer_of(r1, t1, 100), answer_of(r1, t2, 50)
    a21 = answer_of(r2, t1, 30)
    answer_of(r3, t1, 10)
    answer_of(r1, t3, 10)
    for nugget, value in zip(n1, ["support", "partial_support", "partial_support", "not_support"], strict=False):
        label(a11, nugget, value)
    label(a12, n2[0], "not_support")
    label(a12, n2[1], "support")  # n2[2] unlabelled on this answer
    for nugget in n1:
        label(a21, nugget, "support")
    # Another assigner's labels are another condition.
    label(a21, n1[0], "not_support", assigner="auto")
    label(a11, n1[1], "support", assigner="auto")
    return {"t1": t1, "t2": t2, "n1": n1, "a11": a11}


def test_a_condition_scores_each_answer_by_hand(condition):
    scores = nugget_scores(nuggets="auto_edit", assigner="manual")
    assert scores.topics == ["2024-1", "2024-2"]
    assert scores.runs == ["r1", "r2"]
    assert set(scores.per_topic) == {("r1", "2024-1"), ("r1", "2024-2"), ("r2", "2024-1")}
    r1t1 = scores.per_topic["r1", "2024-1"]
    assert r1t1["V"] == pytest.approx((1 + 0.5) / 2)
    assert r1t1["W"] == pytest.approx((1.5 + 0.5 * 0.5) / (2 + 0.5 * 2))
    assert r1t1["L"] == 100
    r1t2 = scores.per_topic["r1", "2024-2"]
    assert r1t2["A"] == pytest.approx((0 + 1 + 0) / 3)  # the unlabelled nugget counts 0
    assert r1t2["V"] == 0
    assert r1t2["W"] == pytest.approx((0 + 0.5 * 1) / (1 + 0.5 * 2))
    assert scores.per_topic["r2", "2024-1"]["A"] == 1


def test_a_run_mean_counts_a_missing_topic_as_zero(condition):
    scores = nugget_scores(nuggets="auto_edit", assigner="manual")
    # r1: V = 0.75 on 2024-1 and 0 on 2024-2; r2 answered 2024-1 only (V = 1), its 2024-2 counts 0.
    assert scores.run_means["r1"]["V"] == pytest.approx((0.75 + 0) / 2)
    assert scores.run_means["r2"]["V"] == pytest.approx((1 + 0) / 2)
    assert scores.run_means["r2"]["L"] == pytest.approx((30 + 0) / 2)
    assert scores.run_means["r1"]["Wstrict"] == pytest.approx(((1 + 0) / 3 + (0 + 0.5 * 1) / 2) / 2)


def test_asking_for_some_runs_keeps_the_condition_topics(condition):
    only_r2 = nugget_scores(nuggets="auto_edit", assigner="manual", runs=["r2"])
    assert only_r2.runs == ["r2"]
    assert only_r2.topics == ["2024-1", "2024-2"]
    assert only_r2.run_means["r2"] == nugget_scores(nuggets="auto_edit", assigner="manual").run_means["r2"]


def test_asking_for_some_topics_restricts_the_mean(condition):
    scores = nugget_scores(nuggets="auto_edit", assigner="manual", topics=["2024-1"])
    assert scores.topics == ["2024-1"]
    assert scores.run_means["r1"]["V"] == pytest.approx(0.75)


def test_another_assigner_is_another_condition(condition):
    auto = nugget_scores(nuggets="auto_edit", assigner="auto")
    assert auto.runs == ["r1", "r2"] and auto.topics == ["2024-1"]
    # r2 answer on 2024-1: one vital not_support, the other three nuggets unlabelled.
    assert auto.per_topic["r2", "2024-1"]["A"] == 0
    # r1: the second vital nugget supported, out of two vital ones.
    assert auto.per_topic["r1", "2024-1"]["V"] == pytest.approx(1 / 2)
    assert conditions_list() == [("auto_edit", "auto"), ("auto_edit", "manual")]


def test_label_pairs_name_answer_and_nugget(condition):
    pairs = assignment_label_pairs(nuggets="auto_edit", assigner="manual")
    assert len(pairs) == 4 + 2 + 4
    assert pairs[condition["a11"].pk, condition["n1"][1].pk] == "partial_support"


def test_an_unknown_condition_is_a_lookup_error_naming_the_known_ones(condition):
    with pytest.raises(
        LookupError,
        match=r"no assignment labels for nugget set 'manual' by assigner 'manual'.*"
        r"nugget set 'auto_edit' by assigner 'auto'",
    ):
        nugget_scores(nuggets="manual", assigner="manual")
    with pytest.raises(CommandError, match="no assignment labels"):
        call_command("export_scores", "--nuggets", "auto_edit", "--assigner", "nobody", stdout=io.StringIO())


def test_runs_ranked_best_first_with_shared_ranks(condition):
    scores = nugget_scores(nuggets="auto_edit", assigner="manual")
    rows = runs_ranked(scores, metric="V")
    assert [(row.rank, row.run_id, row.answered) for row in rows] == [(1, "r2", 1), (2, "r1", 2)]
    scores.run_means["r1"]["V"] = scores.run_means["r2"]["V"]
    assert [(row.rank, row.run_id) for row in runs_ranked(scores, metric="V")] == [(1, "r1"), (1, "r2")]
    with pytest.raises(LookupError):
        runs_ranked(scores, metric="nDCG")


# --- NIST's real file ---------------------------------------------------------

NUGGET_FILE = "nugget_assignment.20241108.jl"
S = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
SS = {"support": 1.0, "partial_support": 0.0, "not_support": 0.0}


def expected_from_file(path) -> tuple[dict, dict]:
    """Per (run, topic) and per run, computed straight from the JSONL with the protocol's formulas."""
    per_topic: dict[tuple[str, str], dict[str, float]] = {}
    topics = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        nuggets = record["nuggets"]
        vital = [n for n in nuggets if n["importance"] == "vital"]
        okay = [n for n in nuggets if n["importance"] == "okay"]

        def share(selected, table):
            return sum(table[n["assignment"]] for n in selected)

        def ratio(a, b):
            return a / b if b else 0.0

        per_topic[record["run_id"], record["qid"]] = {
            "A": ratio(share(nuggets, S), len(nuggets)),
            "Astrict": ratio(share(nuggets, SS), len(nuggets)),
            "V": ratio(share(vital, S), len(vital)),
            "Vstrict": ratio(share(vital, SS), len(vital)),
            "W": ratio(share(vital, S) + 0.5 * share(okay, S), len(vital) + 0.5 * len(okay)),
            "Wstrict": ratio(share(vital, SS) + 0.5 * share(okay, SS), len(vital) + 0.5 * len(okay)),
            "L": float(len(record["answer_text"].split())),
        }
        topics.add(record["qid"])
    means: dict[str, dict[str, float]] = defaultdict(dict)
    for run in {run for run, _ in per_topic}:
        for metric in NUGGET_METRICS:
            means[run][metric] = sum(per_topic.get((run, t), {}).get(metric, 0.0) for t in topics) / len(topics)
    return per_topic, means


@pytest.mark.shared_data
def test_export_scores_matches_the_protocol_on_nists_file(shared_data):
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=io.StringIO())
    call_command(
        "import_assignments",
        str(shared_data / NUGGET_FILE),
        "--nuggets",
        "auto_edit",
        "--assigner",
        "manual",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    out = io.StringIO()
    call_command("export_scores", "--nuggets", "auto_edit", "--assigner", "manual", stdout=out)
    table = read_scores_tsv(out.getvalue())
    per_topic, means = expected_from_file(shared_data / NUGGET_FILE)
    # The run the protocol page names, with its missing topics counted as 0.
    run = "baseline_rag24.test_l31_70b_instruct_top20"
    for metric in NUGGET_METRICS:
        assert table[run, "all", metric] == pytest.approx(means[run][metric], abs=1e-12)
    for (run_id, topic), values in per_topic.items():
        for metric, value in values.items():
            assert table[run_id, topic, metric] == pytest.approx(value, abs=1e-12)
    for run_id, values in means.items():
        for metric, value in values.items():
            assert table[run_id, "all", metric] == pytest.approx(value, abs=1e-12)
    assert len(table) == (len(per_topic) + len(means)) * len(NUGGET_METRICS)
    # 927 answers over 21 topics x 45 runs: some runs miss topics, which the means count as 0.
    assert len(per_topic) == 927 and len(means) == 45


def test_a_condition_costs_a_fixed_number_of_queries(condition, django_assert_num_queries):
    with django_assert_num_queries(3):
        nugget_scores_from_labels(nuggets="auto_edit", assigner="manual")
    with django_assert_num_queries(4):
        nugget_scores_from_labels(nuggets="auto_edit", assigner="manual", runs=["r1", "r2"])
    # Kept: the source, its runs' sums, its answers' rows.
    with django_assert_num_queries(3):
        nugget_scores(nuggets="auto_edit", assigner="manual", runs=["r1", "r2"])
    with django_assert_num_queries(2):
        nugget_scores(nuggets="auto_edit", assigner="manual", per_topic=False)
