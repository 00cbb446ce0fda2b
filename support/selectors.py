"""Reads of support labels: the methods and their scores.

A method's evaluated answers are the answers with at least one support label
of that method; its evaluated topics and runs are those of these answers.
Scores are fetched in three queries whatever the size (no query per answer):
the database counts per answer, support.scoring computes.
"""

from collections import defaultdict
from collections.abc import Sequence

from django.db.models import Count, Q, QuerySet

from assessor.models import Answer, AssessorWork, Citation, Sentence
from assessor.scoring.kept import kept_columns, kept_scores
from assessor.scoring.lifecycle import (
    job_sentences,
    jobs_not_final_by,
    labels_counted,
    open_included,
    open_work_by,
    open_work_sentences,
)
from assessor.scoring.scores import IN_LIST_LIMIT, NARROW_TOPICS, Scores
from support.kinds import AUTO_SUPPORT, SUPPORT_POSTEDIT, SUPPORT_SCRATCH
from support.models import SupportLabel
from support.scoring import SUPPORT_SCORE, SentenceLabel, method_scores

FAMILY = "methods"  # the registered score family of the support methods (support.parts)
WORK_KINDS = (SUPPORT_SCRATCH, SUPPORT_POSTEDIT)


def counted_labels() -> QuerySet[SupportLabel]:
    """Every label the scores count (assessor.scoring.lifecycle): not of open work or a running job."""
    return labels_counted(SupportLabel.objects.all())


def support_methods_list() -> list[str]:
    """The names of the support methods that have scores, sorted (the kept list, or from the labels
    when open work is counted)."""
    if open_included():
        return support_methods_from_labels()
    return [name for (name,) in kept_columns(FAMILY)]


def support_methods_from_labels() -> list[str]:
    """The names of the support methods that have labels, sorted."""
    return list(counted_labels().order_by("method").values_list("method", flat=True).distinct())


def method_require(*, method: str) -> None:
    """Raise LookupError, naming the methods that exist, unless this one has labels."""
    if not counted_labels().filter(method=method).exists():
        known = ", ".join(support_methods_list()) or "none"
        raise LookupError(f"no support labels for method {method!r}; methods with labels: {known}")


def support_scores(
    *, method: str, topics: list[str] | None = None, runs: list[str] | None = None, per_topic: bool = True
) -> Scores:
    """Weighted support precision and recall of a method, per answer and per run, as kept
    (assessor.scoring.kept).

    `topics` restricts the evaluated topics (computed from the labels); `runs`
    restricts the runs shown (their means stay over all the method's evaluated
    topics); `per_topic=False` reads the runs' means only. With open work
    counted, the scores are computed from the labels on request.
    Raises LookupError when the method has no labels.
    """
    if open_included() or topics is not None:
        return support_scores_from_labels(method=method, topics=topics, runs=runs)
    try:
        return kept_scores(family=FAMILY, columns=(method,), runs=runs, per_topic=per_topic)
    except LookupError:
        method_require(method=method)
        raise


def _labels_in_scope(*, method: str, topics: list[str] | None, answer_ids: list[int] | None) -> QuerySet[SupportLabel]:
    """The method's counted labels on the topics' and the answers' citations (every one when None)."""
    labels = counted_labels().filter(method=method)
    if topics is not None and len(topics) <= NARROW_TOPICS:
        # The topics' citations first, then their labels through the (method, citation) index: through
        # the join on the answers' topic, SQLite walks every label of the method instead.
        labels = labels.filter(
            citation_id__in=Citation.objects.filter(sentence__answer__topic_id__in=topics).values("id")
        )
    elif topics is not None:
        labels = labels.filter(citation__sentence__answer__topic_id__in=topics)
    if answer_ids is not None:
        # The answers' citations first, then their labels through the (method, citation) index, as above.
        labels = labels.filter(citation_id__in=Citation.objects.filter(sentence__answer_id__in=answer_ids).values("id"))
    return labels


def support_scores_from_labels(
    *, method: str, topics: list[str] | None = None, runs: list[str] | None = None, answer_ids: list[int] | None = None
) -> Scores:
    """Weighted support precision and recall of a method computed from its labels, per answer and per run.

    `topics` restricts the evaluated topics; `runs` restricts the runs shown
    (their means stay over all the method's evaluated topics); `answers`
    restricts the answers scored.
    Raises LookupError when the method has no labels. Three queries, the
    database counting per answer, so that a few rows per answer come back.
    """
    labels = _labels_in_scope(method=method, topics=topics, answer_ids=answer_ids)
    counts = {str(value): Count("id", filter=Q(citation__position=0, label=value)) for value in SUPPORT_SCORE}
    # Every answer with a label of the method, with the labels of its first citations counted by value.
    judged = {
        answer_id: dict(zip(SUPPORT_SCORE, ns, strict=False))
        for answer_id, *ns in labels.order_by()
        .values("citation__sentence__answer_id")
        .annotate(**counts)
        .values_list("citation__sentence__answer_id", *counts)
    }
    if not judged:
        method_require(method=method)

    answers = Answer.objects.filter(id__in=judged) if len(judged) <= IN_LIST_LIMIT else Answer.objects.all()
    answer_keys = {
        answer_id: (run, topic)
        for answer_id, run, topic in answers.order_by().values_list("id", "run__run_id", "topic_id")
        if answer_id in judged
    }
    evaluated_topics = sorted({topic for _, topic in answer_keys.values()})
    if runs is not None:
        shown = set(runs)
        answer_keys = {answer_id: key for answer_id, key in answer_keys.items() if key[0] in shown}
    # Sentences without any citation, per answer, read by topic (a short IN list), or by answer for some answers.
    sentences_read = Sentence.objects.filter(answer__topic_id__in=evaluated_topics)
    if answer_ids is not None and len(answer_keys) <= IN_LIST_LIMIT:
        sentences_read = Sentence.objects.filter(answer_id__in=list(answer_keys))
    uncited = dict(
        sentences_read.filter(citations__isnull=True)
        .order_by()
        .values("answer_id")
        .annotate(n=Count("id"))
        .values_list("answer_id", "n")
    )

    sentences: dict[tuple[str, str], list[SentenceLabel]] = {}
    for answer_id, key in answer_keys.items():
        # The metrics do not depend on the sentences' order: the labels by value, then the uncited ones.
        by_value = judged[answer_id]
        sentences[key] = [value for value, n in by_value.items() for _ in range(n)] + [None] * uncited.get(answer_id, 0)
    return method_scores(answers=sentences, topics=evaluated_topics)


def method_compute(*, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None) -> Scores:
    """The registry's `ScoreFamily.compute` of the support methods: columns are (method,)."""
    (method,) = columns
    return support_scores_from_labels(
        method=method,
        topics=list(topics) if topics is not None else None,
        answer_ids=list(answers) if answers is not None else None,
    )


def method_job_scope(job_id: int) -> dict[tuple[str, ...], set[str]]:
    """The methods and topics a job's labels are in."""
    scope: dict[tuple[str, ...], set[str]] = defaultdict(set)
    rows = (
        SupportLabel.objects.filter(job_id=job_id)
        .order_by()
        .values_list("method", "citation__sentence__answer__topic_id")
        .distinct()
    )
    for method, topic in rows:
        scope[(method,)].add(topic)
    return scope


def method_work_scope(work: AssessorWork) -> list[tuple[str, ...]]:
    """The method a support work's submit or reopening changes: the one its labels go into."""
    if work.kind in WORK_KINDS and work.source is not None:
        return [(work.source.name,)]
    return []


def support_label_pairs(*, method: str) -> dict[int, int]:
    """citation id -> label (-1..2), for the method's labels on first citations."""
    labels = counted_labels().filter(method=method, citation__position=0).order_by()
    return dict(labels.values_list("citation_id", "label"))


def method_notes(*, method: str) -> list[str]:
    """What keeps a method's scores from being final: open work and running or partial jobs."""
    return methods_notes([(method,)])[(method,)]


def methods_notes(methods: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[str]]:
    """`method_notes` of many methods in two queries whatever their number."""
    names = sorted({method for (method,) in methods})
    open_work = open_work_by(AssessorWork.objects.filter(kind__in=WORK_KINDS, source__name__in=names), "source__name")
    jobs = jobs_not_final_by(kind=AUTO_SUPPORT, names=names)
    return {
        (method,): open_work_sentences(open_work.get((method,), []), what=f"Support judging into {method!r}")
        + job_sentences(jobs.get(method, []))
        for (method,) in methods
    }
