"""ARGUE-style scores of hand-worked reports (argue.metrics), and the property of the seed's Table 3."""

import pytest

from argue.metrics import SentenceJudged, answers_to_check, report_metrics
from assessor.scoring.scores import run_means
from nuggets.banks import Answer, Question

# A topic's bank: q0 vital OR (answers supported by d1 / d2), q1 okay AND (d3, d4), q2 okay, no gold answer.
BANK = [
    Question("Who?", importance="vital", rule="or", answers=(Answer("Ann", ("d1",)), Answer("Bob", ("d2",)))),
    Question("When?", importance="okay", rule="and", answers=(Answer("May", ("d3",)), Answer("June", ("d4",)))),
    Question("Why?", importance="okay"),
]


def sentence(citations=(), agrees=()):
    return SentenceJudged(citations=tuple(citations), agrees=frozenset(agrees))


def test_a_hand_worked_report():
    report = [
        # cites d1 (supports) and d9 (does not): not supported; agrees with q0's second answer
        sentence([("d1", True), ("d9", False)], {(0, 1)}),
        # cites d3 (supports): supported; agrees with q1's first answer only (AND: not covered)
        sentence([("d3", True)], {(1, 0)}),
        # cites nothing
        sentence(),
    ]
    metrics = report_metrics(report, BANK)
    # covered: q0 only -> 1/3; weighted: 2 / (2 + 1 + 1) = 0.5
    assert metrics["nugget_coverage"] == pytest.approx(1 / 3)
    assert metrics["weighted_coverage"] == pytest.approx(0.5)
    # sentences that cite: 2, supported: 1
    assert metrics["sentence_support"] == pytest.approx(0.5)
    # citations: 3, supporting 2, relevant (d1, d3) 2
    assert metrics["citation_support"] == pytest.approx(2 / 3)
    assert metrics["citation_relevance"] == pytest.approx(2 / 3)
    # F1 = 2 * 0.5 * 1/3 / (0.5 + 1/3) = 0.4; weighted = 2 * 0.5 * 0.5 / 1 = 0.5
    assert metrics["f1"] == pytest.approx(0.4)
    assert metrics["weighted_f1"] == pytest.approx(0.5)
    # ARGUE's option: the uncited sentence counts in the denominator -> 1/3
    assert report_metrics(report, BANK, uncited_counts=True)["sentence_support"] == pytest.approx(1 / 3)


def test_an_and_question_needs_every_answer_from_any_sentences():
    report = [sentence([("d3", True)], {(1, 0)}), sentence([("d4", True)], {(1, 1)})]
    metrics = report_metrics(report, BANK)
    assert metrics["nugget_coverage"] == pytest.approx(1 / 3)
    assert metrics["weighted_coverage"] == pytest.approx(1 / 4)
    assert metrics["sentence_support"] == 1.0
    assert metrics["f1"] == pytest.approx(2 * (1 / 3) / (1 + 1 / 3))


def test_an_unjudged_citation_does_not_support():
    metrics = report_metrics([sentence([("d1", None)])], BANK)
    assert metrics["sentence_support"] == 0.0
    assert metrics["citation_support"] == 0.0
    assert metrics["citation_relevance"] == 1.0


def test_an_empty_report_and_an_empty_bank_score_zero():
    assert set(report_metrics([], BANK).values()) == {0.0}
    assert set(report_metrics([sentence([("d1", True)])], []).values()) - {1.0} == {0.0}
    assert report_metrics([sentence([("d1", True)])], [])["f1"] == 0.0


def test_only_the_answers_of_cited_documents_are_checked_unless_all_are():
    assert answers_to_check(["d2", "d3"], BANK) == [(0, 1), (1, 0)]
    assert answers_to_check([], BANK) == []
    assert answers_to_check([], BANK, check_all=True) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_a_runs_f1_is_the_mean_of_its_topics_f1_below_the_harmonic_mean_of_its_means():
    """The seed's Table 3: F1 0.586 for support 0.965 and coverage 0.470 (their harmonic mean is 0.632)."""
    one = [Question("Q?", rule="or", answers=(Answer("yes", ("d1",)),))]
    # t1: supported and covered (F1 1); t2: supported, not covered (F1 0); t3: no report (0 throughout).
    t1 = report_metrics([sentence([("d1", True)], {(0, 0)})], one)
    t2 = report_metrics([sentence([("d1", True)])], one)
    per_topic = {("r", "t1"): t1, ("r", "t2"): t2}
    means = run_means(per_topic, runs=["r"], topics=["t1", "t2", "t3"], metrics=list(t1))["r"]
    assert means["f1"] == pytest.approx(1 / 3)
    assert means["sentence_support"] == pytest.approx(2 / 3)
    assert means["nugget_coverage"] == pytest.approx(1 / 3)
    # the harmonic mean of the means, 2 * (2/3)(1/3) / 1 = 4/9, is above the mean of the topics' F1
    assert means["f1"] < 2 * means["sentence_support"] * means["nugget_coverage"] / (
        means["sentence_support"] + means["nugget_coverage"]
    )
