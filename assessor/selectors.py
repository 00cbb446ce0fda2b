"""Reads for the organizer pages: topics, runs, answers and their labels.

Every function here costs a fixed number of queries whatever the number of
rows: counts come from one grouped query each, related rows from one
prefetch each, and the pivoting is done in Python.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import import_module

from django.db.models import Count, Prefetch

from assessor.models import Answer, AssessorWork, Citation, Qrel, QrelSource, Run, Segment, Sentence, Topic
from assessor.scores import Scores
from assignment.models import AssignmentLabel
from nuggets.models import NuggetSet
from support.models import SupportLabel


def _grouped_counts(queryset, key: str) -> dict:
    return {row[key]: row["n"] for row in queryset.order_by().values(key).annotate(n=Count("pk"))}


# --- Topics -------------------------------------------------------------------


@dataclass
class TopicRow:
    topic: Topic
    relevant: list[int]  # relevant segments per source, in the order of `sources`
    answers: int
    nugget_sets: int
    assignment_labels: int
    support_labels: int


def qrel_source_names() -> list[str]:
    return list(QrelSource.objects.order_by("name").values_list("name", flat=True))


def topics_overview() -> tuple[list[str], list[TopicRow]]:
    """The topics with their counts; the first item names the qrels sources of the columns."""
    sources = qrel_source_names()
    relevant: dict[str, dict[str, int]] = defaultdict(dict)
    relevant_rows = (
        Qrel.objects.filter(grade__gte=Qrel.RELEVANT_MIN_GRADE)
        .order_by()
        .values("topic_id", "source__name")
        .annotate(n=Count("pk"))
    )
    for row in relevant_rows:
        relevant[row["topic_id"]][row["source__name"]] = row["n"]
    answers = _grouped_counts(Answer.objects.all(), "topic_id")
    nugget_sets = _grouped_counts(NuggetSet.objects.all(), "topic_id")
    assignment_labels = _grouped_counts(AssignmentLabel.objects.all(), "answer__topic_id")
    support_labels = _grouped_counts(SupportLabel.objects.all(), "citation__sentence__answer__topic_id")
    rows = [
        TopicRow(
            topic=topic,
            relevant=[relevant[topic.id].get(source, 0) for source in sources],
            answers=answers.get(topic.id, 0),
            nugget_sets=nugget_sets.get(topic.id, 0),
            assignment_labels=assignment_labels.get(topic.id, 0),
            support_labels=support_labels.get(topic.id, 0),
        )
        for topic in Topic.objects.all()
    ]
    return sources, rows


@dataclass
class SegmentRow:
    segment: Segment
    grades: list[int | None]  # per source, in the order of the page's sources; None = not judged


def topic_relevant_segments(*, topic: Topic, source: str | None = None) -> tuple[list[str], list[SegmentRow]]:
    """The segments judged relevant for the topic (by `source`, or by any source), with every source's grade.

    Sorted by the grade of `source` (or the best grade) then docid.
    """
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    for segment_id, source_name, grade in Qrel.objects.filter(topic=topic).values_list(
        "segment_id", "source__name", "grade"
    ):
        grades[segment_id][source_name] = grade
    sources = sorted({name for by_source in grades.values() for name in by_source})

    def sort_grade(by_source: dict[str, int]) -> int:
        return by_source.get(source, -1) if source else max(by_source.values())

    relevant_ids = [
        segment_id
        for segment_id, by_source in grades.items()
        if sort_grade(by_source) >= Qrel.RELEVANT_MIN_GRADE
    ]
    relevant_ids.sort(key=lambda segment_id: (-sort_grade(grades[segment_id]), segment_id))
    segments = Segment.objects.in_bulk(relevant_ids)
    rows = [
        SegmentRow(segment=segments[segment_id], grades=[grades[segment_id].get(name) for name in sources])
        for segment_id in relevant_ids
    ]
    return sources, rows


def topic_nugget_sets(*, topic: Topic) -> list[NuggetSet]:
    return list(
        NuggetSet.objects.filter(topic=topic)
        .select_related("created_by", "imported_from")
        .prefetch_related("nuggets")
        .order_by("name")
    )


# --- Answers --------------------------------------------------------------------


SUPPORT_CODES = {
    SupportLabel.Label.FS: "FS",
    SupportLabel.Label.PS: "PS",
    SupportLabel.Label.NS: "NS",
    SupportLabel.Label.UNJUDGED: "unjudged",
}


@dataclass
class SentenceView:
    sentence: Sentence
    citations: list[Citation]
    # (support method, FS/PS/NS/unjudged) of the first citation: the pair the metrics judge
    support: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ConditionLabels:
    nuggets: str  # nugget set name
    assigner: str
    # (nugget position, nugget text, label), in nugget order
    labels: list[tuple[int, str, str]]


@dataclass
class AnswerView:
    answer: Answer
    sentences: list[SentenceView]
    conditions: list[ConditionLabels]


def answers_queryset():
    """Answers with their run, topic, sentences and citations, in four queries for any number."""
    citations = Prefetch("citations", queryset=Citation.objects.order_by("position"))
    sentences = Prefetch("sentences", queryset=Sentence.objects.order_by("index").prefetch_related(citations))
    return Answer.objects.select_related("run", "topic").prefetch_related(sentences)


def answer_views(answers: Sequence[Answer]) -> list[AnswerView]:
    """Views of answers fetched with `answers_queryset`, with the labels of every condition and method."""
    answer_ids = [answer.pk for answer in answers]
    by_answer: dict[int, dict[tuple[str, str], list[tuple[int, str, str]]]] = defaultdict(lambda: defaultdict(list))
    label_rows = (
        AssignmentLabel.objects.filter(answer_id__in=answer_ids)
        .order_by()
        .values_list("answer_id", "nugget__nugget_set__name", "assigner", "nugget__position", "nugget__text", "label")
    )
    for answer_id, set_name, assigner, position, text, label in label_rows:
        by_answer[answer_id][(set_name, assigner)].append((position, text, label))
    support: dict[int, list[tuple[str, str]]] = defaultdict(list)
    support_rows = (
        SupportLabel.objects.filter(citation__sentence__answer_id__in=answer_ids, citation__position=0)
        .order_by("method")
        .values_list("citation_id", "method", "label")
    )
    for citation_id, method, label in support_rows:
        support[citation_id].append((method, SUPPORT_CODES[label]))
    views = []
    for answer in answers:
        sentence_views = []
        for sentence in answer.sentences.all():
            citations = list(sentence.citations.all())
            first = citations[0].pk if citations else None
            sentence_views.append(SentenceView(sentence=sentence, citations=citations, support=support.get(first, [])))
        conditions = [
            ConditionLabels(nuggets=set_name, assigner=assigner, labels=sorted(labels))
            for (set_name, assigner), labels in sorted(by_answer[answer.pk].items())
        ]
        views.append(AnswerView(answer=answer, sentences=sentence_views, conditions=conditions))
    return views


# --- Runs -------------------------------------------------------------------------


def runs_overview() -> list[Run]:
    return list(Run.objects.annotate(answer_count=Count("answers")).order_by("run_id"))


def run_answers(*, run: Run) -> list[Answer]:
    return list(
        Answer.objects.filter(run=run)
        .select_related("topic")
        .annotate(sentence_count=Count("sentences"))
        .order_by("topic_id")
    )


@dataclass
class ScoreSection:
    """One condition's or method's scores of one run, for the run page."""

    title: str
    metrics: tuple[str, ...]
    rows: list[tuple[str, list[float]]]  # (topic id, values)
    mean: list[float] | None

    @property
    def row_cells(self) -> list[tuple[str, list[tuple[str, float]]]]:
        return [(topic_id, list(zip(self.metrics, values))) for topic_id, values in self.rows]

    @property
    def mean_cells(self) -> list[tuple[str, float]]:
        return list(zip(self.metrics, self.mean or []))


def _optional(module: str, name: str):
    """A function of another part of the project, or None while that part is not there."""
    try:
        return getattr(import_module(module), name)
    except (ImportError, AttributeError):
        return None


def nugget_conditions() -> list[tuple[str, str]] | None:
    conditions_list = _optional("assignment.selectors", "conditions_list")
    return None if conditions_list is None else list(conditions_list())


def support_methods() -> list[str] | None:
    support_methods_list = _optional("support.selectors", "support_methods_list")
    return None if support_methods_list is None else list(support_methods_list())


def nugget_scores_of(*, nuggets: str, assigner: str, runs: list[str] | None = None) -> Scores:
    nugget_scores = _optional("assignment.selectors", "nugget_scores")
    if nugget_scores is None:
        raise LookupError("nugget scores are not available yet")
    return nugget_scores(nuggets=nuggets, assigner=assigner, runs=runs)


def support_scores_of(*, method: str, runs: list[str] | None = None) -> Scores:
    support_scores = _optional("support.selectors", "support_scores")
    if support_scores is None:
        raise LookupError("support scores are not available yet")
    return support_scores(method=method, runs=runs)


def _score_section(title: str, scores: Scores, run_id: str) -> ScoreSection:
    rows = [
        (topic_id, [values.get(metric, 0.0) for metric in scores.metrics])
        for (score_run, topic_id), values in sorted(scores.per_topic.items())
        if score_run == run_id
    ]
    means = scores.run_means.get(run_id)
    mean = [means.get(metric, 0.0) for metric in scores.metrics] if means else None
    return ScoreSection(title=title, metrics=scores.metrics, rows=rows, mean=mean)


def run_score_sections(*, run: Run) -> tuple[list[ScoreSection], list[str]]:
    """The run's per-topic scores under every nugget condition and support method.

    The second item lists what could not be shown and why (a part not
    installed yet, a condition without labels).
    """
    sections: list[ScoreSection] = []
    missing: list[str] = []
    conditions = nugget_conditions()
    if conditions is None:
        missing.append("nugget scores are not available yet")
    for nuggets, assigner in conditions or []:
        title = f"{nuggets} nuggets / {assigner} assignment"
        try:
            scores = nugget_scores_of(nuggets=nuggets, assigner=assigner, runs=[run.run_id])
            sections.append(_score_section(title, scores, run.run_id))
        except LookupError as exc:
            missing.append(f"{title}: {exc}")
    methods = support_methods()
    if methods is None:
        missing.append("support scores are not available yet")
    for method in methods or []:
        title = f"{method} support"
        try:
            sections.append(_score_section(title, support_scores_of(method=method, runs=[run.run_id]), run.run_id))
        except LookupError as exc:
            missing.append(f"{title}: {exc}")
    return sections, missing


# --- Leaderboards ------------------------------------------------------------------


@dataclass
class LeaderboardRow:
    rank: int
    run_id: str
    values: list[float]
    metrics: tuple[str, ...] = ()

    @property
    def cells(self) -> list[tuple[str, float]]:
        return list(zip(self.metrics, self.values))


def leaderboard_rows(scores: Scores, *, sort: str, descending: bool) -> list[LeaderboardRow]:
    """The runs' means, sorted by a metric (or by `run`); ties keep run-id order."""
    run_ids = sorted(scores.run_means)
    if sort in scores.metrics:
        run_ids.sort(key=lambda run_id: scores.run_means[run_id].get(sort, 0.0), reverse=descending)
    elif descending:
        run_ids.reverse()
    return [
        LeaderboardRow(
            rank=rank,
            run_id=run_id,
            values=[scores.run_means[run_id].get(metric, 0.0) for metric in scores.metrics],
            metrics=scores.metrics,
        )
        for rank, run_id in enumerate(run_ids, start=1)
    ]


# --- Assessors ---------------------------------------------------------------------


def assessor_queue(*, user) -> list[AssessorWork]:
    work = AssessorWork.objects.filter(assessor=user).select_related("topic")
    return list(work.order_by("status", "topic_id", "kind"))


def collection_counts() -> dict[str, int]:
    return {
        "topics": Topic.objects.count(),
        "runs": Run.objects.count(),
        "answers": Answer.objects.count(),
    }
