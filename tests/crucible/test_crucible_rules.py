"""Crucible's rules worked by hand: chunks at sentence boundaries, an extraction's confidence, the top k per
question, repeats by their stems, and the cut to a request's limit."""

import math

from assessor.jobs.llm.client import TokenLogprob
from crucible.llm import extraction_read, report_of, topic_chunks
from crucible.text import Candidate, chunks_split, confidence_of, is_no_answer, report_sentences, stem_key
from reports.models import ReportRequest


def test_chunks_gather_whole_sentences_up_to_about_a_thousand_characters():
    a, b, c = "A" * 598 + ".", "B" * 399 + "?", "C" * 299 + "!"  # 599, 400 and 300 characters
    # a + " " + b is 1,000 characters: one chunk; c would make it 1,301: a chunk of its own.
    assert chunks_split(f"{a} {b}\n{c}") == [f"{a} {b}", c]
    # 599 + 1 + 400 + 1 > 1,000 once a character more: b goes to the second chunk with c.
    longer = "A" * 599 + "."
    assert chunks_split(f"{longer} {b} {c}") == [longer, f"{b} {c}"]
    # A sentence longer than a chunk stays whole; no sentence is ever split.
    huge = "word " * 300 + "end."
    assert chunks_split(f"Short one. {huge.strip()} Tail.") == ["Short one.", huge.strip(), "Tail."]
    assert chunks_split("   ") == []


def test_a_topics_chunks_come_from_the_best_document_down_up_to_the_limit():
    a, b = "A" * 599 + ".", "B" * 599 + "."  # two chunks: together they are over 1,000 characters
    texts = {"d1": "Short.", "d2": f"{a} {b}", "d3": "Third."}
    assert topic_chunks(["d2", "d1", "d3"], texts, limit=3) == [("d2", a), ("d2", b), ("d1", "Short.")]
    assert topic_chunks(["d3", "d2"], texts, limit=2) == [("d3", "Third."), ("d2", a)]


def test_the_confidence_is_the_mean_token_probability_over_the_extracted_text():
    raw = "[[ ## extracted_text ## ]]\nBees make honey.\n\n[[ ## condensed_sentence ## ]]\nBees make honey.\n"
    answer = extraction_read(raw)
    assert (answer.extracted_text, raw[answer.start : answer.end]) == ("Bees make honey.", "Bees make honey.")
    head = "[[ ## extracted_text ## ]]\n"
    tokens = [
        TokenLogprob(head, math.log(0.1)),
        TokenLogprob("Bees", math.log(0.9)),
        TokenLogprob(" make", math.log(0.6)),
    ]
    tokens += [TokenLogprob(" honey.", math.log(0.3)), TokenLogprob(raw[len(head) + 16 :], math.log(0.05))]
    # Only the three tokens of "Bees make honey." count: (0.9 + 0.6 + 0.3) / 3.
    assert math.isclose(confidence_of(tokens, raw, answer.start, answer.end), 0.6)
    assert confidence_of(tokens, raw, 0, 0) is None


def test_no_answer_and_empty_extractions_are_told_apart_from_answers():
    assert is_no_answer("NO ANSWER") and is_no_answer("No answer.") and is_no_answer("") and is_no_answer("N/A")
    assert not is_no_answer("No, bees do not hibernate.")
    empty = extraction_read("[[ ## extracted_text ## ]]\n\n[[ ## condensed_sentence ## ]]\n\n[[ ## completed ## ]]")
    assert empty.extracted_text == "" and is_no_answer(empty.extracted_text)


def test_stems_make_fighting_and_fights_one_sentence():
    assert stem_key("The bees are fighting the wasps.") == stem_key("Bees fights wasps")
    assert stem_key("Bees fight wasps") != stem_key("Bees fight hornets")


def c(question: int, rank: int, text: str, confidence: float) -> Candidate:
    return Candidate(question, rank, f"d{rank}", text, confidence)


def test_each_question_keeps_its_top_k_by_confidence_and_repeats_are_dropped():
    candidates = [
        c(0, 0, "Bees make honey.", 0.5),
        c(0, 1, "Honey is made from nectar.", 0.9),
        c(0, 2, "Bees store honey in combs.", 0.7),
        c(1, 0, "Workers are fighting wasps.", 0.4),
        c(1, 1, "Honey is made from the nectar!", 0.8),  # question 0's best, again: dropped
        c(1, 2, "The colony fights wasps.", 0.4),
        c(1, 3, "Workers fights wasps.", 0.3),
    ]
    # k = 1: each question's best in the bank's order; question 1's best repeats question 0's: dropped.
    assert [x.text for x in report_sentences(candidates, k=1)] == ["Honey is made from nectar."]
    # k = 2, in rounds: the bests, then the seconds (a tie of confidence goes to the earlier chunk).
    assert [x.text for x in report_sentences(candidates, k=2)] == [
        "Honey is made from nectar.",
        "Bees store honey in combs.",
        "Workers are fighting wasps.",
    ]
    # k = 5: "Workers fights wasps." is "Workers are fighting wasps." stopped and stemmed.
    assert [x.text for x in report_sentences(candidates, k=5)] == [
        "Honey is made from nectar.",
        "Bees store honey in combs.",
        "Workers are fighting wasps.",
        "Bees make honey.",
        "The colony fights wasps.",
    ]


def test_the_report_is_cut_to_its_requests_limit_at_a_sentence_boundary():
    candidates = [c(0, 0, "Bees make honey.", 0.9), c(1, 0, "Honey lasts for years.", 0.8), c(2, 0, "Wax.", 0.7)]
    # 16 + 1 + 22 = 39 characters fit in 40; the third sentence would make 44.
    assert [x.text for x in report_of(candidates, k=1, request=ReportRequest(limit=40))] == [
        "Bees make honey.",
        "Honey lasts for years.",
    ]
    assert [x.text for x in report_of(candidates, k=1, request=ReportRequest(word_limit=3))] == ["Bees make honey."]
    assert len(report_of(candidates, k=1, request=ReportRequest())) == 3
    assert report_of(candidates, k=1, request=ReportRequest(limit=10)) == []
