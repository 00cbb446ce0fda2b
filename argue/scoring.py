"""An ARGUE-style source's scores: each judged report's figures (argue.metrics) from the source's yes/no
judgments and the bank it was judged against, and each run's mean over the source's topics.

Only counted judgments are read (assessor.scoring.lifecycle): not those of open work or of a job still
running. A report's figures depend on nothing but its own judgments and its topic's bank, so a scope of
some answers is computed over those answers alone.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from argue.kinds import ARGUE, ARGUE_FAMILY, ARGUE_WORK, SCORE_FAMILY
from argue.metrics import (
    METRICS,
    MICRO,
    ReportCounts,
    ScoredBank,
    SentenceJudged,
    bank_as_scored,
    bank_totals,
    micro_from_means,
    own_micro,
    report_counts,
    run_figures,
    topic_figures,
)
from argue.models import AnswerAttestation, JudgedReport, SentenceCheck, SupportAttestation, UncitedAttestation
from assessor.models import Answer, AssessorWork, Citation, Sentence
from assessor.scoring.kept import kept_scores
from assessor.scoring.lifecycle import (
    job_sentences,
    jobs_not_final_by,
    labels_counted,
    open_included,
    open_work_by,
    open_work_sentences,
)
from assessor.scoring.scores import Scores
from nuggets.banks import bank_questions

# The judged reports' answers a computation is scoped to, as a subquery.
AnswersInScope = QuerySet[JudgedReport, dict[str, Any]]


def _of_source(model, name: str):
    return labels_counted(model.objects.filter(source__family=ARGUE_FAMILY, source__name=name))


def argue_scores_from_labels(
    *,
    name: str,
    topics: Sequence[str] | None = None,
    answers: Sequence[int] | None = None,
    skip_missing: bool = False,
) -> Scores:
    """The source's figures (`METRICS`) per topic and run, and each run's `_micro` figures; LookupError when the
    source has no counted judged report. A topic whose bank as scored has no question is left out (`notes`
    says so); `skip_missing` leaves a run's missing reports out of its means instead of counting them 0."""
    scores, banks = _scores_and_banks(name=name, topics=topics, answers=answers)
    return Scores(
        metrics=METRICS + MICRO,
        per_topic={key: {**row, **own_micro(row)} for key, row in scores.per_topic.items()},
        run_means=run_figures(scores.counts, runs=scores.runs, banks=banks, skip_missing=skip_missing),
        topics=scores.topics,
        runs=scores.runs,
    )


@dataclass(frozen=True)
class _Judged:
    counts: dict[tuple[str, str], ReportCounts]
    per_topic: dict[tuple[str, str], dict[str, float]]
    topics: list[str]
    runs: list[str]


def _scores_and_banks(
    *, name: str, topics: Sequence[str] | None, answers: Sequence[int] | None
) -> tuple[_Judged, dict[str, ScoredBank]]:
    """Each judged report's counts in scope, and the scored topics' banks as scored."""
    reports = _of_source(JudgedReport, name)
    every_topic = sorted(set(reports.order_by().values_list("answer__topic_id", flat=True)))
    if not every_topic:
        raise LookupError(f"no counted ARGUE-style judgments under {name!r}")
    if topics is not None:
        reports = reports.filter(answer__topic_id__in=list(topics))
    if answers is not None:
        reports = reports.filter(answer_id__in=list(answers))
    rows = list(
        reports.values_list(
            "answer_id", "answer__run__run_id", "answer__topic_id", "bank", "kept", "check_all", "negatives"
        )
    )
    banks = _scored_banks({(bank, topic) for _, _, topic, bank, *_ in rows})
    index_of = {
        answer_id: {kept.question.pk: kept.index for kept in banks[(bank, topic)].questions}
        for answer_id, _, topic, bank, *_ in rows
    }
    judged = _judged_sentences(name, reports.values("answer_id"), {row[0]: row[4] for row in rows}, index_of)
    counts: dict[tuple[str, str], ReportCounts] = {}
    for answer_id, run_id, topic_id, bank_name, _, check_all, negatives in rows:
        bank = banks[(bank_name, topic_id)]
        if bank.scored:
            counts[(run_id, topic_id)] = report_counts(
                judged[answer_id], bank, check_all=check_all, negatives=negatives
            )
    scored = {topic: bank for (_, topic), bank in sorted(banks.items()) if bank.scored}
    runs = sorted(set(Answer.objects.filter(topic_id__in=every_topic).values_list("run__run_id", flat=True)))
    per_topic = {key: topic_figures(one) for key, one in counts.items()}
    return _Judged(counts, per_topic, sorted(scored), runs), scored


def _scored_banks(pairs: set[tuple[str, str]]) -> dict[tuple[str, str], ScoredBank]:
    """(bank name, topic) -> the topic's bank as scored (argue.metrics.bank_as_scored), as the bank is now."""
    banks: dict[tuple[str, str], ScoredBank] = {}
    for name in {bank for bank, _ in pairs}:
        questions = bank_questions(name, {topic for bank, topic in pairs if bank == name})
        for bank, topic in pairs:
            if bank == name:
                banks[(bank, topic)] = bank_as_scored(questions.get(topic, []))
    return banks


def _judged_sentences(
    name: str, in_scope: AnswersInScope, kept: dict[int, int], index_of: dict[int, dict[int | None, int]]
) -> dict[int, list[SentenceJudged]]:
    """Each judged report's kept sentences, in order, with what the source said of them; the gold answers by
    (question index in the bank, answer index), `index_of` giving each report's question indices by pk (a
    question no longer in the bank as scored is left out)."""
    sentences = _kept_sentences(in_scope, kept)
    citations = _citations(name, in_scope)
    agreed = _agreed(name, in_scope)
    uncited = _uncited(name, in_scope)
    judged: dict[int, list[SentenceJudged]] = {}
    for answer_id, its in sentences.items():
        judged[answer_id] = [
            SentenceJudged(
                citations=tuple(citations[sentence_id]),
                agrees=frozenset(
                    (index_of[answer_id][question], answer)
                    for question, answer in agreed[sentence_id]
                    if question in index_of[answer_id]
                ),
                needs_citation=uncited[sentence_id].get(SentenceCheck.NEEDS_CITATION),
                first_instance=uncited[sentence_id].get(SentenceCheck.FIRST_INSTANCE),
                negative=uncited[sentence_id].get(SentenceCheck.NEGATIVE),
                text=text,
            )
            for sentence_id, text in its
        ]
    return {answer_id: judged.get(answer_id, []) for answer_id in kept}


def _kept_sentences(in_scope: AnswersInScope, kept: dict[int, int]) -> dict[int, list[tuple[int, str]]]:
    """Each answer's kept sentences' ids and texts, in order."""
    sentences: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for pk, answer_id, index, text in (
        Sentence.objects.filter(answer_id__in=in_scope)
        .order_by("answer_id", "index")
        .values_list("pk", "answer_id", "index", "text")
    ):
        if index < kept[answer_id]:
            sentences[answer_id].append((pk, text))
    return sentences


def _citations(name: str, in_scope: AnswersInScope) -> dict[int, list[tuple[str, bool | None]]]:
    """Each sentence's cited documents, in order, with the source's support judgment (None when not judged)."""
    supports = {
        citation: label == "yes"
        for citation, label in _of_source(SupportAttestation, name).values_list("citation_id", "label")
    }
    citations: dict[int, list[tuple[str, bool | None]]] = defaultdict(list)
    for sentence_id, citation_id, docid in (
        Citation.objects.filter(sentence__answer_id__in=in_scope)
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "pk", "segment_id")
    ):
        citations[sentence_id].append((docid, supports.get(citation_id)))
    return citations


def _agreed(name: str, in_scope: AnswersInScope) -> dict[int, set[tuple[int, int]]]:
    """Each sentence's (question pk, answer index) the source said it gives."""
    agreed: dict[int, set[tuple[int, int]]] = defaultdict(set)
    for sentence_id, question_id, answer_index in (
        _of_source(AnswerAttestation, name)
        .filter(label="yes", sentence__answer_id__in=in_scope)
        .values_list("sentence_id", "question_id", "answer_index")
    ):
        agreed[sentence_id].add((question_id, answer_index))
    return agreed


def _uncited(name: str, in_scope: AnswersInScope) -> dict[int, dict[str, bool]]:
    """Each sentence's checks of a sentence citing nothing, as the source answered them."""
    uncited: dict[int, dict[str, bool]] = defaultdict(dict)
    for sentence_id, asked, label in (
        _of_source(UncitedAttestation, name)
        .filter(sentence__answer_id__in=in_scope)
        .values_list("sentence_id", "asked", "label")
    ):
        uncited[sentence_id][asked] = label == "yes"
    return uncited


def argue_scores(*, name: str, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
    """As kept (assessor.scoring.kept), with each run's `_micro` figures worked from its kept means of the counts;
    or from the judgments when open work is counted."""
    if open_included():
        return argue_scores_from_labels(name=name)
    kept = kept_scores(family=SCORE_FAMILY, columns=(name,), runs=runs, per_topic=per_topic)
    totals = bank_totals(_source_banks(name, kept.topics).values())
    return Scores(
        metrics=METRICS + MICRO,
        per_topic={key: {**row, **own_micro(row)} for key, row in kept.per_topic.items()},
        run_means={
            run: {**means, **micro_from_means(means, averaged_over=len(kept.topics), bank_totals=totals)}
            for run, means in kept.run_means.items()
        },
        topics=kept.topics,
        runs=kept.runs,
    )


def _source_banks(name: str, topics: Sequence[str]) -> dict[str, ScoredBank]:
    """The banks as scored of the topics the source judged reports of (one bank a topic)."""
    pairs = set(
        _of_source(JudgedReport, name)
        .filter(answer__topic_id__in=list(topics))
        .order_by()
        .values_list("bank", "answer__topic_id")
        .distinct()
    )
    return {topic: bank for (_, topic), bank in _scored_banks(pairs).items()}


def compute(*, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None) -> Scores:
    """The registry's `ScoreFamily.compute`: columns are (ARGUE-style source name,). The per-topic figures
    (`METRICS`), kept as they are; the run's micro figures are worked from the kept means (`argue_scores`)."""
    (name,) = columns
    judged, banks = _scores_and_banks(name=name, topics=topics, answers=answers)
    return Scores(
        metrics=METRICS,
        per_topic=judged.per_topic,
        run_means=run_figures(judged.counts, runs=judged.runs, banks=banks),
        topics=judged.topics,
        runs=judged.runs,
    )


def listed() -> list[tuple[str, ...]]:
    reports = labels_counted(JudgedReport.objects.filter(source__family=ARGUE_FAMILY))
    return [(name,) for name in sorted(set(reports.order_by().values_list("source__name", flat=True)))]


def job_scope(job_id: int) -> dict[tuple[str, ...], set[str]]:
    scope: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for name, topic in (
        JudgedReport.objects.filter(job_id=job_id).values_list("source__name", "answer__topic_id").distinct()
    ):
        scope[(name,)].add(topic)
    return scope


def work_scope(work: AssessorWork) -> list[tuple[str, ...]]:
    if work.kind == ARGUE_WORK and work.source is not None:
        return [(work.source.name,)]
    return []


def banks_changed(names: Sequence[str]) -> dict[str, list[str]]:
    """Per source, the topics whose bank's questions are no longer those its reports were judged against."""
    rows = labels_counted(JudgedReport.objects.filter(source__family=ARGUE_FAMILY, source__name__in=list(names)))
    judged: dict[tuple[str, str], dict[str, set[int]]] = defaultdict(dict)
    for name, bank, topic, questions in rows.order_by().values_list(
        "source__name", "bank", "answer__topic_id", "questions"
    ):
        judged[(name, bank)].setdefault(topic, set()).update(questions)
    changed: dict[str, list[str]] = defaultdict(list)
    for (name, bank), topics in judged.items():
        current = bank_questions(bank, list(topics))
        for topic, questions in sorted(topics.items()):
            if {q.pk for q in current.get(topic, [])} != questions:
                changed[name].append(topic)
    return changed


def notes(sources: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[str]]:
    """What keeps each source's scores from being final: open work, running or partial jobs, and banks edited
    since their reports were judged."""
    names = sorted({name for (name,) in sources})
    open_work = open_work_by(AssessorWork.objects.filter(kind=ARGUE_WORK, source__name__in=names), "source__name")
    jobs = jobs_not_final_by(kind=ARGUE, names=names)
    changed = banks_changed(names)
    scored = bank_notes(names)
    return {
        (name,): open_work_sentences(open_work.get((name,), []), what=f"ARGUE-style judging into {name!r}")
        + job_sentences(jobs.get(name, []))
        + _changed_sentences(changed.get(name, []))
        + scored.get(name, [])
        for (name,) in sources
    }


def _topics_shown(topics: Sequence[str]) -> str:
    return f"{len(topics)} topic(s) (" + ", ".join(topics[:5]) + (", ...)" if len(topics) > 5 else ")")


def bank_notes(names: Sequence[str]) -> dict[str, list[str]]:
    """Per source, what its banks as scored say: topics left unscored, topics scored ungated (a no-reference
    bank), and the LLM's yes/no answers that were neither (counted as no)."""
    reports = labels_counted(JudgedReport.objects.filter(source__family=ARGUE_FAMILY, source__name__in=list(names)))
    pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    malformed: dict[str, int] = defaultdict(int)
    for name, bank, topic, count in reports.order_by().values_list(
        "source__name", "bank", "answer__topic_id", "malformed"
    ):
        pairs[name].add((bank, topic))
        malformed[name] += count
    banks = _scored_banks(set().union(*pairs.values()))
    said: dict[str, list[str]] = {}
    for name, its in pairs.items():
        unscored = sorted({topic for bank, topic in its if not banks[(bank, topic)].scored})
        ungated = sorted({topic for bank, topic in its if banks[(bank, topic)].scored and banks[(bank, topic)].ungated})
        said[name] = (
            [
                f"{_topics_shown(unscored)} not scored: no question of the bank has a gold answer with a supporting "
                "document (answers without documents are dropped, then questions without answers)."
            ]
            * bool(unscored)
            + [
                f"{_topics_shown(ungated)} scored ungated: the bank's gold answers carry no documents (a no-reference "
                "bank), so every sentence is judged against every gold answer and no citation is relevant."
            ]
            * bool(ungated)
            + [
                f"{malformed[name]} yes/no answer(s) of the LLM were neither yes nor no when asked again: counted as no."
            ]
            * bool(malformed[name])
        )
    return said


def _changed_sentences(topics: list[str]) -> list[str]:
    if not topics:
        return []
    shown = ", ".join(topics[:5]) + (", ..." if len(topics) > 5 else "")
    return [
        f"The bank changed since the reports of {len(topics)} topic(s) ({shown}) were judged: its new or changed "
        "questions count as not covered until they are judged again."
    ]


@dataclass(frozen=True)
class ReportJudged:
    """One report as a source judged it: its kept sentences with what the source said, the bank as scored, and
    the options it was judged with (the one-report page, argue/report_page.py)."""

    sentences: list[SentenceJudged]
    bank: ScoredBank
    bank_name: str
    check_all: bool
    negatives: bool
    made_by: str


def report_judged(name: str, answer_id: int) -> ReportJudged | None:
    """The source's counted judgments of one report, or None where it has none."""
    report = _of_source(JudgedReport, name).filter(answer_id=answer_id).select_related("answer", "created_by").first()
    if report is None:
        return None
    bank = _scored_banks({(report.bank, report.answer.topic_id)})[(report.bank, report.answer.topic_id)]
    index_of = {answer_id: {kept.question.pk: kept.index for kept in bank.questions}}
    in_scope = _of_source(JudgedReport, name).filter(pk=report.pk).values("answer_id")
    sentences = _judged_sentences(name, in_scope, {answer_id: report.kept}, index_of)[answer_id]
    return ReportJudged(sentences, bank, report.bank, report.check_all, report.negatives, report.made_by)
