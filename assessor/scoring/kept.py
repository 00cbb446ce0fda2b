"""Kept scores: stored per answer and per run, refreshed by the writes that change them.

What is scored stays where it lives (assessor.scoring.lifecycle.labels_counted and
the apps' scoring.py): a refresh asks the source's family (the registry's
`ScoreFamily.compute`) for the scores of the answers in scope, from their
labels, and replaces the kept rows of that scope, then the sums of the runs
whose rows changed. A write calls `scores_refresh` after it, inside its own
transaction, with the narrowest scope it knows: one label save refreshes one
answer and its run's sums, a submit the sources its work's labels go into in
its topic, a finished job the sources and topics it labelled, an import the
sources and topics it wrote. Sources are listed from the kept source table,
never by reading the labels (only a rebuild does).

A run's mean is its sum divided by the number of the source's evaluated
topics, which is kept on the source: a topic that becomes evaluated changes
every run's mean without rewriting every run's row. Sums are kept exact, as the
sum of the kept values' fractions (assessor.scoring.exact): a refresh adds the
rows it writes and takes away those it replaces, reading no other row, and a
mean is that sum over the topics rounded once, so the means equal the
from-labels ones (`run_means`) exactly, ties included.

Every refresh gives its source a new random stamp (KeptSource.stamp): what is
derived from a source and kept elsewhere (a meta-evaluation comparison) is kept
under the stamp and so known stale once the source changed; the registry's stamp
listeners hear of the change after the commit.

The kept figures are the finished work's. The organizers' open-work view
(assessor.site.open_work) is computed from the labels on request, as before.

A job's end makes its labels count and refreshes its scope in one transaction, on the job's critical path. A
family may read ahead what that refresh will read (`ScoreFamily.job_prepare`), while the job's last items are still
out (`scores_prepare_job`, called by the job engine), and keep it in the process; its `compute` at the job's end
(inside `job_ending`) then uses what still stands of it, re-reading only what may have changed since. For a source
kept from the job's end on, the rows that read gives are written then too, under a hidden source, and the end writes
only those that differ (assessor.scoring.written_ahead).
"""

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from functools import partial

from django.db import connections, router, transaction
from django.db.models import Count, Exists, OuterRef, QuerySet, TextField
from django.db.models.functions import Cast

from assessor.models import Answer, AssessorWork, Job, KeptAnswerScore, KeptRunScore, KeptSource, Topic
from assessor.models.rows import rows_insert, rows_insert_statement, writes_run
from assessor.models.scope import CampaignRequired
from assessor.models.scores import WRITTEN_AHEAD
from assessor.registry import ScoreFamily, registry
from assessor.scoring.exact import exact_sum, mean_of_sum, sum_kept, sum_read
from assessor.scoring.lifecycle import job_counted_ahead, open_included, open_work_included, work_labels_counted
from assessor.scoring.scores import Scores
from assessor.scoring.written_ahead import RowsAhead, ahead_dropped, ahead_name, rows_ahead_keep, rows_ahead_take

Columns = tuple[str, ...]

# The job whose end the refresh in progress makes count (`scores_refresh_job`).
_job_ending: ContextVar[int | None] = ContextVar("job_ending", default=None)


def job_ending() -> int | None:
    """The job whose labels the refresh in progress makes count, if it is a job's end."""
    return _job_ending.get()


def source_name(columns: Columns) -> str:
    return "/".join(columns)


def source_columns(name: str) -> Columns:
    """The columns a kept source's name joins (`source_name` read back)."""
    return tuple(name.split("/"))


def _family(name: str) -> ScoreFamily:
    for family in registry.score_families:
        if family.name == name:
            return family
    raise LookupError(f"no score family named {name!r}")


# --- reading ----------------------------------------------------------------------------


def columns_sorted(names: Iterable[str]) -> list[Columns]:
    """Kept sources' columns in the order every page lists them: by name, sorted in Python (a database's
    collation would order names that differ in punctuation differently on PostgreSQL and SQLite)."""
    return [source_columns(name) for name in sorted(names)]


def kept_columns(family: str) -> list[Columns]:
    """The sources of a family that have kept scores, sorted (a read of the small source table)."""
    return columns_sorted(KeptSource.objects.filter(family=family).values_list("name", flat=True))


def family_columns(family: ScoreFamily) -> list[Columns]:
    """The sources a page lists: the kept ones, or those with any label when open work is counted."""
    if open_included():
        return family.listed()
    return kept_columns(family.name)


def kept_stamp(family: str, columns: Columns) -> str | None:
    """The kept source's stamp, None when it is not kept: a new stamp, or the source kept or dropped, means its
    counted labels changed (every write to them refreshes it)."""
    return KeptSource.objects.filter(family=family, name=source_name(columns)).values_list("stamp", flat=True).first()


def _kept_source(family: str, columns: Columns) -> KeptSource | None:
    """The kept source of these columns in the campaign in effect. Outside a campaign, with several kept under
    the name, none is taken for another's: CampaignRequired."""
    found = list(KeptSource.objects.filter(family=family, name=source_name(columns))[:2])
    if len(found) > 1:
        raise CampaignRequired(f"{family} {source_name(columns)!r} is kept in several campaigns: name one.")
    return found[0] if found else None


def kept_scores(*, family: str, columns: Columns, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
    """A source's kept scores, shaped as the from-labels ones (`runs` restricts the runs shown).

    `per_topic=False` leaves the per-answer rows out (a leaderboard needs the means only).
    Raises LookupError when the source has no kept scores.
    """
    source = _kept_source(family, columns)
    if source is None:
        raise LookupError(f"no kept scores for {family} {source_name(columns)!r}")
    run_rows = KeptRunScore.objects.filter(source=source)
    if runs is not None:
        run_rows = run_rows.filter(run__run_id__in=runs)
    rows: dict[tuple[str, str], dict[str, float]] = {}
    if per_topic:
        answers = KeptAnswerScore.objects.filter(source=source)
        if runs is not None:
            answers = answers.filter(run__run_id__in=runs)
        rows = {
            (run_id, topic_id): values
            for run_id, topic_id, values in _json_decoded(answers.order_by(), "run__run_id", "topic_id", "values")
        }
    return _kept_shaped(source, dict(_json_decoded(run_rows.order_by(), "run__run_id", "exact_sums")), rows)


def kept_scores_of_run(run_id: str, sources: Sequence[KeptSource] | None = None) -> dict[tuple[str, Columns], Scores]:
    """Every kept source's scores of one run (or these sources'), as `kept_scores(runs=[run_id])` gives each,
    in three queries for all the sources together (the run page shows them all); keyed by (family, columns)."""
    sources = list(KeptSource.objects.all()) if sources is None else list(sources)
    run_rows = KeptRunScore.objects.filter(run__run_id=run_id, source__in=sources).order_by()
    sums = dict(_json_decoded(run_rows, "source_id", "exact_sums"))
    rows: dict[int, dict[tuple[str, str], dict[str, float]]] = defaultdict(dict)
    answers = KeptAnswerScore.objects.filter(run__run_id=run_id, source__in=sources).order_by()
    for source_pk, topic_id, values in _json_decoded(answers, "source_id", "topic_id", "values"):
        rows[source_pk][(run_id, topic_id)] = values
    return {
        (source.family, source_columns(source.name)): _kept_shaped(
            source, {run_id: sums[source.pk]} if source.pk in sums else {}, rows[source.pk]
        )
        for source in sources
    }


def _json_decoded(rows: QuerySet, *fields: str) -> list[tuple]:
    """`rows.values_list(*fields)` whose last field, a JSON column, is read as text and parsed as one array:
    at thousands of rows the ORM's decoding of each value on its own costs more than the parsing."""
    *keys, column = fields
    read = list(rows.annotate(json_text=Cast(column, TextField())).values_list(*keys, "json_text"))
    decoded = json.loads("[" + ",".join(text for *_, text in read) + "]")
    return [(*row[:-1], value) for row, value in zip(read, decoded, strict=True)]


def run_sum(sums: dict[str, str], metric: str) -> Fraction:
    """A kept run's exact sum of `metric` (`KeptRunScore.exact_sums`)."""
    return sum_read(sums.get(metric)) or Fraction(0)


def kept_run_sums(*, family: str, columns: Columns) -> dict[str, dict[str, Fraction]]:
    """Each run's exact sums under a kept source (run id -> metric -> sum), for a mean over other topics than the
    source's (a grade source's, over every request of the family)."""
    rows = KeptRunScore.objects.filter(source__family=family, source__name=source_name(columns)).order_by()
    return {
        run_id: {metric: run_sum(sums, metric) for metric in sums}
        for run_id, sums in _json_decoded(rows, "run__run_id", "exact_sums")
    }


def _kept_shaped(
    source: KeptSource, run_sums: dict[str, dict[str, str]], rows: dict[tuple[str, str], dict[str, float]]
) -> Scores:
    """Kept rows shaped as the from-labels scores: a run's mean is its exact sum over the source's evaluated topics,
    rounded once."""
    metrics = tuple(source.metrics)
    run_means = {
        run_id: {metric: mean_of_sum(run_sum(sums, metric), len(source.topics)) for metric in metrics}
        for run_id, sums in sorted(run_sums.items())
    }
    return Scores(
        metrics=metrics,
        per_topic=dict(sorted(rows.items())),
        run_means=run_means,
        topics=list(source.topics),
        runs=sorted(run_means),
    )


def kept_topic_counts(family: str) -> dict[str, int]:
    """topic id -> how many of the family's sources evaluate it (a read of the small source table)."""
    counts: dict[str, int] = defaultdict(int)
    for topics in KeptSource.objects.filter(family=family).values_list("topics", flat=True):
        for topic in topics:
            counts[topic] += 1
    return dict(counts)


def kept_answered(*, family: str, columns: Columns) -> dict[str, int]:
    """run id -> its evaluated answers under the source, from the kept run rows."""
    rows = KeptRunScore.objects.filter(source__family=family, source__name=source_name(columns))
    return dict(rows.order_by().values_list("run__run_id", "answered"))


# --- refreshing ----------------------------------------------------------------------------


def scores_refresh(
    *,
    family: str | None = None,
    columns: Columns | None = None,
    topics: Iterable[str] | None = None,
    answers: Iterable[int] | None = None,
    discover: bool = False,
) -> None:
    """Bring the kept scores of a scope up to date with the labels (call it after the write, in its transaction).

    family None: every family; columns None: every kept source of the family
    (with `discover`, also those with counted labels and no kept row yet: a
    rebuild; a write that gives a source its first labels names it in
    `columns`); topics and answers None: all of them.
    """
    topic_list = sorted(set(topics)) if topics is not None else None
    answer_list = sorted(set(answers)) if answers is not None else None
    if topic_list == [] or answer_list == []:
        return
    families = [_family(family)] if family is not None else registry.score_families
    # The kept figures are the finished work's, whatever the request that made the write asked to see.
    with transaction.atomic(), open_work_included(False):
        for each in families:
            if columns is not None:
                every = [columns]
            else:
                every = sorted(set(kept_columns(each.name)) | (set(each.listed()) if discover else set()))
            for source_columns in every:
                _source_refresh(each, source_columns, topics=topic_list, answers=answer_list)


def scores_refresh_label(work: AssessorWork, *, family: str, columns: Columns, topic: str, answer: int) -> None:
    """After a person's label save: its answer under its source, unless the work's labels do not count.

    Labels are saved in open work, whose labels count neither before nor after
    the save (only its submit changes kept figures): then there is nothing to do.
    """
    if work_labels_counted(work):
        scores_refresh(family=family, columns=columns, topics=[topic], answers=[answer])


def scores_refresh_work(work: AssessorWork) -> None:
    """After a submit or reopening: the sources the work's labels go into, in its topic only."""
    for family in registry.score_families:
        for columns in family.work_scope(work):
            scores_refresh(family=family.name, columns=columns, topics=[work.topic_id])


def scores_refresh_touched(
    touched: dict[tuple[str, Columns], set[str]], everywhere: set[str], answers: set[int] | None = None
) -> None:
    """After an import: each source it wrote labels into, over the topics of its lines, in one pass a source;
    then every other kept source over the topics where it changed what their labels stand on; then every kept
    source over the stored answers it rewrote (a run's import: those answers' rows and their runs' sums only)."""
    for (family, columns), topics in sorted(touched.items()):
        scores_refresh(family=family, columns=columns, topics=topics | everywhere)
    if everywhere:
        with open_work_included(False):
            for each in registry.score_families:
                for columns in kept_columns(each.name):
                    if (each.name, columns) not in touched:
                        scores_refresh(family=each.name, columns=columns, topics=everywhere)
    if answers:
        scores_refresh(answers=answers)


def scores_refresh_job(job_id: int, *, kind: str | None = None) -> None:
    """After a job's status changed: its labels came to count, or stopped counting. `kind`: the job's, where the
    caller read it with the change."""
    if kind is None:
        kind = Job.objects.filter(pk=job_id).values_list("kind", flat=True).first()
    scored_in = registry.job_kinds[kind].scored_in if kind in registry.job_kinds else None
    families = [family for family in registry.score_families if scored_in is None or family.name in scored_in]
    token = _job_ending.set(job_id)
    try:
        with open_work_included(False), _planned_for_unknown_rows():
            for family in families:
                for columns, topics in family.job_scope(job_id).items():
                    scores_refresh(family=family.name, columns=columns, topics=topics)
            if any(family.job_prepare is not None for family in families):
                # What was written ahead and not named by the refresh: another process's, or a stopped worker's.
                ahead_dropped(job_id)
    finally:
        _job_ending.reset(token)


def scores_prepare_job(job_id: int) -> None:
    """While a running job's last items are out: let each family that can read ahead what the job's end will read
    (`ScoreFamily.job_prepare`), its labels counted as they will be then, and write the answers' rows that read gives
    of each source not kept yet, under a hidden source (assessor.scoring.written_ahead)."""
    with open_work_included(False), job_counted_ahead(job_id), _planned_for_unknown_rows():
        for family in registry.score_families:
            if family.job_prepare is not None:
                for columns, scores in family.job_prepare(job_id).items():
                    _rows_written_ahead(job_id, family.name, columns, scores)


def _rows_written_ahead(job_id: int, family: str, columns: Columns, scores: Scores) -> None:
    """A source not kept yet: its answers' rows as `scores` gives them, under a source of the hidden family, kept in
    this process once committed. A kept source's end replaces its rows as any refresh does: none is written."""
    if not scores.per_topic or _kept_source(family, columns) is not None:
        return
    name = ahead_name(job_id, family, source_name(columns))
    with transaction.atomic():
        KeptSource.written_ahead.filter(name=name).delete()  # an earlier try's, of this job
        source = KeptSource.objects.create(family=WRITTEN_AHEAD, name=name, metrics=list(scores.metrics))
        rows = _answer_rows(source.pk, scores, _answer_keys(scores, topics=None, answers=None))
        rows_insert(KeptAnswerScore, rows)
        ahead = RowsAhead(source.pk, source.campaign_id, {row["answer_id"]: row for row in rows})
        transaction.on_commit(partial(rows_ahead_keep, job_id, family, columns, ahead))


@contextmanager
def _planned_for_unknown_rows() -> Iterator[None]:
    """On PostgreSQL, plan the block's reads without nested loops wherever another join can be had.

    A job's end reads its labels when the planner's statistics cannot know them: the labels table was analyzed
    before the job (by an import, or by autovacuum, which does not analyze it again for a job that adds less than
    a tenth of it, and which may not run at all), so the job's source matches no row the statistics know of. The
    planner then expects a single label and joins each of them to its nugget, set, source and answer one at a
    time: 0.38-0.53 s for 2,000 answers' 40,000 labels, against 0.07 s by hash joins. Those are what the block gets,
    for every family's reads alike; an ANALYZE of the labels first would cost as much as it saves at that size.
    """
    connection = connections[router.db_for_write(KeptSource)]
    if connection.vendor != "postgresql":
        yield
        return
    # In a savepoint: the setting is the transaction's (set_config's third argument), and a failure in the block
    # takes it back with the savepoint; otherwise it is set back to what it was.
    with transaction.atomic(using=connection.alias):
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('enable_nestloop'), set_config('enable_nestloop', 'off', true)")
            previous = cursor.fetchone()[0]
        yield
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('enable_nestloop', %s, true)", [previous])


def scores_rebuild() -> dict[str, int]:
    """Throw every kept score away and compute them all again from the labels; returns the sources kept by family."""
    with transaction.atomic():
        KeptSource.objects.all().delete()
        scores_refresh(discover=True)
    return {family.name: len(kept_columns(family.name)) for family in registry.score_families}


def _source_refresh(
    family: ScoreFamily, columns: Columns, *, topics: list[str] | None, answers: list[int] | None
) -> None:
    try:
        scores = family.compute(columns=columns, topics=topics, answers=answers)
    except LookupError:
        scores = None
    source = _kept_source(family.name, columns)
    # A source kept from now on has no row yet (a job's first labels under its name): none to read or take away,
    # but those its job wrote ahead.
    new = source is None
    ahead: RowsAhead | None = None
    if source is None:
        if scores is None or not scores.per_topic:
            return
        source, ahead = _source_made(family.name, columns, scores)

    in_scope = KeptAnswerScore.objects.filter(source=source)
    if topics is not None:
        in_scope = in_scope.filter(topic_id__in=topics)
    if answers is not None:
        in_scope = in_scope.filter(answer_id__in=answers)
    # What the runs' sums lose: the rows of the scope, read before they go (a topic's or an answer's few).
    removed: dict[int, list[dict[str, float]]] = defaultdict(list)
    if not new:
        for run_pk, values in in_scope.order_by().values_list("run_id", "values"):
            removed[run_pk].append(values)
        in_scope.delete()
    keys = _answer_keys(scores, topics=topics, answers=answers)
    added: dict[int, list[dict[str, float]]] = defaultdict(list)
    added_topics: set[str] = set()
    rows = _answer_rows(source.pk, scores, keys) if scores is not None else []
    for row in rows:
        added[row["run_id"]].append(row["values"])
        added_topics.add(row["topic_id"])
    answers_topics = {topic_id for _, topic_id in keys} if answers is not None else None
    if new:
        # Nothing kept to read back: the runs' rows and the evaluated topics follow from the rows written.
        evaluated = _topics_evaluated(source, topics=topics, answers_topics=answers_topics, added=added_topics)
        _new_source_written(source, rows, _new_runs_rows(source, added), evaluated, ahead=ahead)
        return
    # Plain rows in one statement (assessor.models.rows): building and binding model instances cost most of the CPU.
    rows_insert(KeptAnswerScore, rows)
    _runs_refresh(source, removed=removed, added=added)
    evaluated = _topics_evaluated(source, topics=topics, answers_topics=answers_topics, added=added_topics)
    _evaluated_store(source, evaluated)


def _answer_keys(
    scores: Scores | None, *, topics: list[str] | None, answers: list[int] | None
) -> dict[tuple[str, str], tuple[int, int]]:
    """(run id, topic id) -> (answer id, run key) of the answers in scope: read when there are scores to key, or when
    the scope is some answers (their topics); taken from the scores where their compute read every one of them."""
    if (
        answers is None
        and scores is not None
        and scores.answer_keys
        and scores.per_topic.keys() <= scores.answer_keys.keys()
    ):
        in_scope = set(topics) if topics is not None else None
        return {key: scores.answer_keys[key] for key in scores.per_topic if in_scope is None or key[1] in in_scope}
    if (scores is None or not scores.per_topic) and answers is None:
        return {}
    scope_answers = Answer.objects.all()
    if topics is not None:
        scope_answers = scope_answers.filter(topic_id__in=topics)
    if answers is not None:
        scope_answers = scope_answers.filter(id__in=answers)
    return {
        (run_id, topic_id): (answer_id, run_pk)
        for answer_id, run_pk, run_id, topic_id in scope_answers.order_by().values_list(
            "id", "run_id", "run__run_id", "topic_id"
        )
    }


def _answer_rows(
    source_id: int, scores: Scores, keys: dict[tuple[str, str], tuple[int, int]]
) -> list[dict]:
    """The kept rows (`rows_insert`'s plain rows) of the scores' answers in scope (`keys`)."""
    rows = []
    for key, values in scores.per_topic.items():
        if key in keys:
            answer_id, run_pk = keys[key]
            rows.append(
                {"source_id": source_id, "answer_id": answer_id, "run_id": run_pk, "topic_id": key[1], "values": values}
            )
    return rows


def _source_made(family: str, columns: Columns, scores: Scores) -> tuple[KeptSource, RowsAhead | None]:
    """A source kept from now on: at its job's end, the hidden one this process wrote its rows ahead under, named now
    (if it is still there: a rebuild keeps it, a sweep may not), with what was written; else a new one."""
    job_id = job_ending()
    ahead = rows_ahead_take(job_id, family, columns) if job_id is not None else None
    fields = {"family": family, "name": source_name(columns), "metrics": list(scores.metrics)}
    if ahead is not None and KeptSource.written_ahead.filter(pk=ahead.source_id).update(**fields):
        return KeptSource(pk=ahead.source_id, campaign_id=ahead.campaign_id, **fields), ahead
    return KeptSource.objects.create(**fields), None


def _rows_not_written_ahead(source: KeptSource, rows: list[dict], ahead: RowsAhead | None) -> list[dict]:
    """Of a new source's rows, those to insert: all of them, or those its job did not write ahead as they are now.
    Rows written ahead that the end does not keep as they are (an answer's figures changed since, or it is gone
    from the scope) are deleted first."""
    if ahead is None:
        return rows
    now = {row["answer_id"]: row for row in rows}
    stale = sorted(answer for answer, row in ahead.rows.items() if now.get(answer) != row)
    if stale:
        KeptAnswerScore.objects.filter(source_id=source.pk, answer_id__in=stale).delete()
    return [row for row in rows if ahead.rows.get(row["answer_id"]) != row]


def _new_source_written(
    source: KeptSource, rows: list[dict], run_rows: list[dict], evaluated: list[str], *, ahead: RowsAhead | None
) -> None:
    """A source kept from now on: its answers' rows (those not written ahead) and runs' rows and its evaluated topics
    under a new stamp, in one statement where the database can (a job's end, on its critical path), else one after
    the other."""
    connection = connections[router.db_for_write(KeptSource)]
    inserted = _rows_not_written_ahead(source, rows, ahead)
    answers_insert = rows_insert_statement(KeptAnswerScore, inserted) if inserted else None
    runs_insert = rows_insert_statement(KeptRunScore, run_rows)
    if not evaluated or not run_rows or runs_insert is None or (inserted and answers_insert is None):
        rows_insert(KeptAnswerScore, inserted)
        rows_insert(KeptRunScore, run_rows)
        _evaluated_store(source, evaluated)
        return
    _stamped(source, evaluated)
    table = connection.ops.quote_name(KeptSource._meta.db_table)
    topics_field = KeptSource._meta.get_field("topics")
    stored = (
        f"UPDATE {table} SET topics = %s, stamp = %s WHERE id = %s",
        [topics_field.get_db_prep_save(source.topics, connection), source.stamp, source.pk],
    )
    writes = [write for write in (answers_insert, runs_insert) if write is not None]
    writes_run([*writes, stored], using=connection.alias)
    _stamp_listeners_told()


def _evaluated_store(source: KeptSource, evaluated: list[str]) -> None:
    """Keep the source's evaluated topics under a new stamp, or drop the source when it has none left."""
    if not evaluated:
        source.delete()
        return
    _stamped(source, evaluated)
    source.save(update_fields=["topics", "stamp"])
    _stamp_listeners_told()


def _stamped(source: KeptSource, evaluated: list[str]) -> None:
    """The source's evaluated topics, under a new stamp whatever changed: a refresh follows every write to the
    source's counted labels (saved by the caller)."""
    source.topics = evaluated
    source.stamp = uuid.uuid4().hex


def _stamp_listeners_told() -> None:
    """The registry's stamp listeners hear of a source's new stamp once it is committed."""
    for listener in registry.stamp_listeners:
        transaction.on_commit(listener, robust=True)


def _topics_evaluated(
    source: KeptSource, *, topics: list[str] | None, answers_topics: set[str] | None, added: set[str]
) -> list[str]:
    """The source's evaluated topics after a refresh: its kept topics outside the scope stay as they were, and
    those inside it are known from the rows the refresh wrote, reading no kept row but where it must.

    A refresh of whole topics replaced every row of its scope: a topic in it is evaluated if a row was written
    in it. A refresh of some answers (`answers_topics`: their topics) left the other answers of their topics as
    they were: a topic is also evaluated if it was and a row of another answer is left in it, which one EXISTS
    a topic tells on the (source, topic) index (a topic where a row was written needs none).
    """
    if topics is None and answers_topics is None:
        return sorted(added)
    scope = set(topics) if topics is not None else set()
    if answers_topics is not None:
        scope = answers_topics & scope if topics is not None else answers_topics
    before = set(source.topics)
    left: set[str] = set()
    unsure = sorted((scope & before) - added) if answers_topics is not None else []
    if unsure:
        rows_left = KeptAnswerScore.objects.filter(source=source, topic_id=OuterRef("pk"))
        left = set(Topic.objects.filter(pk__in=unsure).filter(Exists(rows_left)).values_list("pk", flat=True))
    return sorted((before - scope) | added | left)


def _runs_kept(source: KeptSource, runs: set[int]) -> tuple[dict[int, KeptRunScore], dict[int, int]]:
    """The source's kept rows of these runs, and the count of each run's kept answers."""
    kept_rows = {row.run_id: row for row in KeptRunScore.objects.filter(source=source, run_id__in=runs)}
    counts = KeptAnswerScore.objects.filter(source=source, run_id__in=runs).order_by().values("run_id")
    return kept_rows, dict(counts.annotate(n=Count("id")).values_list("run_id", "n"))


def _runs_refresh(
    source: KeptSource, *, removed: dict[int, list[dict[str, float]]], added: dict[int, list[dict[str, float]]]
) -> None:
    """The sums of the runs whose kept answers changed: the rows taken away and added applied to their
    exact sums, so that a topic's refresh does not read every run's every answer again.

    A run is summed again from its kept answers when its exact sums are not known, or when its count of
    kept answers is not what the refresh expects (rows gone by a cascade, an answer deleted).
    """
    runs = set(removed) | set(added)
    if not runs:
        return
    kept_rows, counts = _runs_kept(source, runs)
    metrics = list(source.metrics)
    totals: dict[int, dict[str, Fraction]] = {}
    summed_again: set[int] = set()
    for run_pk in runs:
        row = kept_rows.get(run_pk)
        before = row.answered if row is not None else 0
        known = dict.fromkeys(metrics, Fraction(0))  # a run new to the source sums from nothing
        if row is not None:
            read = {metric: sum_read(row.exact_sums.get(metric)) for metric in metrics}
            known = {metric: total for metric, total in read.items() if total is not None}
        if counts.get(run_pk, 0) != before - len(removed[run_pk]) + len(added[run_pk]) or len(known) != len(metrics):
            summed_again.add(run_pk)
            continue
        totals[run_pk] = {
            metric: _sum_changed(known[metric], removed[run_pk], added[run_pk], metric) for metric in metrics
        }
    if summed_again:
        values: dict[int, list[dict[str, float]]] = defaultdict(list)
        every = KeptAnswerScore.objects.filter(source=source, run_id__in=summed_again).order_by()
        for run_pk, row_values in every.values_list("run_id", "values"):
            values[run_pk].append(row_values)
        for run_pk in summed_again:
            totals[run_pk] = {metric: exact_sum(row[metric] for row in values[run_pk]) for metric in metrics}
    KeptRunScore.objects.filter(source=source, run_id__in=runs).delete()
    rows_insert(KeptRunScore, _runs_rows(source, totals, counts))


def _new_runs_rows(source: KeptSource, added: dict[int, list[dict[str, float]]]) -> list[dict]:
    """The runs' rows of a source kept from now on: sums and counts of the rows just added, with no read."""
    totals = {
        run_pk: {metric: exact_sum(row[metric] for row in rows) for metric in source.metrics}
        for run_pk, rows in added.items()
    }
    return _runs_rows(source, totals, {run_pk: len(rows) for run_pk, rows in added.items()})


def _runs_rows(source: KeptSource, totals: dict[int, dict[str, Fraction]], counts: dict[int, int]) -> list[dict]:
    """Plain rows (assessor.models.rows) of the runs' sums, one statement for them all (a job's end writes a row for
    each of its runs); a run with no kept answer left has none."""
    metrics = list(source.metrics)
    return [
        {
            "source_id": source.pk,
            "run_id": run_pk,
            "sums": {metric: mean_of_sum(run_totals[metric], 1) for metric in metrics},
            "exact_sums": {metric: sum_kept(run_totals[metric]) for metric in metrics},
            "answered": counts[run_pk],
        }
        for run_pk, run_totals in totals.items()
        if counts.get(run_pk)
    ]


def _sum_changed(
    known: Fraction, removed: list[dict[str, float]], added: list[dict[str, float]], metric: str
) -> Fraction:
    """A run's exact sum of `metric` with the rows taken away and added (none summed where there are none: a job's
    end adds its runs' rows to a source kept from then on and takes none away)."""
    total = known
    if removed:
        total -= exact_sum(values[metric] for values in removed)
    if added:
        total += exact_sum(values[metric] for values in added)
    return total
