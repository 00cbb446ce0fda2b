"""ARGUE-style scores of one report, as plain functions over plain data (no ORM).

The report is already cut to its request's limit (`reports.layout.report_cut`). With Q the topic's
questions (weight 2 for a vital question, 1 otherwise):

    nugget coverage          = covered questions / |Q|
    weighted nugget coverage = sum of the covered questions' weights / sum of all weights
    sentence support         = sentences every citation of which supports them / sentences that cite
    citation support         = citations that support their sentence / citations
    citation relevance       = citations of a relevant document / citations
    F1 (weighted F1)         = harmonic mean of sentence support and (weighted) coverage

A question is covered when its gold answers agree by its rule: OR (and a blank rule) needs one answer some
sentence agrees with, AND needs every answer agreed by some sentence; a question without gold answers is
never covered. A cited document is relevant when it supports some gold answer of the topic. A citation
not judged counts as not supporting. `uncited_counts` is ARGUE's option of counting each sentence that
cites nothing in sentence support's denominator (as a sentence that needed a citation). An empty
denominator gives 0, so an empty report scores 0 throughout.

A run's figure is the mean over topics of each per-topic figure (F1 included: never the harmonic mean of
the run's means), a topic without its report counting 0 (`assessor.scoring.scores.run_means`).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from assessor.scoring.scores import ratio
from nuggets.banks import Question

METRICS = (
    "f1",
    "weighted_f1",
    "nugget_coverage",
    "weighted_coverage",
    "sentence_support",
    "citation_support",
    "citation_relevance",
)
WEIGHTS = {"vital": 2, "okay": 1}


@dataclass(frozen=True)
class SentenceJudged:
    """One kept sentence and what a source said of it."""

    # (cited document id, whether it supports the sentence: None when not judged)
    citations: tuple[tuple[str, bool | None], ...] = ()
    # (question index in the bank, answer index in the question) the sentence agrees with
    agrees: frozenset[tuple[int, int]] = field(default_factory=frozenset)


def harmonic(a: float, b: float) -> float:
    return ratio(2 * a * b, a + b)


def question_covered(question: Question, agreed: set[int]) -> bool:
    """Whether the answers agreed with (their indices) cover the question by its rule."""
    if not question.answers:
        return False
    if question.rule == "and":
        return all(index in agreed for index in range(len(question.answers)))
    return bool(agreed)


def relevant_documents(questions: Iterable[Question]) -> set[str]:
    return {docid for question in questions for answer in question.answers for docid in answer.documents}


def report_metrics(
    sentences: Sequence[SentenceJudged], questions: Sequence[Question], *, uncited_counts: bool = False
) -> dict[str, float]:
    relevant = relevant_documents(questions)
    citations = [citation for sentence in sentences for citation in sentence.citations]
    citing = [sentence for sentence in sentences if sentence.citations]
    supported = sum(all(supports for _, supports in sentence.citations) for sentence in citing)
    agreed: dict[int, set[int]] = {}
    for sentence in sentences:
        for question_index, answer_index in sentence.agrees:
            agreed.setdefault(question_index, set()).add(answer_index)
    covered = [question_covered(question, agreed.get(index, set())) for index, question in enumerate(questions)]
    weights = [WEIGHTS.get(question.importance, 1) for question in questions]
    coverage = ratio(sum(covered), len(questions))
    weighted_coverage = ratio(sum(w for w, c in zip(weights, covered, strict=True) if c), sum(weights))
    sentence_support = ratio(supported, len(sentences) if uncited_counts else len(citing))
    return {
        "f1": harmonic(sentence_support, coverage),
        "weighted_f1": harmonic(sentence_support, weighted_coverage),
        "nugget_coverage": coverage,
        "weighted_coverage": weighted_coverage,
        "sentence_support": sentence_support,
        "citation_support": ratio(sum(bool(supports) for _, supports in citations), len(citations)),
        "citation_relevance": ratio(sum(docid in relevant for docid, _ in citations), len(citations)),
    }


def answers_to_check(
    cited: Iterable[str], questions: Sequence[Question], *, check_all: bool = False
) -> list[tuple[int, int]]:
    """The (question index, answer index) pairs a sentence citing `cited` is judged against: by default only
    the answers one of whose supporting documents it cites (none when it cites nothing); all with `check_all`."""
    cited_set = set(cited)
    return [
        (question_index, answer_index)
        for question_index, question in enumerate(questions)
        for answer_index, answer in enumerate(question.answers)
        if check_all or cited_set & set(answer.documents)
    ]
