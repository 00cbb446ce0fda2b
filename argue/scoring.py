"""An ARGUE-style source's scores: each judged report's figures (argue.metrics) from the source's yes/no
judgments and the bank it was judged against, and each run's mean over the source's topics.

Only counted judgments are read (assessor.scoring.lifecycle): not those of open work or of a job still
running. A report's figures depend on nothing but its own judgments and its topic's bank, so a scope of
some answers is computed over those answers alone.
"""

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet

from argue.kinds import ARGUE, ARGUE_FAMILY, ARGUE_WORK, SCORE_FAMILY
from argue.metrics import METRICS, SentenceJudged, report_metrics
from argue.models import AnswerAttestation, JudgedReport, SupportAttestation
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
from assessor.scoring.scores import Scores, run_means
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
    uncited_counts: bool = False,
) -> Scores:
    """Raises LookupError when the source has no counted judged report."""
    reports = _of_source(JudgedReport, name)
    every_topic = sorted(set(reports.order_by().values_list("answer__topic_id", flat=True)))
    if not every_topic:
        raise LookupError(f"no counted ARGUE-style judgments under {name!r}")
    if topics is not None:
        reports = reports.filter(answer__topic_id__in=list(topics))
    if answers is not None:
        reports = reports.filter(answer_id__in=list(answers))
    rows = list(reports.values_list("answer_id", "answer__run__run_id", "answer__topic_id", "bank", "kept"))
    in_scope = reports.values("answer_id")
    kept = {answer_id: count for answer_id, _, _, _, count in rows}
    sentences = _kept_sentences(in_scope, kept)
    citations = _citations(name, in_scope)
    agreed = _agreed(name, in_scope)
    banks = {
        bank: bank_questions(bank, {topic for _, _, topic, name_, _ in rows if name_ == bank})
        for bank in {bank for _, _, _, bank, _ in rows}
    }
    per_topic: dict[tuple[str, str], dict[str, float]] = {}
    for answer_id, run_id, topic_id, bank, _ in rows:
        questions = banks[bank].get(topic_id, [])
        index_of = {question.pk: index for index, question in enumerate(questions)}
        judged = [
            SentenceJudged(
                citations=tuple(citations[sentence_id]),
                agrees=frozenset(
                    (index_of[question], answer_index)
                    for question, answer_index in agreed[sentence_id]
                    if question in index_of
                ),
            )
            for sentence_id in sentences[answer_id]
        ]
        per_topic[(run_id, topic_id)] = report_metrics(judged, questions, uncited_counts=uncited_counts)
    evaluated = sorted(set(topics) & set(every_topic)) if topics is not None else every_topic
    if answers is not None:
        evaluated = sorted({topic for _, _, topic, _, _ in rows})
    runs = sorted(set(Answer.objects.filter(topic_id__in=every_topic).values_list("run__run_id", flat=True)))
    return Scores(
        metrics=METRICS,
        per_topic=per_topic,
        run_means=run_means(per_topic, runs=runs, topics=evaluated, metrics=METRICS),
        topics=evaluated,
        runs=runs,
    )


def _kept_sentences(in_scope: AnswersInScope, kept: dict[int, int]) -> dict[int, list[int]]:
    """Each answer's kept sentences' ids, in order."""
    sentences: dict[int, list[int]] = defaultdict(list)
    for pk, answer_id, index in (
        Sentence.objects.filter(answer_id__in=in_scope)
        .order_by("answer_id", "index")
        .values_list("pk", "answer_id", "index")
    ):
        if index < kept[answer_id]:
            sentences[answer_id].append(pk)
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


def argue_scores(*, name: str, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
    """As kept (assessor.scoring.kept), or from the judgments when open work is counted."""
    if open_included():
        return argue_scores_from_labels(name=name)
    return kept_scores(family=SCORE_FAMILY, columns=(name,), runs=runs, per_topic=per_topic)


def compute(*, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None) -> Scores:
    """The registry's `ScoreFamily.compute`: columns are (ARGUE-style source name,)."""
    (name,) = columns
    return argue_scores_from_labels(name=name, topics=topics, answers=answers)


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
    return {
        (name,): open_work_sentences(open_work.get((name,), []), what=f"ARGUE-style judging into {name!r}")
        + job_sentences(jobs.get(name, []))
        + _changed_sentences(changed.get(name, []))
        for (name,) in sources
    }


def _changed_sentences(topics: list[str]) -> list[str]:
    if not topics:
        return []
    shown = ", ".join(topics[:5]) + (", ..." if len(topics) > 5 else "")
    return [
        f"The bank changed since the reports of {len(topics)} topic(s) ({shown}) were judged: its new or changed "
        "questions count as not covered until they are judged again."
    ]
