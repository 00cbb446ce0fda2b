"""Reads for the organizer pages: topics, runs, answers and their labels.

Every function here costs a fixed number of queries whatever the number of
rows: counts come from one grouped query each, related rows from one
prefetch each, and the pivoting is done in Python.
"""

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from html import escape
from typing import NamedTuple

from django.core.cache import cache
from django.db.models import BooleanField, Count, ExpressionWrapper, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils.safestring import SafeString, mark_safe

from assessor.collection.tables import (
    BADGE_STATE_NOTES,
    badges_html,
    cell,
    id_url_maker,
    rows_html,
    score_cell,
    score_text,
    sentence_html,
    topic_url_maker,
    url_maker,
)
from assessor.models import Answer, KeptSource, Qrel, QrelSource, Run, Segment, Sentence, Topic
from assessor.models.keys import published_id
from assessor.models.scope import scoped_campaign
from assessor.registry import Badge, BadgeRow, TopicCount, registry
from assessor.scoring.kept import (
    columns_sorted,
    family_columns,
    kept_scores_of_run,
    source_columns,
    source_name,
)
from assessor.scoring.lifecycle import open_included, unfinished_job_ids
from assessor.scoring.scores import Scores, ranked_run_ids, shared_ranks


def _grouped_counts(queryset, key: str) -> dict:
    # COUNT(*), not COUNT(id): PostgreSQL then counts from the key's index alone (an index-only scan).
    return {row[key]: row["n"] for row in queryset.order_by().values(key).annotate(n=Count("*"))}


# --- Topics -------------------------------------------------------------------


@dataclass
class TopicRow:
    topic: Topic
    relevant: list[int]  # relevant segments per source, in the order of `sources`
    answers: int
    counts: list[int]  # the apps' columns, in the order of `topic_count_titles()`


def qrel_source_names() -> list[str]:
    return list(QrelSource.objects.order_by("name").values_list("name", flat=True))


def _topic_counts() -> list[TopicCount]:
    """The apps' columns of the topics page, of the campaign's families."""
    return registry.used_in(scoped_campaign(), registry.topic_counts)


def topic_count_titles() -> list[str]:
    return [count.title for count in _topic_counts()]


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
    # Answers are reached through their topic's campaign: counted for the campaign's topics only, not every
    # campaign's (a subquery, so the same one query; each topic's answers read from the topic index alone).
    answers = _grouped_counts(Answer.objects.filter(topic_id__in=Topic.objects.values("pk")), "topic_id")
    columns = [count.counts() for count in _topic_counts()]
    rows = [
        TopicRow(
            topic=topic,
            relevant=[relevant[topic.id].get(source, 0) for source in sources],
            answers=answers.get(topic.id, 0),
            counts=[column.get(topic.id, 0) for column in columns],
        )
        for topic in Topic.objects.all()
    ]
    return sources, rows


def topic_rows_html(rows: Sequence[TopicRow]) -> SafeString:
    """The topics page's rows (one per topic, 301 at TREC scale), rendered in Python."""
    topic_url = topic_url_maker()
    return rows_html(
        [
            cell(row.topic.published_id, css="mono", href=topic_url(row.topic.id)),
            cell(row.topic.query),
            *(cell(count, css="num") for count in row.relevant),
            cell(row.answers, css="num"),
            *(cell(count, css="num") for count in row.counts),
        ]
        for row in rows
    )


@dataclass
class SegmentRow:
    segment: Segment
    grades: list[int | None]  # per source, in the order of the page's sources; None = not judged


class RelevantSegments(NamedTuple):
    sources: list[str]  # the qrels sources that graded the topic's segments
    rows: list[SegmentRow]
    provisional: set[str]  # sources whose grades here a job still writes (not counted yet)


def topic_relevant_segments(*, topic: Topic, source: str | None = None) -> RelevantSegments:
    """The segments judged relevant for the topic (by `source`, or by any source), with every source's grade.

    Sorted by the grade of `source` (or the best grade) then docid.
    """
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    provisional: set[str] = set()
    rows = Qrel.objects.filter(topic=topic).annotate(
        provisional=ExpressionWrapper(Q(job_id__in=unfinished_job_ids()), output_field=BooleanField())
    )
    for segment_id, qrels_source, grade, made_by_running_job in rows.values_list(
        "segment_id", "source__name", "grade", "provisional"
    ):
        grades[segment_id][qrels_source] = grade
        if made_by_running_job:
            provisional.add(qrels_source)
    sources = sorted({name for by_source in grades.values() for name in by_source})

    def sort_grade(by_source: dict[str, int]) -> int:
        return by_source.get(source, -1) if source else max(by_source.values())

    relevant_ids = [
        segment_id for segment_id, by_source in grades.items() if sort_grade(by_source) >= Qrel.RELEVANT_MIN_GRADE
    ]
    relevant_ids.sort(key=lambda segment_id: (-sort_grade(grades[segment_id]), segment_id))
    segments = Segment.objects.in_bulk(relevant_ids)
    return RelevantSegments(
        sources=sources,
        rows=[
            SegmentRow(segment=segments[segment_id], grades=[grades[segment_id].get(name) for name in sources])
            for segment_id in relevant_ids
        ],
        provisional=provisional,
    )


@dataclass
class Panel:
    template: str
    context: dict
    title: str = ""
    anchor: str = ""


def topic_panels(*, topic: Topic) -> list[Panel]:
    """The sections the apps add to the topic page (its nugget sets...), those of the campaign's families."""
    return [
        Panel(template=panel.template, context=panel.context(topic), title=panel.title, anchor=panel.anchor)
        for panel in registry.used_in(scoped_campaign(), registry.topic_panels)
    ]


def run_panels(*, run: Run) -> list[Panel]:
    """The sections the apps add to a run's page, those of the campaign's families with something to say of it."""
    panels = []
    for panel in registry.used_in(scoped_campaign(), registry.run_panels):
        context = panel.context(run)
        if context is not None:
            panels.append(Panel(template=panel.template, context=context))
    return panels


# --- Answers --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SentenceRow:
    """What the topic page shows of a sentence (plain rows: hundreds a page, no model instances)."""

    id: int
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class CitationRow:
    segment_id: str
    reference_rank: int | None


@dataclass
class SentenceView:
    sentence: SentenceRow
    citations: list[CitationRow]
    badges: list[Badge] = field(default_factory=list)  # the apps' labels of the sentence


@dataclass
class AnswerView:
    answer: Answer
    sentences: list[SentenceView]
    rows: list[BadgeRow]  # the apps' labels of the answer (a row per condition)

    def badge_states(self) -> set[str]:
        """The states (provisional, stale) of the answer's badges, for the page's legend."""
        badges = [b for view in self.sentences for b in view.badges] + [b for row in self.rows for b in row.badges]
        return {badge.state for badge in badges if badge.state}

    def html(self, run_url: Callable[[object], str]) -> str:
        """The answer as the topic page shows it: its run, length, sentences (or text) and label rows.

        Rendered in Python, as the large tables are: a page shows 25 answers of about ten sentences
        and a thousand label badges, which a template loop spends most of the page's time on."""
        run_id = self.answer.run.run_id
        head = (
            f'<h3><a href="{escape(run_url(run_id))}">{escape(run_id)}</a> '
            f'<span class="muted small">L = {self.answer.words} words</span></h3>'
        )
        if self.sentences:
            body = '<ol class="sentences" start="0">{}</ol>'.format(
                "".join(
                    sentence_html(
                        view.sentence.text,
                        [(citation.segment_id, citation.reference_rank) for citation in view.citations],
                        view.badges,
                    )
                    for view in self.sentences
                )
            )
        else:
            body = f'<p class="small">{escape(self.answer.text)}</p>'
        labels = "".join(
            f'<div class="labels"><span class="condition">{escape(row.caption)}</span> {badges_html(row.badges)}</div>'
            for row in self.rows
        )
        return f'<article class="answer">{head}{body}{labels}</article>'


def badge_legend(views: Sequence[AnswerView]) -> list[tuple[str, str]]:
    """(state, what it means) for the badge states on these answers (`BADGE_STATE_NOTES`)."""
    states: set[str] = set().union(*(view.badge_states() for view in views))
    return [(state, BADGE_STATE_NOTES[state]) for state in sorted(states)]


def answers_html(views: Sequence[AnswerView]) -> SafeString:
    """The topic page's answers, each escaped part by part (`AnswerView.html`)."""
    run_url = url_maker("collection:run")
    return mark_safe("".join(view.html(run_url) for view in views))  # noqa: S308 - every part is escaped


def answers_queryset():
    """Answers with their run and topic; `answer_views` reads their sentences and citations."""
    return Answer.objects.select_related("run", "topic")


def answer_views(answers: Sequence[Answer]) -> list[AnswerView]:
    """Views of answers with their sentences, citations and the labels every app shows on them,
    in a fixed number of queries (the sentences with their citations read as plain rows, in one query)."""
    answer_ids = [answer.pk for answer in answers]
    sentences: dict[int, list[SentenceView]] = defaultdict(list)
    by_id: dict[int, SentenceView] = {}
    rows = Sentence.objects.filter(answer_id__in=answer_ids).order_by("answer_id", "index", "citations__position")
    for sentence_id, answer_id, index, text, segment_id, rank in rows.values_list(
        "id", "answer_id", "index", "text", "citations__segment_id", "citations__reference_rank"
    ):
        # A sentence comes once per citation (or once, without any), its citations in order.
        view = by_id.get(sentence_id)
        if view is None:
            view = by_id[sentence_id] = SentenceView(SentenceRow(id=sentence_id, index=index, text=text), [])
            sentences[answer_id].append(view)
        if segment_id is not None:
            view.citations.append(CitationRow(segment_id=segment_id, reference_rank=rank))
    answer_rows: dict[int, list[BadgeRow]] = defaultdict(list)
    for provider in registry.answer_badges:
        if provider.sentence_badges is not None:
            for sentence_id, badges in provider.sentence_badges(answer_ids).items():
                if sentence_id in by_id:
                    by_id[sentence_id].badges.extend(badges)
        if provider.answer_rows is not None:
            for answer_id, badge_rows in provider.answer_rows(answer_ids).items():
                answer_rows[answer_id].extend(badge_rows)
    return [
        AnswerView(answer=answer, sentences=sentences.get(answer.pk, []), rows=answer_rows.get(answer.pk, []))
        for answer in answers
    ]


# --- Runs -------------------------------------------------------------------------


def runs_overview() -> list[Run]:
    """The runs with their number of answers (`answer_count`), counted by run id alone."""
    # The campaign's runs' answers only (see topics_overview).
    counts = _grouped_counts(Answer.objects.filter(run_id__in=Run.objects.values("pk")), "run_id")
    runs = list(Run.objects.order_by("run_id"))
    for run in runs:
        run.answer_count = counts.get(run.pk, 0)  # type: ignore[attr-defined]
    return runs


class RunAnswerRow(NamedTuple):
    """A row of the run page's answers table: what it shows of an answer, read without its text."""

    topic_id: str
    query: str
    sentence_count: int
    words: int
    answer_id: int


def run_answers(*, run: Run) -> list[RunAnswerRow]:
    # Each answer's sentences counted by a subquery on the sentences' answer index alone (an index-only scan on
    # PostgreSQL), not by grouping the run's answers joined to every sentence.
    sentence_count = (
        Sentence.objects.filter(answer_id=OuterRef("pk")).order_by().values("answer_id").annotate(n=Count("*"))
    )
    return [
        RunAnswerRow(*row)
        for row in Answer.objects.filter(run=run)
        .annotate(sentence_count=Coalesce(Subquery(sentence_count.values("n")), 0))
        .order_by("topic_id")
        .values_list("topic_id", "topic__query", "sentence_count", "words", "id")
    ]


def run_answer_rows_html(answers: Sequence[RunAnswerRow]) -> SafeString:
    """The run page's answers table: topic, query, sentences, words and the answer's page of every source's labels
    (a row per topic the run answers)."""
    topic_url = topic_url_maker()
    answer_url = id_url_maker("collection:answer")
    return rows_html(
        [
            cell(published_id(answer.topic_id), css="mono", href=topic_url(answer.topic_id)),
            cell(answer.query),
            cell(answer.sentence_count, css="num"),
            cell(answer.words, css="num"),
            cell("labels by source", css="answer-link", href=answer_url(answer.answer_id)),
        ]
        for answer in answers
    )


@dataclass
class ScoreSection:
    """One condition's or method's scores of one run, for the run page."""

    title: str
    metrics: tuple[str, ...]
    rows: list[tuple[str, list[float]]]  # (topic id, values)
    mean: list[float] | None
    notes: list[str] = field(default_factory=list)  # what keeps the scores from being final
    # The run's answer of each topic: a topic's row links to the answer's page of every source's labels.
    answer_ids: dict[str, int] = field(default_factory=dict)

    @cached_property
    def rows_html(self) -> SafeString:
        """The per-topic rows (hundreds of them at TREC scale), rendered in Python."""
        topic_url, answer_url = topic_url_maker(), id_url_maker("collection:answer")
        return rows_html(
            [
                cell(published_id(topic_id), css="mono", href=topic_url(topic_id)),
                *(score_cell(metric, value) for metric, value in zip(self.metrics, values, strict=False)),
                _answer_link_cell(self.answer_ids.get(topic_id), answer_url),
            ]
            for topic_id, values in self.rows
        )

    @property
    def mean_texts(self) -> list[str]:
        return [
            score_text(metric, value, mean=True) for metric, value in zip(self.metrics, self.mean or [], strict=False)
        ]


def _score_section(title: str, scores: Scores, run_id: str) -> ScoreSection:
    rows = [
        (topic_id, [values.get(metric, 0.0) for metric in scores.metrics])
        for (score_run, topic_id), values in sorted(scores.per_topic.items())
        if score_run == run_id
    ]
    means = scores.run_means.get(run_id)
    mean = [means.get(metric, 0.0) for metric in scores.metrics] if means else None
    return ScoreSection(title=title, metrics=scores.metrics, rows=rows, mean=mean)


# A run's section under a kept source, rendered, is kept in each process's cache under the source's stamp (made
# anew by every refresh of the source): a view after any change reads and renders that source's rows again.
RUN_SECTION_SECONDS = 3600


def _run_section_key(source: KeptSource, run: Run) -> str:
    return f"collection:run-section:{source.pk}:{source.stamp}:{run.pk}"


def _kept_run_sections(run: Run, answer_ids: dict[str, int]) -> dict[tuple[str, tuple[str, ...]], ScoreSection]:
    """Every kept source's section of the run, without notes: from the cache, or read and rendered (and kept), each
    topic's row linking to the run's answer (`answer_ids`: its id by topic)."""
    sources = {(source.family, source_columns(source.name)): source for source in KeptSource.objects.all()}
    # A source without a stamp (never refreshed) is read every time.
    keys = {name: _run_section_key(source, run) for name, source in sources.items() if source.stamp}
    cached = cache.get_many(list(keys.values()))
    sections = {name: cached[key] for name, key in keys.items() if key in cached}
    unread = [source for name, source in sources.items() if name not in sections]
    if unread:
        families = {family.name: family for family in registry.score_families}
        for name, scores in kept_scores_of_run(run.run_id, sources=unread).items():
            family = families.get(name[0])
            if family is None:
                continue
            section = _score_section(family.source(name[1]).title, scores, run.run_id)
            section.answer_ids = answer_ids
            section.rows_html  # noqa: B018  (rendered now, so that it is kept rendered)
            sections[name] = section
            if name in keys:
                cache.set(keys[name], section, RUN_SECTION_SECONDS)
    return sections


def _answer_link_cell(answer_id: int | None, answer_url: Callable[[int], str]) -> str:
    """A per-topic row's last cell: the run's answer's page of every judge's labels, where the run answers it."""
    if answer_id is None:
        return "<td></td>"
    return f'<td><a class="small answer-link" href="{escape(answer_url(answer_id))}">labels</a></td>'


def run_score_sections(*, run: Run) -> tuple[list[ScoreSection], list[str]]:
    """The run's per-topic scores under every condition and method the apps score.

    The second item lists what could not be shown and why (a condition without labels...).
    """
    sections: list[ScoreSection] = []
    missing: list[str] = []
    # The kept sections of every source in one read; with open work counted, each source computes its own.
    included = open_included()
    answer_ids = dict(Answer.objects.filter(run=run).values_list("topic_id", "id"))
    kept = {} if included else _kept_run_sections(run, answer_ids)
    for family in registry.score_families:
        # The kept sources are those just read (`family_columns` would read them again).
        listed = (
            family_columns(family)
            if included
            else columns_sorted(source_name(columns) for name, columns in kept if name == family.name)
        )
        notes = family.notes(listed)
        for columns in listed:
            source = family.source(columns)
            try:
                section = kept.get((family.name, columns))
                if section is None:
                    section = _score_section(source.title, source.scores(runs=[run.run_id]), run.run_id)
                    section.answer_ids = answer_ids
                section.notes = notes[columns]
                sections.append(section)
            except LookupError as exc:
                missing.append(f"{source.title}: {exc}")
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
        return list(zip(self.metrics, self.values, strict=False))


def leaderboard_rows_html(rows: Sequence[LeaderboardRow]) -> SafeString:
    """A leaderboard's rows: rank, the run's link, its means (a mean length in words with one decimal)."""
    run_url = url_maker("collection:run")
    return rows_html(
        [
            cell(row.rank, css="num"),
            cell(row.run_id, href=run_url(row.run_id)),
            *(score_cell(metric, value, mean=True) for metric, value in row.cells),
        ]
        for row in rows
    )


def leaderboard_rows(scores: Scores, *, sort: str, descending: bool) -> list[LeaderboardRow]:
    """The runs' means, sorted by a metric (or by `run`), by the one ranking rule of `ranked_run_ids`."""
    metric = sort if sort in scores.metrics else None
    run_ids = ranked_run_ids(scores.run_means, metric=metric, descending=descending)
    if metric is None:
        ranks = list(range(1, len(run_ids) + 1))
    else:
        ranks = shared_ranks([scores.run_means[run_id].get(metric, 0.0) for run_id in run_ids])
    return [
        LeaderboardRow(
            rank=rank,
            run_id=run_id,
            values=[scores.run_means[run_id].get(metric, 0.0) for metric in scores.metrics],
            metrics=scores.metrics,
        )
        for rank, run_id in zip(ranks, run_ids, strict=False)
    ]


# --- Assessors ---------------------------------------------------------------------


def collection_counts() -> dict[str, int]:
    return {
        "topics": Topic.objects.count(),
        "runs": Run.objects.count(),
        "answers": Answer.objects.count(),
    }
