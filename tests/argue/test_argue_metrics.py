"""ARGUE-style scores of hand-worked reports (argue.metrics): each branch of ARGUE's flow, the bank as scored,
the run's macro and micro figures, and the property of the seed's Table 3. Every figure is worked by hand in
the comments beside it, as fractions."""

import pytest

from argue.metrics import (
    COUNTS,
    PARTS,
    RATIOS,
    SentenceJudged,
    answers_to_check,
    bank_as_scored,
    report_counts,
    report_metrics,
    run_figures,
)
from nuggets.banks import Answer, Question

# q0 vital OR: Ann (d1) / Bob (d2); q1 okay AND: May (d3) / June (d4) / Spring (no document: dropped);
# q2 okay without gold answers (dropped); q3 okay OR whose one answer, Paris, has no document (dropped, so the
# question too). As scored: q0 and q1, K = 2, weights 2 + 1 = 3.
BANK = [
    Question("Who?", importance="vital", rule="or", answers=(Answer("Ann", ("d1",)), Answer("Bob", ("d2",)))),
    Question(
        "When?",
        importance="okay",
        rule="and",
        answers=(Answer("May", ("d3",)), Answer("June", ("d4",)), Answer("Spring")),
    ),
    Question("Why?", importance="okay"),
    Question("Where?", importance="okay", rule="or", answers=(Answer("Paris"),)),
]
SCORED = bank_as_scored(BANK)
# A no-reference bank (as in RAGTIME): no answer has a document.
NO_REFERENCE = [
    Question("Who?", importance="vital", rule="or", answers=(Answer("Ann"), Answer("Bob"))),
    Question("Why?", importance="okay"),
]


def sentence(citations=(), agrees=(), text="", **uncited):
    return SentenceJudged(citations=tuple(citations), agrees=frozenset(agrees), text=text, **uncited)


def test_the_bank_as_scored_drops_answers_without_documents_then_questions_without_answers():
    assert [(kept.index, kept.answers) for kept in SCORED.questions] == [(0, (0, 1)), (1, (0, 1))]
    assert (SCORED.dropped_answers, SCORED.dropped_questions, SCORED.ungated) == (2, 2, False)
    no_reference = bank_as_scored(NO_REFERENCE)
    # Kept whole but for the question without answers, and ungated.
    assert [(kept.index, kept.answers) for kept in no_reference.questions] == [(0, (0, 1))]
    assert (no_reference.ungated, no_reference.dropped_questions) == (True, 1)
    # No question left (no question has a gold answer): the topic is not scored.
    assert bank_as_scored([Question("Why?"), Question("How?")]).scored is False


def test_the_gold_answers_a_sentence_is_judged_against():
    # Gated: only the kept answers of the documents it cites (Spring, without documents, never).
    assert answers_to_check(["d2", "d3"], SCORED) == [(0, 1), (1, 0)]
    assert answers_to_check([], SCORED) == []
    assert answers_to_check([], SCORED, check_all=True) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    # A no-reference bank: every kept answer, whatever is cited.
    assert answers_to_check(["d9"], bank_as_scored(NO_REFERENCE)) == [(0, 0), (0, 1)]


# Every branch but the negative assertion (off by default), one sentence each.
REPORT = [
    # s0 cites d1 (supports) and d9 (does not): penalized; the Bob it states earns nothing
    sentence([("d1", True), ("d9", False)], {(0, 1)}, "s0."),
    # s1 cites d3 (supports): judged against May only (the answer of d3); states May and Ann: rewarded for May
    sentence([("d3", True)], {(1, 0), (0, 0)}, "s1."),
    # s2 cites d4 (supports), states June: rewarded; with May, q1 (AND) is covered
    sentence([("d4", True)], {(1, 1)}, "s2."),
    # s3 cites d2 (supports), states nothing: ignored
    sentence([("d2", True)], (), "s3."),
    # s4 cites nothing, needs a citation, first instance: penalized, counted in sentence support
    sentence(text="s4.", needs_citation=True, first_instance=True),
    # s5 the same, a repeat: ignored
    sentence(text="s5.", needs_citation=True, first_instance=False),
    # s6 cites nothing and needs no citation: ignored
    sentence(text="s6.", needs_citation=False),
    # s7 a negative assertion, but the option is off and it was asked nothing else: ignored
    sentence(text="s7.", negative=True),
]


def test_a_hand_worked_report_through_every_branch():
    metrics = report_metrics(REPORT, SCORED)
    # Covered: q1 only (May by s1, June by s2); q0's Bob came from the penalized s0, Ann from s1 is not gated in.
    assert metrics["nugget_coverage"] == pytest.approx(1 / 2)
    assert metrics["weighted_coverage"] == pytest.approx(1 / 3)
    # Supported citing sentences s1, s2, s3 = 3, over 4 citing sentences + s4 = 5
    assert metrics["sentence_support"] == pytest.approx(3 / 5)
    # Citations d1, d9, d3, d4, d2: supporting 4 of 5; relevant (d1-d4 support kept answers; d9 not) 4 of 5
    assert metrics["citation_support"] == pytest.approx(4 / 5)
    assert metrics["citation_relevance"] == pytest.approx(4 / 5)
    # F1 = 2 (3/5)(1/2) / (3/5 + 1/2) = (3/5) / (11/10) = 6/11; weighted 2 (3/5)(1/3) / (3/5 + 1/3) = (2/5)/(14/15)
    assert metrics["f1"] == pytest.approx(6 / 11)
    assert metrics["weighted_f1"] == pytest.approx(3 / 7)
    # 8 sentences of 3 characters joined by 7 spaces; rewarded s1, s2; penalized s0, s4
    counts = {name: metrics[name] for name in COUNTS}
    assert counts == {
        "sentences": 8,
        "characters": 8 * 3 + 7,
        "citations": 5,
        "questions": 2,
        "covered": 1,
        "rewarded": 2,
        "penalized": 2,
    }
    # The other numerators and denominators: weights 2 + 1, covered q1's 1; supported 3 of 5 counted in sentence
    # support; citations supporting 4, relevant 4
    assert {name: metrics[name] for name in PARTS} == {
        "weights": 3,
        "covered_weights": 1,
        "supported_sentences": 3,
        "support_sentences": 5,
        "supporting_citations": 4,
        "relevant_citations": 4,
    }


def test_check_all_judges_a_supported_sentence_against_every_answer():
    metrics = report_metrics(REPORT, SCORED, check_all=True)
    # s1's Ann now counts: q0 and q1 covered, 2/2; weighted 3/3; F1 = 2 (3/5)(1) / (3/5 + 1) = 3/4
    assert (metrics["nugget_coverage"], metrics["weighted_coverage"]) == (1.0, 1.0)
    assert metrics["f1"] == pytest.approx(3 / 4)
    # ... but never s0's Bob: a document does not support it
    assert report_metrics(REPORT[:1], SCORED, check_all=True)["covered"] == 0


def test_the_first_sentence_needing_a_citation_is_a_first_instance_and_an_unjudged_check_is_no():
    # Nothing before it: a first instance without asking; support 0 / 1.
    first = report_counts([sentence(needs_citation=True)], SCORED)
    assert (first.penalized, first.support_sentences, first.supported_sentences) == (1, 1, 0)
    # After another sentence, "first instance?" not judged counts as no: ignored.
    later = report_counts([sentence([("d1", True)]), sentence(needs_citation=True)], SCORED)
    assert (later.penalized, later.support_sentences, later.supported_sentences) == (0, 1, 1)
    # A citation not judged does not support: penalized, and no credit.
    unjudged = report_metrics([sentence([("d1", None)], {(0, 0)})], SCORED)
    assert (unjudged["sentence_support"], unjudged["citation_support"], unjudged["nugget_coverage"]) == (0, 0, 0)
    assert unjudged["citation_relevance"] == 1.0 and unjudged["penalized"] == 1


def test_negative_assertions_an_option():
    report = [
        # uncited negative assertion that states Ann (judged against every kept answer): rewarded, covers q0
        sentence(agrees={(0, 0)}, negative=True, needs_citation=True),
        # uncited negative assertion confirmed by no answer: penalized (not counted in sentence support)
        sentence(negative=True),
        # cites d3 (supports), states nothing: ignored; the only sentence counted in sentence support
        sentence([("d3", True)]),
    ]
    on = report_metrics(report, SCORED, negatives=True)
    # coverage 1/2, weighted 2/3, support 1/1; F1 = 2 (1)(1/2) / (3/2) = 2/3; weighted 2 (2/3) / (5/3) = 4/5
    assert (on["nugget_coverage"], on["weighted_coverage"], on["sentence_support"]) == pytest.approx((1 / 2, 2 / 3, 1))
    assert (on["f1"], on["weighted_f1"]) == pytest.approx((2 / 3, 4 / 5))
    assert (on["rewarded"], on["penalized"]) == (1, 1)
    # Off (the default): the first sentence is a first instance needing a citation (penalized), the second is
    # ignored; nothing covered; support 1 / (1 + 1).
    off = report_metrics(report, SCORED)
    assert (off["nugget_coverage"], off["sentence_support"], off["f1"]) == (0, 1 / 2, 0)
    assert (off["rewarded"], off["penalized"]) == (0, 1)


def test_a_no_reference_bank_is_scored_ungated():
    report = [sentence([("d7", True)], {(0, 1)})]
    metrics = report_metrics(report, bank_as_scored(NO_REFERENCE))
    # Bob is judged though d7 is none of its documents: covered 1/1; support 1/1; no document is relevant.
    assert (metrics["nugget_coverage"], metrics["sentence_support"], metrics["f1"]) == (1, 1, 1)
    assert metrics["citation_relevance"] == 0


def test_an_empty_report_scores_zero():
    metrics = report_metrics([], SCORED)
    assert {metrics[name] for name in RATIOS} == {0.0}
    assert {name: metrics[name] for name in COUNTS} == {name: 2 if name == "questions" else 0 for name in COUNTS}


ONE = bank_as_scored([Question("Q?", rule="or", answers=(Answer("yes", ("d1",)),))])


def test_a_runs_macro_and_micro_figures_and_a_missing_report():
    cover = sentence([("d1", True)], {(0, 0)})
    counts = {
        ("r", "tA"): report_counts(REPORT, SCORED),
        ("r", "tB"): report_counts([cover], ONE),
        ("s", "tA"): report_counts([cover], SCORED),  # s has no report on tB
    }
    banks = {"tA": SCORED, "tB": ONE}
    zero = run_figures(counts, runs=["r", "s"], banks=banks)
    r, s = zero["r"], zero["s"]
    # r: tA F1 6/11, tB F1 1 -> 17/22; coverage (1/2 + 1)/2; support (3/5 + 1)/2; sentences (8 + 1)/2
    assert (r["f1"], r["nugget_coverage"], r["sentence_support"]) == pytest.approx((17 / 22, 3 / 4, 4 / 5))
    assert r["sentences"] == pytest.approx(9 / 2)
    # micro: covered (1 + 1)/(2 + 1); weighted (1 + 1)/(3 + 1); support (3 + 1)/(5 + 1); citations (4 + 1)/(5 + 1)
    assert (r["nugget_coverage_micro"], r["weighted_coverage_micro"]) == pytest.approx((2 / 3, 1 / 2))
    assert (r["sentence_support_micro"], r["citation_support_micro"]) == pytest.approx((2 / 3, 5 / 6))
    # F1 micro = 2 (2/3)(2/3) / (4/3) = 2/3; weighted = 2 (2/3)(1/2) / (7/6) = 4/7
    assert (r["f1_micro"], r["weighted_f1_micro"]) == pytest.approx((2 / 3, 4 / 7))
    # s: tA covers q0 (1/2, F1 2 (1)(1/2)/(3/2) = 2/3); tB missing counts 0 throughout, its count of questions too
    assert (s["f1"], s["nugget_coverage"], s["questions"]) == pytest.approx((1 / 3, 1 / 4, 2 / 2))
    # micro: the missing report's 1 question still in the coverage denominator, 1/(2 + 1); support 1/1;
    # F1 2 (1)(1/3) / (4/3) = 1/2
    assert (s["nugget_coverage_micro"], s["f1_micro"]) == pytest.approx((1 / 3, 1 / 2))
    skip = run_figures(counts, runs=["s"], banks=banks, skip_missing=True)["s"]
    # Skipped: tA alone
    assert (skip["f1"], skip["nugget_coverage"], skip["nugget_coverage_micro"], skip["f1_micro"]) == pytest.approx(
        (2 / 3, 1 / 2, 1 / 2, 2 / 3)
    )


def test_a_runs_f1_is_the_mean_of_its_topics_f1_below_the_harmonic_mean_of_its_means():
    """The seed's Table 3: F1 0.586 for support 0.965 and coverage 0.470 (their harmonic mean is 0.632)."""
    # t1: supported and covered (F1 1); t2: supported, not covered (F1 0); t3: no report (0 throughout).
    counts = {
        ("r", "t1"): report_counts([sentence([("d1", True)], {(0, 0)})], ONE),
        ("r", "t2"): report_counts([sentence([("d1", True)])], ONE),
    }
    means = run_figures(counts, runs=["r"], banks={"t1": ONE, "t2": ONE, "t3": ONE})["r"]
    assert means["f1"] == pytest.approx(1 / 3)
    assert means["sentence_support"] == pytest.approx(2 / 3)
    assert means["nugget_coverage"] == pytest.approx(1 / 3)
    # the harmonic mean of the means, 2 (2/3)(1/3) / 1 = 4/9, is above the mean of the topics' F1
    assert means["f1"] < 2 * means["sentence_support"] * means["nugget_coverage"] / (
        means["sentence_support"] + means["nugget_coverage"]
    )
