"""One judged report, sentence by sentence, as ARGUE's flow read it (the role Auto-ARGUE's ARGUE-viz plays).

For an ARGUE-style source, and optionally a second one beside it (a person and an LLM, say): each sentence of
the report in order with its path through the flow (rewarded, penalized or ignored, and the branch that
decided it: `argue.metrics.sentence_outcome`'s), its citations with each source's support judgment, the gold
answers each source credits it with, the checks of a sentence citing nothing, and every judgment's reasoning
where an LLM gave one. Where two sources are shown, a sentence on which they differ in any judgment or in its
outcome is marked. The sentences beyond the request's limit are shown cut. An organizer's page: runs and
sources are named.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from argue.kinds import ARGUE_FAMILY
from argue.metrics import (
    KeptQuestion,
    Outcome,
    ScoredBank,
    SentenceJudged,
    report_counts,
    sentence_outcome,
    topic_figures,
)
from argue.models import AnswerAttestation, JudgedReport, SentenceCheck, SupportAttestation, UncitedAttestation
from argue.scoring import ReportJudged, report_judged
from assessor.models import Answer, Citation, LabelSource, Sentence
from assessor.scoring.lifecycle import labels_counted
from assessor.sources import source_owner

YES_NO = {True: "yes", False: "no", None: "—"}  # a judgment as the page shows it; "—" not judged
FIGURES = ("f1", "nugget_coverage", "weighted_coverage", "sentence_support", "citation_support", "citation_relevance")
COUNTS = ("sentences", "citations", "questions", "covered", "rewarded", "penalized")


@dataclass
class SourceReading:
    """One source's reading of the report, for the page's header."""

    name: str
    owner: str  # who or what stands behind it (assessor.sources.source_owner)
    made_by: str  # who or what judged this report
    bank: str
    options: str  # "gated", "every answer checked", "negative assertions judged"
    figures: list[str]  # FIGURES then COUNTS, as the page shows them (empty for a topic not scored)
    notes: list[str]


@dataclass
class CitationRow:
    position: int
    docid: str
    supports: list[tuple[str, str]]  # per source: (its name, yes, no or —)
    reasons: list[str]  # per source: the LLM's reasoning, or ""
    differs: bool = False


@dataclass
class SentenceCell:
    """What one source made of one sentence."""

    verdict: str  # rewarded, penalized, ignored
    why: str
    stated: list[str]  # the gold answers credited, "Q2 · answer text"
    checks: list[str]  # of a sentence citing nothing: "needs a citation: yes"
    reasons: list[str] = field(default_factory=list)  # the LLM's reasoning on the answers and checks


@dataclass
class SentenceRow:
    number: int
    text: str
    citations: list[CitationRow]
    cells: list[SentenceCell]  # per source; empty for a sentence beyond the cut
    kept: bool = True
    differs: bool = False


@dataclass
class ReportPage:
    answer: Answer
    readings: list[SourceReading]
    rows: list[SentenceRow]
    questions: list[KeptQuestion]
    bank: ScoredBank
    missing: list[str]  # sources that did not judge this report

    @property
    def differing(self) -> int:
        return sum(row.differs for row in self.rows)

    @property
    def figure_rows(self) -> list[tuple[str, list[str], bool]]:
        """(metric, each source's value, whether they differ), for the sources whose topic is scored."""
        scored = [reading.figures for reading in self.readings if reading.figures]
        if not scored:
            return []
        columns = [list(values) for values in zip(*scored, strict=True)]
        return [
            (metric, values, len(set(values)) > 1) for metric, values in zip((*FIGURES, *COUNTS), columns, strict=True)
        ]

    @property
    def notes(self) -> list[str]:
        """The readings' notes, each once (two sources of one bank say the same)."""
        return list(dict.fromkeys(note for reading in self.readings for note in reading.notes))


def _options(judged: ReportJudged) -> str:
    if judged.bank.ungated:
        gate = "ungated (the bank's answers carry no documents)"
    else:
        gate = "every gold answer checked" if judged.check_all else "gated by the cited documents"
    return gate + (", negative assertions judged" if judged.negatives else "")


def _bank_notes(bank: ScoredBank) -> list[str]:
    notes = []
    if bank.dropped_answers or bank.dropped_questions:
        notes.append(
            f"The bank as scored drops {bank.dropped_answers} gold answer(s) without a supporting document and "
            f"{bank.dropped_questions} question(s) left without an answer."
        )
    if not bank.scored:
        notes.append("No question of the bank is left: the topic is not scored.")
    return notes


def _reading(name: str, judged: ReportJudged) -> SourceReading:
    source = LabelSource.objects.select_related("imported_from").get(family=ARGUE_FAMILY, name=name)
    figures = []
    if judged.bank.scored:
        counts = report_counts(judged.sentences, judged.bank, check_all=judged.check_all, negatives=judged.negatives)
        row = topic_figures(counts)
        figures = [f"{row[metric]:.3f}" for metric in FIGURES] + [f"{row[metric]:.0f}" for metric in COUNTS]
    return SourceReading(
        name,
        source_owner(source),
        judged.made_by,
        judged.bank_name,
        _options(judged),
        figures,
        _bank_notes(judged.bank),
    )


def _answer_label(bank: ScoredBank, key: tuple[int, int]) -> str:
    kept = next(question for question in bank.questions if question.index == key[0])
    return f"Q{key[0] + 1} · {kept.question.answers[key[1]].text}"


def _checks(sentence: SentenceJudged, negatives: bool) -> list[str]:
    if sentence.citations:
        return []
    checks = [f"needs a citation: {YES_NO[sentence.needs_citation]}"]
    if sentence.needs_citation:
        checks.append(f"first instance: {YES_NO[sentence.first_instance]}")
    if negatives:
        checks.append(f"negative assertion: {YES_NO[sentence.negative]}")
    return checks


@dataclass(frozen=True)
class _Reasons:
    """A source's reasoning behind its judgments of the report's sentences (an LLM's; people and files give
    none)."""

    name: str  # the source's
    support: dict[int, str]  # citation id ->
    answers: dict[int, list[str]]  # sentence id -> "Q2.1: ..." for the answers it was said to state
    uncited: dict[int, list[str]]  # sentence id -> "needs a citation: ..."


def _reasons(name: str, answer: Answer) -> _Reasons:
    of = {"source__family": ARGUE_FAMILY, "source__name": name}
    support = dict(
        SupportAttestation.objects.filter(**of, citation__sentence__answer=answer)
        .exclude(reasoning="")
        .values_list("citation_id", "reasoning")
    )
    answers: dict[int, list[str]] = defaultdict(list)
    for sentence_id, question_text, label, reasoning in (
        AnswerAttestation.objects.filter(**of, sentence__answer=answer)
        .exclude(reasoning="")
        .order_by("question_id", "answer_index")
        .values_list("sentence_id", "question__text", "label", "reasoning")
    ):
        answers[sentence_id].append(f"{question_text} ({label}): {reasoning}")
    uncited: dict[int, list[str]] = defaultdict(list)
    for sentence_id, asked, reasoning in (
        UncitedAttestation.objects.filter(**of, sentence__answer=answer)
        .exclude(reasoning="")
        .values_list("sentence_id", "asked", "reasoning")
    ):
        uncited[sentence_id].append(f"{SentenceCheck(asked).label}: {reasoning}")
    return _Reasons(name, support, answers, uncited)


def _cell(judged: ReportJudged, position: int, reasons: _Reasons, sentence_id: int) -> SentenceCell:
    sentence = judged.sentences[position]
    outcome: Outcome = sentence_outcome(
        sentence, position, judged.bank, check_all=judged.check_all, negatives=judged.negatives
    )
    stated = [_answer_label(judged.bank, key) for key in sorted(outcome.stated)]
    said = reasons.answers.get(sentence_id, []) + reasons.uncited.get(sentence_id, [])
    return SentenceCell(outcome.verdict, outcome.why, stated, _checks(sentence, judged.negatives), said)


def _citation_rows(
    citations: Sequence[tuple[int, str]], position: int, judged: Sequence[ReportJudged], reasons: Sequence[_Reasons]
) -> list[CitationRow]:
    rows = []
    for order, (citation_id, docid) in enumerate(citations):
        supports = [
            (reason.name, YES_NO[one.sentences[position].citations[order][1]])
            for one, reason in zip(judged, reasons, strict=True)
        ]
        said = [reason.support.get(citation_id, "") for reason in reasons]
        rows.append(CitationRow(order + 1, docid, supports, said, differs=len({s for _, s in supports}) > 1))
    return rows


def _differs(cells: Sequence[SentenceCell], citations: Sequence[CitationRow]) -> bool:
    shapes = {(cell.verdict, tuple(cell.stated), tuple(cell.checks)) for cell in cells}
    return len(shapes) > 1 or any(citation.differs for citation in citations)


def _rows(answer: Answer, judged: Sequence[ReportJudged], reasons: Sequence[_Reasons]) -> list[SentenceRow]:
    citations: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for citation_id, sentence_id, docid in (
        Citation.objects.filter(sentence__answer=answer)
        .order_by("sentence_id", "position")
        .values_list("pk", "sentence_id", "segment_id")
    ):
        citations[sentence_id].append((citation_id, docid))
    kept = min(len(one.sentences) for one in judged)
    rows = []
    for position, (sentence_id, text) in enumerate(
        Sentence.objects.filter(answer=answer).order_by("index").values_list("pk", "text")
    ):
        if position >= kept:
            cited = [CitationRow(n + 1, docid, [], []) for n, (_, docid) in enumerate(citations[sentence_id])]
            rows.append(SentenceRow(position + 1, text, cited, [], kept=False))
            continue
        cells = [_cell(one, position, reason, sentence_id) for one, reason in zip(judged, reasons, strict=True)]
        cited = _citation_rows(citations[sentence_id], position, judged, reasons)
        rows.append(SentenceRow(position + 1, text, cited, cells, differs=len(judged) > 1 and _differs(cells, cited)))
    return rows


def report_page(*, answer: Answer, names: Sequence[str]) -> ReportPage:
    """The page of `answer` as the named sources judged it (those that did not are listed in `missing`)."""
    found = {name: report_judged(name, answer.pk) for name in names}
    judged = [(name, one) for name, one in found.items() if one is not None]
    missing = [name for name, one in found.items() if one is None]
    if not judged:
        return ReportPage(answer, [], [], [], ScoredBank(), missing)
    readings = [_reading(name, one) for name, one in judged]
    reasons = [_reasons(name, answer) for name, _ in judged]
    bank = judged[0][1].bank
    rows = _rows(answer, [one for _, one in judged], reasons)
    return ReportPage(answer, readings, rows, list(bank.questions), bank, missing)


def judged_by(name: str) -> list[tuple[str, str]]:
    """The (run id, topic id) of every report the source has counted judgments of, in order."""
    reports = labels_counted(JudgedReport.objects.filter(source__family=ARGUE_FAMILY, source__name=name))
    return sorted(set(reports.order_by().values_list("answer__run__run_id", "answer__topic_id")))
