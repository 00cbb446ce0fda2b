"""Agreement of two qrels sources: hand-worked figures, the command and the page section."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.work.roles import Role
from metaeval.qrels_agreement import qrels_agreement_compute
from tests.builders import make_qrel, make_segment, make_topic, make_user
from tests.metaeval.reference import coincidence_alpha_ordinal

# t1: a grades s1..s4 3, 2, 0, 1 and b 2, 0, 0, 1; t2: a grades s5, s6 0, 2 and b 1, 2; s7 only in a.
A = {("t1", "s1"): 3, ("t1", "s2"): 2, ("t1", "s3"): 0, ("t1", "s4"): 1, ("t2", "s5"): 0, ("t2", "s6"): 2, ("t1", "s7"): 1}
B = {("t1", "s1"): 2, ("t1", "s2"): 0, ("t1", "s3"): 0, ("t1", "s4"): 1, ("t2", "s5"): 1, ("t2", "s6"): 2}


def test_figures_of_a_hand_worked_pair_of_qrels():
    result = qrels_agreement_compute(A, B, threshold=1)
    t1, t2 = result.topics
    # t1: relevant in a {s1, s2, s4}, in b {s1, s4}: P = 2/2, R = 2/3, F1 = 0.8, Jaccard 2/3.
    assert (t1.shared, t1.relevant_a, t1.relevant_b, t1.relevant_both) == (4, 3, 2, 2)
    assert (t1.precision, t1.recall, t1.f1, t1.jaccard) == pytest.approx((1, 2 / 3, 0.8, 2 / 3))
    # Cohen's kappa over grades 0-3: p_o = 2/4; p_e = (1*2 + 1*1 + 1*1 + 1*0) / 16 = 1/4: (1/2 - 1/4) / (3/4).
    assert t1.kappa == pytest.approx(1 / 3)
    # t2: relevant in a {s6}, in b {s5, s6}: P = 1/2, R = 1, F1 = 2/3, Jaccard 1/2.
    assert (t2.precision, t2.recall, t2.f1, t2.jaccard) == pytest.approx((0.5, 1, 2 / 3, 0.5))
    assert result.mean["precision"] == pytest.approx(0.75)
    assert result.mean["f1"] == pytest.approx((0.8 + 2 / 3) / 2)
    assert result.mean["jaccard"] == pytest.approx(7 / 12)
    # Pooled: relevant in a {s1, s2, s4, s6}, in b {s1, s4, s5, s6}, both 3.
    assert (result.pooled.precision, result.pooled.recall) == pytest.approx((0.75, 0.75))
    assert (result.only_in_a, result.only_in_b) == (1, 0)
    # Alpha over the grades, against the coincidence-matrix formula.
    table = [[0] * 4 for _ in range(4)]
    for key, grade in B.items():
        table[A[key]][grade] += 1
    assert result.pooled.alpha_ordinal == pytest.approx(coincidence_alpha_ordinal(table))


def test_a_higher_threshold_changes_the_relevant_sets():
    result = qrels_agreement_compute(A, B, threshold=2)
    t1 = result.topics[0]
    # Relevant in a {s1, s2}, in b {s1}.
    assert (t1.relevant_a, t1.relevant_b, t1.relevant_both) == (2, 1, 1)
    assert (t1.precision, t1.recall) == pytest.approx((1, 0.5))


@pytest.fixture
def two_qrels(db):
    topics = {topic_id: make_topic(topic_id) for topic_id in ("t1", "t2")}
    segments = {docid: make_segment(docid) for _, docid in A}
    for source, grades in (("nist", A), ("umbrela", B)):
        for (topic_id, docid), grade in grades.items():
            make_qrel(topics[topic_id], segments[docid], grade=grade, source=source)


def test_the_command_prints_json(two_qrels):
    out = StringIO()
    call_command("qrels_agreement", "--a", "nist", "--b", "umbrela", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert [row["topic"] for row in data["topics"]] == ["t1", "t2"]
    assert data["topics"][0]["f1"] == pytest.approx(0.8)
    assert data["mean"]["precision"] == pytest.approx(0.75)
    assert set(data["mean"]) == {"precision", "recall", "f1", "jaccard", "kappa", "alpha_ordinal", "alpha_nominal"}
    assert data["only_in_a"] == 1
    text = StringIO()
    call_command("qrels_agreement", "--a", "nist", "--b", "umbrela", "--threshold", "2", stdout=text)
    assert "grade >= 2" in text.getvalue() and "mean" in text.getvalue()
    with pytest.raises(CommandError, match="no qrels source named 'nope'"):
        call_command("qrels_agreement", "--a", "nope", "--b", "umbrela")


def test_the_page_section(two_qrels, client):
    client.force_login(make_user(Role.ORGANIZER))
    page = client.get(reverse("metaeval:index"), {"qrels_a": "nist", "qrels_b": "umbrela"}).content.decode()
    assert "Qrels agreement" in page and "mean over topics" in page and "0.800" in page
    bad = client.get(reverse("metaeval:index"), {"qrels_a": "nist", "qrels_b": "nope"}).content.decode()
    assert "no qrels source named" in bad
