"""Reads of nugget assignment labels: the conditions and their scores.

A condition is a nugget set name and an assigner name. Its evaluated topics
are the topics whose nugget set of that name has at least one label from that
assigner; its runs are the runs with at least one labelled answer. Scores are
fetched in a fixed number of queries (no query per answer or topic): the
database counts each answer's labels, assignment.scoring computes the metrics.

Large reads are plain, not .iterator(): on PostgreSQL an iterator outside a
transaction is a WITH HOLD cursor, which the server materializes first, and
the results are held in memory whole anyway.
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence

from django.db.models import BigIntegerField, Count, Q, QuerySet, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from assessor.models import Answer, AssessorWork, Job, JobItem, LabelSource
from assessor.scoring.kept import job_ending, kept_columns, kept_scores, kept_stamp
from assessor.scoring.lifecycle import (
    job_sentences,
    jobs_not_final_by,
    labels_counted,
    open_included,
    open_work_by,
    open_work_sentences,
)
from assessor.scoring.scores import IN_LIST_LIMIT, Scores
from assignment.ahead import LabelsFingerprint, TalliesAhead, Tally, ahead_keep, ahead_take
from assignment.kinds import ASSIGN_MANUAL, AUTO_ASSIGN, LABEL_FAMILY
from assignment.models import AssignmentLabel
from assignment.scoring import OKAY, PARTIAL_SUPPORT, SUPPORT, VITAL, NuggetCounts, condition_scores
from nuggets.kinds import NUGGET_KINDS
from nuggets.models import Nugget, NuggetSet
from nuggets.selectors import nugget_sets_counted_q

FAMILY = "conditions"  # the registered score family of the conditions (assignment.parts)


def counted_labels() -> QuerySet[AssignmentLabel]:
    """Every label the scores count (assessor.scoring.lifecycle): not of open work, a running job or an open list."""
    return labels_counted(AssignmentLabel.objects.filter(nugget_sets_counted_q("nugget__nugget_set__")))


def condition_labels(*, nuggets: str, assigner: str) -> QuerySet[AssignmentLabel]:
    return counted_labels().filter(assigner=assigner, nugget__nugget_set__name=nuggets)


def conditions_list() -> list[tuple[str, ...]]:
    """The (nugget set name, assigner name) pairs that have scores, sorted (the kept list, or from the labels
    when open work is counted)."""
    if open_included():
        return conditions_from_labels()
    return kept_columns(FAMILY)


def conditions_from_labels() -> list[tuple[str, ...]]:
    """The (nugget set name, assigner name) pairs that have labels, sorted."""
    # DISTINCT over (assigner, nugget) reads the (assigner, nugget) index only;
    # the nugget -> set name map is small next to the labels.
    pairs = counted_labels().order_by().values_list("assigner", "nugget_id").distinct()
    assigner_nuggets: dict[str, set[int]] = defaultdict(set)
    for assigner, nugget_id in pairs:
        assigner_nuggets[assigner].add(nugget_id)
    if not assigner_nuggets:
        return []
    set_name = dict(Nugget.objects.order_by().values_list("id", "nugget_set__name"))
    conditions = {
        (set_name[nugget_id], assigner)
        for assigner, nugget_ids in assigner_nuggets.items()
        for nugget_id in nugget_ids
        if nugget_id in set_name
    }
    return sorted(conditions)


def _missing_condition(*, nuggets: str, assigner: str) -> LookupError:
    # Worded for a page and a command alike: no option syntax.
    known = ", ".join(f"nugget set {n!r} by assigner {a!r}" for n, a in conditions_list()) or "none"
    return LookupError(
        f"no assignment labels for nugget set {nuggets!r} by assigner {assigner!r}; conditions with labels: {known}"
    )


def condition_exists(*, nuggets: str, assigner: str) -> bool:
    return condition_labels(nuggets=nuggets, assigner=assigner).exists()


def condition_require(*, nuggets: str, assigner: str) -> None:
    """Raise LookupError, naming the conditions that exist, unless this one has labels."""
    if not condition_exists(nuggets=nuggets, assigner=assigner):
        raise _missing_condition(nuggets=nuggets, assigner=assigner)


def _set_nuggets(*, nuggets: str, topics: list[str] | None) -> dict[int, tuple[str, str]]:
    """nugget id -> (topic id, importance), for the nugget sets of the name."""
    rows = Nugget.objects.filter(
        nugget_sets_counted_q("nugget_set__"), nugget_set__name=nuggets, nugget_set__form=NuggetSet.Form.FACTS
    )
    if topics is not None:
        rows = rows.filter(nugget_set__topic_id__in=topics)
    return {
        nugget_id: (topic, importance)
        for nugget_id, topic, importance in rows.order_by().values_list("id", "nugget_set__topic_id", "importance")
    }


def _labelled_topics(*, assigner: str, set_nuggets: dict[int, tuple[str, str]]) -> set[str]:
    """The topics whose nuggets have a label of the assigner: the condition's evaluated topics."""
    # DISTINCT nugget ids of one assigner read the (assigner, nugget) index only.
    labelled = counted_labels().filter(assigner=assigner).order_by().values_list("nugget_id", flat=True)
    return {set_nuggets[nugget_id][0] for nugget_id in labelled.distinct() if nugget_id in set_nuggets}


# The label counts an answer's metrics need: support and partial_support by importance.
TALLIED = tuple((importance, label) for importance in (VITAL, OKAY, "") for label in (SUPPORT, PARTIAL_SUPPORT))


def _tallies_per_answer(labels: QuerySet[AssignmentLabel]) -> dict[int, dict[tuple[str, str], int]]:
    """answer id -> label tally, counted by the database in one pass: one row per answer comes back."""
    counts = {
        f"n{index}": Count("id", filter=Q(nugget__importance=importance, label=label))
        for index, (importance, label) in enumerate(TALLIED)
    }
    rows = labels.order_by().values("answer_id").annotate(**counts).values_list("answer_id", *counts)
    return {answer_id: {key: n for key, n in zip(TALLIED, ns, strict=False) if n} for answer_id, *ns in rows}


def _tallies_of_runs(
    *, assigner: str, runs: list[str], topics: set[str], set_nuggets: dict[int, tuple[str, str]]
) -> dict[int, dict[tuple[str, str], int]]:
    """The label tallies of some runs' answers, read through the answers' label index."""
    answers = Answer.objects.filter(run__run_id__in=runs, topic_id__in=topics).values("id")
    return _tallies_of_answers(assigner=assigner, answers=answers, set_nuggets=set_nuggets)


def _tallies_of_answers(
    *, assigner: str, answers: QuerySet | list[int], set_nuggets: dict[int, tuple[str, str]]
) -> dict[int, dict[tuple[str, str], int]]:
    """The label tallies of these answers, read through the answers' label index."""
    # Filtered on the answers only: with the assigner in the WHERE clause, SQLite
    # walks every label of the assigner instead of the answers' few.
    rows = (
        labels_counted(AssignmentLabel.objects.filter(answer_id__in=answers))
        .order_by()
        .values_list("answer_id", "nugget_id", "assigner", "label")
    )
    tallies: dict[int, dict[tuple[str, str], int]] = {}
    for answer_id, nugget_id, label_assigner, label in rows:
        if label_assigner == assigner and nugget_id in set_nuggets:
            tally = tallies.setdefault(answer_id, {})
            key = (set_nuggets[nugget_id][1], label)
            tally[key] = tally.get(key, 0) + 1
    return tallies


def nugget_scores(
    *,
    nuggets: str,
    assigner: str,
    topics: list[str] | None = None,
    runs: list[str] | None = None,
    per_topic: bool = True,
) -> Scores:
    """The nugget metrics of a condition, per answer and per run, as kept (assessor.scoring.kept).

    `topics` restricts the evaluated topics (computed from the labels); `runs`
    restricts the runs shown (their means stay over all the condition's
    evaluated topics); `per_topic=False` reads the runs' means only. With open
    work counted, the scores are computed from the labels on request.
    Raises LookupError when the condition has no labels at all.
    """
    if open_included() or topics is not None:
        return nugget_scores_from_labels(nuggets=nuggets, assigner=assigner, topics=topics, runs=runs)
    try:
        return kept_scores(family=FAMILY, columns=(nuggets, assigner), runs=runs, per_topic=per_topic)
    except LookupError:
        raise _missing_condition(nuggets=nuggets, assigner=assigner) from None


def nugget_scores_from_labels(
    *,
    nuggets: str,
    assigner: str,
    topics: list[str] | None = None,
    runs: list[str] | None = None,
    answer_ids: list[int] | None = None,
    means: bool = True,
) -> Scores:
    """The nugget metrics of a condition computed from its labels, per answer and per run.

    `topics` restricts the evaluated topics; `runs` restricts the runs shown
    (their means stay over all the condition's evaluated topics); `answer_ids`
    restricts the answers scored (with `runs` None); `means` False leaves the
    runs' means out (the kept scores keep their own, from the answers' rows).
    Raises LookupError when the condition has no labels at all.
    Three queries for the whole condition, four with `runs`.
    """
    set_nuggets = _set_nuggets(nuggets=nuggets, topics=topics)
    if runs is None and answer_ids is not None:
        # Some answers' refresh (a label save, a run's import): their labels only, and their rows only.
        tallies = _tallies_of_answers(assigner=assigner, answers=answer_ids, set_nuggets=set_nuggets)
        evaluated_topics = None
    elif runs is None:
        read_ahead = _tallies_read_ahead(nuggets=nuggets, assigner=assigner, topics=topics, set_nuggets=set_nuggets)
        if read_ahead is not None:
            tallies = read_ahead
        else:
            tallies = _condition_tallies(nuggets=nuggets, assigner=assigner, topics=topics, set_nuggets=set_nuggets)
        evaluated_topics = None
    else:
        evaluated_topics = _labelled_topics(assigner=assigner, set_nuggets=set_nuggets)
        tallies = _tallies_of_runs(assigner=assigner, runs=runs, topics=evaluated_topics, set_nuggets=set_nuggets)
    if not tallies and not condition_exists(nuggets=nuggets, assigner=assigner):
        raise _missing_condition(nuggets=nuggets, assigner=assigner)
    return _tallies_scored(
        tallies, set_nuggets, topics=evaluated_topics, means=means, tallied_only=answer_ids is not None
    )


def _tallies_scored(
    tallies: dict[int, Tally],
    set_nuggets: dict[int, tuple[str, str]],
    *,
    topics: set[str] | None,
    means: bool,
    tallied_only: bool,
) -> Scores:
    """The metrics of the answers these tallies are of, against the set's nuggets; `topics`: the evaluated ones (None:
    those of the tallies); `tallied_only`: read the tallied answers by id, not every answer of the sets' topics."""
    set_topics = sorted({topic for topic, _ in set_nuggets.values()})
    read = Answer.objects.filter(topic_id__in=set_topics)
    if tallied_only and len(tallies) <= IN_LIST_LIMIT:
        read = Answer.objects.filter(id__in=list(tallies), topic_id__in=set_topics)
    answers = {
        answer_id: ((run, topic), words, run_pk)
        for answer_id, run_pk, run, topic, words in read.order_by().values_list(
            "id", "run_id", "run__run_id", "topic_id", "words"
        )
        if answer_id in tallies
    }
    importances: dict[str, list[str]] = defaultdict(list)
    for topic, importance in set_nuggets.values():
        importances[topic].append(importance)
    scores = condition_scores(
        tallies={answers[answer_id][0]: tally for answer_id, tally in tallies.items() if answer_id in answers},
        nugget_counts={topic: NuggetCounts.of(values) for topic, values in importances.items()},
        words={key: words for key, words, _run_pk in answers.values()},
        topics=topics,
        means=means,
    )
    scores.answer_keys = {key: (answer_id, run_pk) for answer_id, (key, _words, run_pk) in answers.items()}
    return scores


def _condition_tallies(
    *,
    nuggets: str,
    assigner: str,
    topics: list[str] | None,
    set_nuggets: dict[int, tuple[str, str]],
) -> dict[int, Tally]:
    """The tallies of the condition's answers in these topics (None: all), counted by the database."""
    labels = condition_labels(nuggets=nuggets, assigner=assigner)
    if topics is not None and len(set_nuggets) <= IN_LIST_LIMIT:
        # The topics' nuggets, read through the (assigner, nugget) index: through the answers'
        # topic, SQLite walks every label of the condition instead.
        labels = labels.filter(nugget_id__in=list(set_nuggets))
    elif topics is not None:
        labels = labels.filter(answer__topic_id__in=topics)
    return _tallies_per_answer(labels)


def condition_job_prepare(job_id: int) -> dict[tuple[str, ...], Scores]:
    """The registry's `ScoreFamily.job_prepare` of the conditions: an AutoAssign job's tallies read ahead of its end
    (assignment.ahead), its labels counted as they will be then (the caller's `job_counted_ahead`); returns each
    condition's answers' rows as they read, but those of the items not done yet."""
    prepared: dict[tuple[str, ...], Scores] = {}
    job = Job.objects.filter(pk=job_id).values_list("kind", "output_name").first()
    if job is None or job[0] != AUTO_ASSIGN:
        return prepared
    assigner = job[1]
    # Read first: an item done after this has its answer read again at the end, even if its labels are read below.
    items = list(JobItem.objects.filter(job_id=job_id).order_by().values_list("status", "payload"))
    if any("nuggets" in payload for _status, payload in items):
        # A re-run's items settle the stale labels of answers other than their own: none read ahead stands.
        return prepared
    later = frozenset(payload["answer"] for status, payload in items if status != JobItem.Status.DONE)
    # Read before the tallies: a write to the labels after them gives another print, or the source a new stamp.
    labels = _labels_fingerprint(assigner, later)
    for nuggets, topics in _sets_topics({payload["nugget_set"] for _status, payload in items}).items():
        stamp = kept_stamp(FAMILY, (nuggets, assigner))
        topic_list = sorted(topics)
        set_nuggets = _set_nuggets(nuggets=nuggets, topics=topic_list)
        tallies = _condition_tallies(nuggets=nuggets, assigner=assigner, topics=topic_list, set_nuggets=set_nuggets)
        ahead = TalliesAhead(stamp, frozenset(topics), set_nuggets, tallies, later, labels)
        ahead_keep(job_id, (nuggets, assigner), ahead)
        done = {answer: tally for answer, tally in tallies.items() if answer not in later}
        prepared[nuggets, assigner] = _tallies_scored(done, set_nuggets, topics=None, means=False, tallied_only=False)
    return prepared


def _labels_fingerprint(assigner: str, later: frozenset[int]) -> LabelsFingerprint:
    """The assigner's labels but those of the `later` answers, counted and their ids summed by label."""
    rows = AssignmentLabel.objects.filter(assigner=assigner).exclude(answer_id__in=sorted(later)).order_by()
    counted = rows.values("label").annotate(n=Count("id"), ids=Sum("id")).values_list("label", "n", "ids")
    return {label: (n, ids) for label, n, ids in counted}


def _tallies_read_ahead(
    *, nuggets: str, assigner: str, topics: list[str] | None, set_nuggets: dict[int, tuple[str, str]]
) -> dict[int, Tally] | None:
    """At an AutoAssign job's end, the condition's tallies read ahead (`condition_job_prepare`) if they still stand,
    the answers of the items done since read again; None: read them all."""
    job_id = job_ending()
    if job_id is None or topics is None:
        return None
    ahead = ahead_take(job_id, (nuggets, assigner))
    if (
        ahead is None
        or ahead.topics != set(topics)
        or ahead.set_nuggets != set_nuggets
        or ahead.stamp != kept_stamp(FAMILY, (nuggets, assigner))
        or ahead.labels != _labels_fingerprint(assigner, ahead.later)
    ):
        return None
    tallies = {answer: tally for answer, tally in ahead.tallies.items() if answer not in ahead.later}
    # The later answers' labels through the answers' index, as a label save reads them: a job's labels are its items'
    # own (the job owns its assigner's name), each of an answer against its topic's nugget set, which the set's
    # nuggets in scope hold whole; joined to the sets instead, without nested loops (the end's plans), the read went
    # over every nugget.
    tallies.update(_tallies_of_answers(assigner=assigner, answers=sorted(ahead.later), set_nuggets=set_nuggets))
    return tallies


def condition_compute(
    *, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None
) -> Scores:
    """The registry's `ScoreFamily.compute` of the conditions: columns are (nugget set name, assigner). The answers'
    rows only: the kept scores read no more of it."""
    nuggets, assigner = columns
    return nugget_scores_from_labels(
        nuggets=nuggets,
        assigner=assigner,
        topics=list(topics) if topics is not None else None,
        answer_ids=list(answers) if answers is not None else None,
        means=False,
    )


def condition_job_scope(job_id: int) -> dict[tuple[str, ...], set[str]]:
    """The conditions and topics a job's labels are in."""
    scope: dict[tuple[str, ...], set[str]] = defaultdict(set)
    job = Job.objects.filter(pk=job_id).values_list("kind", "output_name").first()
    if job is not None and job[0] == AUTO_ASSIGN:
        # An AutoAssign job's labels are its done items' (written in the transaction that marks each done): each
        # labels an answer against the nugget set its item names, of the answer's topic, under the job's name. Read
        # from the items (one row an answer), not from the labels (a row a nugget, joined to their sets and answers).
        items = JobItem.objects.filter(job_id=job_id, status=JobItem.Status.DONE).order_by()
        sets = items.values(set_id=Cast(KT("payload__nugget_set"), BigIntegerField()))
        for nuggets, topics in _sets_topics(sets).items():
            scope[nuggets, job[1]] |= topics
        # It makes no nugget list: no other condition is touched.
        return scope
    _conditions_add(scope, AssignmentLabel.objects.filter(job_id=job_id), topic="answer__topic_id")
    # The nugget lists it made: every condition labelling them (an AutoNuggets job).
    made = NuggetSet.objects.filter(job_id=job_id).values("pk")
    labelled = AssignmentLabel.objects.filter(nugget__nugget_set__in=made)
    _conditions_add(scope, labelled, topic="nugget__nugget_set__topic_id")
    return scope


def _sets_topics(sets: QuerySet | Iterable[int]) -> dict[str, set[str]]:
    """The names of these nugget sets (their ids, or a query of them), each with the topics of its sets."""
    named: dict[str, set[str]] = defaultdict(set)
    for nuggets, topic in NuggetSet.objects.filter(pk__in=sets).order_by().values_list("name", "topic_id"):
        named[nuggets].add(topic)
    return named


def _conditions_add(scope: dict[tuple[str, ...], set[str]], labels: QuerySet[AssignmentLabel], *, topic: str) -> None:
    """The conditions of these labels, each with its topics (`topic`: the labels' path to their topic's id)."""
    rows = labels.order_by().values_list("nugget__nugget_set__name", "assigner", topic).distinct()
    for nuggets, assigner, topic_id in rows:
        scope[nuggets, assigner].add(topic_id)


def condition_work_scope(work: AssessorWork) -> list[tuple[str, ...]]:
    """The conditions a work's submit or reopening changes: its own, or every condition over the nugget list it makes."""
    if work.kind == ASSIGN_MANUAL:
        return [(work.nugget_set_name, work.source.name)] if work.source is not None else []
    if work.kind in NUGGET_KINDS:
        # The assigners are read from the small source tables, never from the labels.
        named = LabelSource.objects.filter(family=LABEL_FAMILY).values_list("name", flat=True)
        kept = [assigner for nuggets, assigner in kept_columns(FAMILY) if nuggets == work.nugget_set_name]
        return [(work.nugget_set_name, assigner) for assigner in sorted({*named, *kept})]
    return []


def assignment_label_pairs(*, nuggets: str, assigner: str) -> dict[tuple[int, int], str]:
    """(answer id, nugget id) -> label, for every label of the condition."""
    rows = (
        condition_labels(nuggets=nuggets, assigner=assigner).order_by().values_list("answer_id", "nugget_id", "label")
    )
    return {(answer_id, nugget_id): label for answer_id, nugget_id, label in rows}


def condition_notes(*, nuggets: str, assigner: str) -> list[str]:
    """What keeps a condition's scores from being final: open work, running or partial jobs, stale LLM labels."""
    return conditions_notes([(nuggets, assigner)])[(nuggets, assigner)]


def conditions_notes(conditions: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[str]]:
    """`condition_notes` of many conditions (nugget set, assigner) in four queries whatever their number."""
    nugget_sets = sorted({nuggets for nuggets, _ in conditions})
    assigners = sorted({assigner for _, assigner in conditions})
    lists_open = open_work_by(
        AssessorWork.objects.filter(kind__in=NUGGET_KINDS, nugget_set_name__in=nugget_sets), "nugget_set_name"
    )
    assigning_open = open_work_by(
        AssessorWork.objects.filter(kind=ASSIGN_MANUAL, nugget_set_name__in=nugget_sets, source__name__in=assigners),
        "nugget_set_name",
        "source__name",
    )
    jobs = jobs_not_final_by(kind=AUTO_ASSIGN, names=assigners)
    stale_of = dict(LabelSource.objects.filter(family=LABEL_FAMILY, name__in=assigners).values_list("name", "stale"))
    notes_of: dict[tuple[str, ...], list[str]] = {}
    for nuggets, assigner in conditions:
        notes = open_work_sentences(lists_open.get((nuggets,), []), what=f"The nugget list {nuggets!r}")
        notes += open_work_sentences(
            assigning_open.get((nuggets, assigner), []), what=f"ManualAssign into {assigner!r}"
        )
        notes += job_sentences(jobs.get(assigner, []))
        stale = sorted((stale_of.get(assigner) or {}).get(nuggets, {}))
        if stale:
            notes.append(
                f"Stale: the nugget lists of {len(stale)} topic(s) ({', '.join(stale[:5])}) changed since "
                f"{assigner!r} labelled them; re-run the affected items."
            )
        notes_of[(nuggets, assigner)] = notes
    return notes_of


def stale_nuggets(assigners: Iterable[str]) -> dict[str, set[int]]:
    """The nuggets each LLM assigner is stale on (changed since it labelled their list), in one read."""
    rows = LabelSource.objects.filter(family=LABEL_FAMILY, name__in=list(assigners), kind=LabelSource.Kind.LLM)
    return {
        name: {int(nugget) for topics in stale.values() for nuggets in topics.values() for nugget in nuggets}
        for name, stale in rows.exclude(stale={}).values_list("name", "stale")
    }


def assigner_is_stale(assigner: str) -> bool:
    return (
        LabelSource.objects.filter(family=LABEL_FAMILY, name=assigner, kind=LabelSource.Kind.LLM)
        .exclude(stale={})
        .exists()
    )
