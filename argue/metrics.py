"""ARGUE-style scores of one report, and of a run, as plain functions over plain data (no ORM).

The flow is ARGUE's (Mayfield et al. 2024; Auto-ARGUE, Walden et al. 2025: its flow chart and the decision
tree of `evaluate_sentence` in trevoradriaanse/report_gen_eval), with PROTOCOL.md's metric definitions.

The bank as scored (`bank_as_scored`): gold answers without supporting documents are dropped, then
questions without answers. A bank none of whose answers has documents (a no-reference bank) keeps every
answer and is scored ungated. A topic with no question left is not scored.

Each kept sentence of the report, in report order (`sentence_outcome`):
- it cites documents: penalized if any cited document does not support it (or was not judged); otherwise
  rewarded when it states a gold answer among those it is judged against (the kept answers one of whose
  documents it cites; every kept answer with `check_all` or an ungated bank), ignored when it states none;
- it cites nothing: with `negatives` (ARGUE's option) and judged a negative assertion, it is rewarded when
  it states some kept answer, penalized otherwise; else, when it needs a citation, a first instance of its
  claim is penalized and a repeat ignored (the first sentence, with nothing before it, is a first instance
  without asking, as the reference does); a sentence needing no citation is ignored. An uncited check not
  judged counts as no.

A question is covered when the answers stated by rewarded sentences meet its rule: OR (or blank) one, AND
all of its kept answers. With K the kept questions (weight 2 for a vital question, 1 otherwise):

    nugget coverage          = covered questions / K
    weighted nugget coverage = the covered questions' weights / the weights of K
    sentence support         = citing sentences every citation of which supports them
                               / (citing sentences + uncited sentences penalized as first instances)
    citation support         = citations that support their sentence / citations
    citation relevance       = citations of a relevant document / citations  (relevant: the document
                               supports some kept gold answer of the topic)
    F1 (weighted F1)         = harmonic mean of sentence support and (weighted) coverage

with the counts: sentences, characters (the kept sentences joined by one space, after NFKC), citations,
questions (K), covered, rewarded and penalized sentences, and the other numerators and denominators
(`PARTS`). An empty denominator gives 0, so an empty report scores 0 throughout (its count of kept questions
is the bank's).

A run's figure (`run_figures`) is the macro mean over the scored topics of each per-topic figure (F1
included: never the harmonic mean of the run's means), a topic without the run's report counting 0
throughout (or left out of that run's mean: `skip_missing`); beside them the `_micro` figures, each ratio
of the numerator and denominator summed over the topics, F1 the harmonic mean of the micro sentence support
and coverage. A missing report adds nothing to the sums but its topic's kept questions (and their weights)
to the coverage denominators, unless skipped. A topic's own row carries its `_micro` figures too: over one
topic they are its figures.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

from assessor.scoring.scores import ratio
from nuggets.banks import Question
from reports.layout import report_length
from reports.models import LengthUnit

RATIOS = (
    "f1",
    "weighted_f1",
    "nugget_coverage",
    "weighted_coverage",
    "sentence_support",
    "citation_support",
    "citation_relevance",
)
COUNTS = ("sentences", "characters", "citations", "questions", "covered", "rewarded", "penalized")
# The other numerators and denominators of the ratios, kept per topic so that a run's micro figures are sums
# (of the kept scores too: a run's mean times its topics is its sum).
PARTS = (
    "weights",
    "covered_weights",
    "supported_sentences",
    "support_sentences",
    "supporting_citations",
    "relevant_citations",
)
METRICS = RATIOS + COUNTS + PARTS  # a topic's figures, as computed and kept
MICRO = tuple(f"{name}_micro" for name in RATIOS)  # a run's, beside its means
WEIGHTS = {"vital": 2, "okay": 1}

REWARDED, PENALIZED, IGNORED = "rewarded", "penalized", "ignored"

AnswerKey = tuple[int, int]  # (question index in the bank as stored, answer index in the question)


# --- the bank as scored ------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeptQuestion:
    index: int  # the question's position in the bank as stored
    question: Question
    answers: tuple[int, ...]  # the kept gold answers' positions in `question.answers`

    @property
    def weight(self) -> int:
        return WEIGHTS.get(self.question.importance, 1)

    def keys(self) -> list[AnswerKey]:
        return [(self.index, answer) for answer in self.answers]


@dataclass(frozen=True)
class ScoredBank:
    questions: tuple[KeptQuestion, ...] = ()
    ungated: bool = False  # a no-reference bank: every sentence is judged against every kept answer
    dropped_answers: int = 0
    dropped_questions: int = 0

    @property
    def scored(self) -> bool:
        return bool(self.questions)

    def keys(self) -> list[AnswerKey]:
        return [key for question in self.questions for key in question.keys()]

    def relevant_documents(self) -> set[str]:
        return {
            docid
            for kept in self.questions
            for answer in kept.answers
            for docid in kept.question.answers[answer].documents
        }


def bank_as_scored(questions: Sequence[Question]) -> ScoredBank:
    """Answers without documents dropped, then questions without answers; a bank with no documents at all is
    kept whole (but for questions without answers) and ungated."""
    ungated = not any(answer.documents for question in questions for answer in question.answers)
    kept: list[KeptQuestion] = []
    dropped_answers = 0
    for index, question in enumerate(questions):
        answers = tuple(position for position, answer in enumerate(question.answers) if ungated or answer.documents)
        dropped_answers += len(question.answers) - len(answers)
        if answers:
            kept.append(KeptQuestion(index, question, answers))
    return ScoredBank(tuple(kept), ungated, dropped_answers, len(questions) - len(kept))


def answers_to_check(cited: Iterable[str], bank: ScoredBank, *, check_all: bool = False) -> list[AnswerKey]:
    """The kept answers a sentence citing `cited` is judged against: those one of whose supporting documents
    it cites (none when it cites nothing); every kept answer with `check_all` or an ungated bank."""
    cited_set = set(cited)
    return [
        (kept.index, answer)
        for kept in bank.questions
        for answer in kept.answers
        if check_all or bank.ungated or cited_set & set(kept.question.answers[answer].documents)
    ]


def first_instance_asked(position: int) -> bool:
    """Whether "first instance of its claim?" is asked of the kept sentence at `position`: not of the first,
    which has no sentence before it and is a first instance (the reference's rule)."""
    return position > 0


# --- one sentence ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SentenceJudged:
    """One kept sentence and what a source said of it (None: not judged)."""

    # (cited document id, whether it supports the sentence)
    citations: tuple[tuple[str, bool | None], ...] = ()
    # the (question index, answer index) the sentence was said to state
    agrees: frozenset[AnswerKey] = field(default_factory=frozenset)
    needs_citation: bool | None = None
    first_instance: bool | None = None
    negative: bool | None = None
    text: str = ""


@dataclass(frozen=True)
class Outcome:
    verdict: str  # REWARDED, PENALIZED or IGNORED
    stated: frozenset[AnswerKey] = frozenset()  # the answers credited (a rewarded sentence's)
    first_instance: bool = False  # penalized as an uncited first instance (counted in sentence support)
    why: str = ""  # the branch of the flow that decided it, in words (the one-report page shows it)


def sentence_outcome(
    sentence: SentenceJudged, position: int, bank: ScoredBank, *, check_all: bool = False, negatives: bool = False
) -> Outcome:
    if sentence.citations:
        unsupported = [docid for docid, supports in sentence.citations if not supports]
        if unsupported:
            unjudged = " or was not judged" if any(supports is None for _, supports in sentence.citations) else ""
            why = f"a cited document does not support it{unjudged} ({', '.join(unsupported)})"
            return Outcome(PENALIZED, why=why)
        judged = answers_to_check([docid for docid, _ in sentence.citations], bank, check_all=check_all)
        stated = sentence.agrees & set(judged)
        if stated:
            return Outcome(REWARDED, frozenset(stated), why="every citation supports it and it states a gold answer")
        checked = "no gold answer" if not judged else "none of the gold answers it was checked against"
        return Outcome(IGNORED, why=f"every citation supports it, but it states {checked}")
    if negatives and sentence.negative:
        stated = sentence.agrees & set(bank.keys())
        if stated:
            return Outcome(REWARDED, frozenset(stated), why="an uncited negative assertion a gold answer confirms")
        return Outcome(PENALIZED, why="an uncited negative assertion no gold answer confirms")
    if sentence.needs_citation:
        if not first_instance_asked(position):
            return Outcome(PENALIZED, first_instance=True, why="needs a citation; the first sentence, a first instance")
        if sentence.first_instance:
            return Outcome(
                PENALIZED, first_instance=True, why="needs a citation and is the first instance of its claim"
            )
        return Outcome(IGNORED, why="needs a citation, but repeats a claim made before")
    asked = "was not asked whether it needs a citation" if sentence.needs_citation is None else "needs no citation"
    return Outcome(IGNORED, why=f"cites nothing and {asked}")


# --- one report -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportCounts:
    """The numerators and denominators of a report's figures (summed over topics for the micro figures)."""

    sentences: int = 0
    characters: int = 0
    citations: int = 0
    supporting_citations: int = 0  # citations that support their sentence
    relevant_citations: int = 0  # citations of a relevant document
    supported_sentences: int = 0  # citing sentences every citation of which supports them
    support_sentences: int = 0  # citing sentences + uncited sentences penalized as first instances
    questions: int = 0
    weights: int = 0
    covered: int = 0
    covered_weights: int = 0
    rewarded: int = 0
    penalized: int = 0

    def __add__(self, other: "ReportCounts") -> "ReportCounts":
        return ReportCounts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def question_covered(kept: KeptQuestion, stated: set[int]) -> bool:
    """Whether the kept answers stated (their positions) cover the question by its rule."""
    if kept.question.rule == "and":
        return all(answer in stated for answer in kept.answers)
    return any(answer in stated for answer in kept.answers)


def unanswered_counts(bank: ScoredBank) -> ReportCounts:
    """A report with nothing to credit: only its topic's kept questions."""
    return ReportCounts(questions=len(bank.questions), weights=sum(kept.weight for kept in bank.questions))


def report_counts(
    sentences: Sequence[SentenceJudged], bank: ScoredBank, *, check_all: bool = False, negatives: bool = False
) -> ReportCounts:
    outcomes = [
        sentence_outcome(sentence, position, bank, check_all=check_all, negatives=negatives)
        for position, sentence in enumerate(sentences)
    ]
    stated: dict[int, set[int]] = {}
    for outcome in outcomes:
        for question_index, answer_index in outcome.stated:
            stated.setdefault(question_index, set()).add(answer_index)
    covered = [kept for kept in bank.questions if question_covered(kept, stated.get(kept.index, set()))]
    citations = [citation for sentence in sentences for citation in sentence.citations]
    relevant = bank.relevant_documents()
    citing = [sentence for sentence in sentences if sentence.citations]
    return unanswered_counts(bank) + ReportCounts(
        sentences=len(sentences),
        characters=report_length([sentence.text for sentence in sentences], LengthUnit.CHARACTERS) if sentences else 0,
        citations=len(citations),
        supporting_citations=sum(bool(supports) for _, supports in citations),
        relevant_citations=sum(docid in relevant for docid, _ in citations),
        supported_sentences=sum(all(supports for _, supports in sentence.citations) for sentence in citing),
        support_sentences=len(citing) + sum(outcome.first_instance for outcome in outcomes),
        covered=len(covered),
        covered_weights=sum(kept.weight for kept in covered),
        rewarded=sum(outcome.verdict == REWARDED for outcome in outcomes),
        penalized=sum(outcome.verdict == PENALIZED for outcome in outcomes),
    )


def harmonic(a: float, b: float) -> float:
    return ratio(2 * a * b, a + b)


def ratios(counts: ReportCounts) -> dict[str, float]:
    coverage = ratio(counts.covered, counts.questions)
    weighted_coverage = ratio(counts.covered_weights, counts.weights)
    sentence_support = ratio(counts.supported_sentences, counts.support_sentences)
    return {
        "f1": harmonic(sentence_support, coverage),
        "weighted_f1": harmonic(sentence_support, weighted_coverage),
        "nugget_coverage": coverage,
        "weighted_coverage": weighted_coverage,
        "sentence_support": sentence_support,
        "citation_support": ratio(counts.supporting_citations, counts.citations),
        "citation_relevance": ratio(counts.relevant_citations, counts.citations),
    }


def topic_figures(counts: ReportCounts) -> dict[str, float]:
    """A report's row: its ratios and its counts (`METRICS`)."""
    return {**ratios(counts), **{name: float(getattr(counts, name)) for name in COUNTS + PARTS}}


def report_metrics(
    sentences: Sequence[SentenceJudged], bank: ScoredBank, *, check_all: bool = False, negatives: bool = False
) -> dict[str, float]:
    return topic_figures(report_counts(sentences, bank, check_all=check_all, negatives=negatives))


def own_micro(row: Mapping[str, float]) -> dict[str, float]:
    """A topic's `_micro` figures: over one topic, its own ratios."""
    return {f"{name}_micro": row[name] for name in RATIOS}


# --- a run ------------------------------------------------------------------------------------------------


def micro_from_means(
    means: Mapping[str, float], *, averaged_over: int, bank_totals: tuple[int, int] | None
) -> dict[str, float]:
    """A run's `_micro` figures from its means of the counts over `averaged_over` topics (a mean times its
    topics is a sum). `bank_totals`, the kept questions and their weights summed over every scored topic, are
    the coverage denominators when a missing report counts 0; None (a missing report skipped): the sums of the
    reports' own."""
    total = ReportCounts(
        **{name: round(means.get(name, 0.0) * averaged_over) for name in COUNTS + PARTS if name != "characters"}
    )
    if bank_totals is not None:
        total = replace(total, questions=bank_totals[0], weights=bank_totals[1])
    return {f"{name}_micro": value for name, value in ratios(total).items()}


def bank_totals(banks: Iterable[ScoredBank]) -> tuple[int, int]:
    """The kept questions and their weights, summed over the banks."""
    counts = sum((unanswered_counts(bank) for bank in banks), ReportCounts())
    return counts.questions, counts.weights


def run_figures(
    counts: Mapping[tuple[str, str], ReportCounts],
    *,
    runs: Iterable[str],
    banks: Mapping[str, ScoredBank],
    skip_missing: bool = False,
) -> dict[str, dict[str, float]]:
    """Each run's macro means over the scored topics (`banks`, each topic's bank as scored), a missing report
    counting 0 throughout (or left out: `skip_missing`), and its micro figures; `counts` holds the reports
    judged, by (run id, topic id)."""
    figures: dict[str, dict[str, float]] = {}
    totals = None if skip_missing else bank_totals(banks.values())
    for run in runs:
        rows = [
            topic_figures(counts.get((run, topic), ReportCounts()))
            for topic in sorted(banks)
            if (run, topic) in counts or not skip_missing
        ]
        means = {name: ratio(math.fsum(row[name] for row in rows), len(rows)) for name in METRICS}
        figures[run] = {**means, **micro_from_means(means, averaged_over=len(rows), bank_totals=totals)}
    return figures
