"""Reads of support labels: the methods and their scores.

A method's evaluated answers are the answers with at least one support label
of that method; its evaluated topics and runs are those of these answers.
Scores are fetched in four queries whatever the size (no query per answer)
and computed by support.scoring.
"""

from collections import defaultdict

from django.db.models import QuerySet

from assessor.models import Answer, Citation, Sentence
from assessor.scores import Scores
from support.models import SupportLabel
from support.scoring import UNJUDGED, SentenceLabel, method_scores

FETCH_CHUNK = 20_000


def support_methods_list() -> list[str]:
    """The names of the support methods that have labels, sorted."""
    return list(SupportLabel.objects.order_by("method").values_list("method", flat=True).distinct())


def method_require(*, method: str) -> None:
    """Raise LookupError, naming the methods that exist, unless this one has labels."""
    if not SupportLabel.objects.filter(method=method).exists():
        known = ", ".join(support_methods_list()) or "none"
        raise LookupError(f"no support labels for method {method!r}; methods with labels: {known}")


def method_answers(*, method: str) -> QuerySet[Answer]:
    """The answers with at least one label of the method."""
    labelled = SupportLabel.objects.filter(method=method).values("citation__sentence__answer_id")
    return Answer.objects.filter(id__in=labelled)


def support_scores(*, method: str, topics: list[str] | None = None, runs: list[str] | None = None) -> Scores:
    """Weighted support precision and recall of a method, per answer and per run.

    `topics` restricts the evaluated topics; `runs` restricts the runs shown
    (their means stay over all the method's evaluated topics).
    Raises LookupError when the method has no labels.
    """
    answers = method_answers(method=method).order_by()
    if topics is not None:
        answers = answers.filter(topic_id__in=topics)
    evaluated_topics = None
    if runs is not None:
        evaluated_topics = list(answers.values_list("topic_id", flat=True).distinct())
        answers = answers.filter(run__run_id__in=runs)

    answer_keys = {
        answer_id: (run, topic)
        for answer_id, run, topic in answers.values_list("id", "run__run_id", "topic_id").iterator(chunk_size=FETCH_CHUNK)
    }
    if not answer_keys:
        method_require(method=method)
    sentence_answer = dict(
        Sentence.objects.filter(answer__in=answers)
        .order_by()
        .values_list("id", "answer_id")
        .iterator(chunk_size=FETCH_CHUNK)
    )
    citing = set(
        Citation.objects.filter(position=0, sentence__answer__in=answers)
        .order_by()
        .values_list("sentence_id", flat=True)
        .iterator(chunk_size=FETCH_CHUNK)
    )
    first_labels = dict(
        SupportLabel.objects.filter(method=method, citation__position=0, citation__sentence__answer__in=answers)
        .order_by()
        .values_list("citation__sentence_id", "label")
        .iterator(chunk_size=FETCH_CHUNK)
    )

    sentences: dict[tuple[str, str], list[SentenceLabel]] = defaultdict(list)
    for answer_id in answer_keys:
        # An evaluated answer whose sentences are all unjudged still has a row (of zeros).
        sentences[answer_keys[answer_id]] = []
    for sentence_id, answer_id in sentence_answer.items():
        label = first_labels.get(sentence_id, UNJUDGED) if sentence_id in citing else None
        sentences[answer_keys[answer_id]].append(label)
    return method_scores(answers=sentences, topics=evaluated_topics)


def support_label_pairs(*, method: str) -> dict[int, int]:
    """citation id -> label (-1..2), for the method's labels on first citations."""
    rows = SupportLabel.objects.filter(method=method, citation__position=0).order_by().values_list("citation_id", "label")
    return dict(rows.iterator(chunk_size=FETCH_CHUNK))
