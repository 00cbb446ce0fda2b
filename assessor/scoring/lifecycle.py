"""What scores count: the one rule of the lifecycle of human and LLM work.

Scores, leaderboards, exports, downloads and the meta-evaluation count
submitted human work, imported labels and finished LLM work. A label made in
work that is still open (never submitted, or reopened), or by a job that has
not finished, is provisional: left out, unless an organizer asks to see open
work (`open_work_included`: the leaderboards' switch and the commands'
`--include-open`), and then shown as provisional. A nugget list still being
edited (open) counts for nothing either: its nuggets are not final
(nuggets.selectors.nugget_sets_counted_q).
"""

from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from django.db import connection, models
from django.db.models import ExpressionWrapper, Q, QuerySet

from assessor.models import AssessorWork, Job, QrelSource
from assessor.models.keys import published_id
from assessor.registry import registry

# A job that has finished: its labels count (a failed item has no label; the others stand, and the
# source is partial until the job is resumed: `jobs_not_final_by`).
FINISHED_JOB_STATUSES = (Job.Status.DONE, Job.Status.FAILED)

_include_open: ContextVar[bool] = ContextVar("include_open", default=False)
# A running job whose labels count inside the block as if it had finished: its end's reads, made ahead of it while
# its last items are still out (assessor.scoring.kept.scores_prepare_job).
_counted_ahead: ContextVar[int | None] = ContextVar("job_counted_ahead", default=None)

M = TypeVar("M", bound=models.Model)


@contextmanager
def open_work_included(include: bool = True) -> Iterator[None]:
    """Count provisional labels too, inside the block (what the organizer's switch turns on)."""
    token = _include_open.set(include)
    try:
        yield
    finally:
        _include_open.reset(token)


def open_included() -> bool:
    return _include_open.get()


@contextmanager
def job_counted_ahead(job_id: int) -> Iterator[None]:
    """Count this running job's labels inside the block, as they will count once it has finished."""
    token = _counted_ahead.set(job_id)
    try:
        yield
    finally:
        _counted_ahead.reset(token)


def _open_work() -> QuerySet[AssessorWork]:
    return AssessorWork.objects.exclude(status=AssessorWork.Status.SUBMITTED)


def work_labels_counted(work: AssessorWork) -> bool:
    """Whether scores count the labels of this work now (`provisional_q` for one work in hand)."""
    return work.status == AssessorWork.Status.SUBMITTED


def _unfinished_jobs() -> QuerySet[Job]:
    unfinished = Job.objects.exclude(status__in=FINISHED_JOB_STATUSES)
    ahead = _counted_ahead.get()
    return unfinished.exclude(pk=ahead) if ahead is not None else unfinished


def unfinished_job_ids() -> QuerySet[Job, int]:
    """The ids of the jobs still running (a subquery: no query of its own)."""
    return _unfinished_jobs().values_list("pk", flat=True)


def provisional_q(prefix: str = "") -> Q:
    """Rows (labels, or what `prefix` leads to) made in open work or by an unfinished job.

    Both are subqueries over small tables (the work, the jobs), so the test
    adds no query and no join over the labels.
    """
    return Q(**{f"{prefix}work_id__in": _open_work().values("pk")}) | Q(
        **{f"{prefix}job_id__in": _unfinished_jobs().values("pk")}
    )


def provisional_flag(prefix: str = "") -> ExpressionWrapper:
    """`provisional_q` as a value to annotate rows with (`provisional=provisional_flag()`): pages that show
    every label, counted or not, mark the provisional ones."""
    return ExpressionWrapper(provisional_q(prefix), output_field=models.BooleanField())


def labels_counted(labels: QuerySet[M]) -> QuerySet[M]:
    """The labels scores count (all of them inside `open_work_included`)."""
    if _include_open.get():
        return labels
    return labels.exclude(provisional_q())


def counted_sql(alias: str = "") -> str:
    """`labels_counted` as a condition for raw SQL over a label table (`alias` like "a.")."""
    if _include_open.get():
        return "1 = 1"
    work = connection.ops.quote_name(AssessorWork._meta.db_table)
    jobs = connection.ops.quote_name(Job._meta.db_table)
    submitted = AssessorWork.Status.SUBMITTED.value
    finished = ", ".join(f"'{status.value}'" for status in FINISHED_JOB_STATUSES)
    ahead = _counted_ahead.get()
    also = f" OR {alias}job_id = {int(ahead)}" if ahead is not None else ""
    # Constants of the code only (and a job's id, an integer): no value from a request reaches this SQL.
    return (
        f"({alias}work_id IS NULL OR {alias}work_id IN (SELECT id FROM {work} WHERE status = '{submitted}')) AND "
        f"({alias}job_id IS NULL OR {alias}job_id IN (SELECT id FROM {jobs} WHERE status IN ({finished})){also})"
    )


def open_work_notes(works: QuerySet[AssessorWork], *, what: str) -> list[str]:
    """What an organizer must know of a source's human work that is not final, in sentences."""
    return open_work_sentences(open_work_by(works).get((), []), what=what)


def open_work_by(works: QuerySet[AssessorWork], *keys: str) -> dict[tuple, list[tuple[str, bool]]]:
    """The open work among `works`, grouped by the values of `keys` (fields of the work): (topic, redo) rows.

    One read of the open work (a few rows) for the notes of many sources at once."""
    grouped: dict[tuple, list[tuple[str, bool]]] = defaultdict(list)
    rows = works.exclude(status=AssessorWork.Status.SUBMITTED).order_by().values_list("topic_id", "redo", *keys)
    for topic, redo, *key in rows:
        grouped[tuple(key)].append((topic, redo))
    return grouped


def open_work_sentences(open_work: list[tuple[str, bool]], *, what: str) -> list[str]:
    """The notes of one source's open work: its topics, and which of them are reopened for changed nuggets."""
    notes = []
    topics = sorted(topic for topic, _ in open_work)
    counted = "counted as provisional" if _include_open.get() else "not counted"
    if topics:
        shown = ", ".join(published_id(topic) for topic in topics[:5])
        notes.append(f"{what} is still open on {len(topics)} topic(s) ({shown}): {counted}.")
    partly = sorted(topic for topic, redo in open_work if redo)
    if partly:
        notes.append(f"{what} is reopened for changed nuggets on {len(partly)} topic(s) ({', '.join(partly[:5])}).")
    return notes


@dataclass(frozen=True)
class JobNotFinal:
    """A job that keeps a source's scores from being final: still running, cancelled, or finished with failures."""

    pk: int
    status: str
    failed_items: int
    total_items: int


def jobs_not_final_by(*, kind: str, names: Sequence[str]) -> dict[str, list[JobNotFinal]]:
    """The jobs of a kind that keep each source (by output name) from being final, in one read.

    A running job's labels are provisional. A job that finished with failed items counts
    what it labelled, but that is part of what was asked: its source is partial until the
    job is resumed (`job_reopen`), which makes it running again.
    """
    jobs: dict[str, list[JobNotFinal]] = defaultdict(list)
    rows = (
        Job.objects.filter(kind=kind, output_name__in=names)
        .filter(~Q(status__in=FINISHED_JOB_STATUSES) | Q(status=Job.Status.FAILED, failed_items__gt=0))
        .order_by("-created_at", "-pk")
        .values_list("output_name", "pk", "status", "failed_items", "total_items")
    )
    for name, pk, status, failed, total in rows:
        jobs[name].append(JobNotFinal(pk=pk, status=status, failed_items=failed, total_items=total))
    return jobs


def job_sentences(
    jobs: list[JobNotFinal],
    *,
    into: str = "it",
    labels: str = "labels",
    partial: str = "its scores count only what it labelled",
) -> list[str]:
    """The notes of one source's jobs that are not final (`jobs_not_final_by`); `into`, `labels` and `partial`
    name the source, what the job makes and what a partial source holds, where scores are not the point."""
    sentences = []
    running = [str(job.pk) for job in jobs if job.status in (Job.Status.QUEUED, Job.Status.RUNNING)]
    if running:
        counted = "counted as provisional" if _include_open.get() else "not counted until it finishes"
        sentences.append(f"Job {', '.join(running)} still writes into {into}: its {labels} are {counted}.")
    cancelled = [str(job.pk) for job in jobs if job.status == Job.Status.CANCELLED]
    if cancelled:
        counted = "counted as provisional" if _include_open.get() else "not counted"
        sentences.append(f"Job {', '.join(cancelled)} was cancelled: its {labels} are {counted}.")
    for job in jobs:
        if job.status == Job.Status.FAILED:
            sentences.append(
                f"Partial: job {job.pk} failed on {job.failed_items} of {job.total_items} items; "
                f"{partial} until it is resumed."
            )
    return sentences


def qrels_notes(names: Sequence[str]) -> list[str]:
    """What keeps the named qrels sources from being final, in one read: the LLM job that writes a source
    (`QrelSource.job`, UMBRELA's) while it runs, once it was cancelled, or once it finished with failed items
    until it is resumed. Sources of files have none; each note once, in the order of `names`."""
    rows = (
        QrelSource.objects.filter(name__in=names, job__isnull=False)
        .filter(~Q(job__status__in=FINISHED_JOB_STATUSES) | Q(job__status=Job.Status.FAILED, job__failed_items__gt=0))
        .values_list("name", "job_id", "job__status", "job__failed_items", "job__total_items")
    )
    jobs = {
        name: JobNotFinal(pk=pk, status=status, failed_items=failed, total_items=total)
        for name, pk, status, failed, total in rows
    }
    notes: list[str] = []
    for name in dict.fromkeys(names):
        if name in jobs:
            notes += job_sentences(
                [jobs[name]],
                into=f"the qrels {name!r}",
                labels="grades",
                partial=f"the qrels {name!r} hold only the grades it made",
            )
    return notes


def open_work_overview() -> list[str]:
    """Every piece of human work not counted yet, by kind and source, in sentences (one read of the open work).

    A leaderboard lists only what counts: a condition whose every list is being edited again
    (reopened) or was never submitted is on none, and this says where it went.
    """
    rows = (
        _open_work()
        .order_by("kind", "source__name", "topic_id")
        .values_list("kind", "source__name", "topic_id", "reopened_count")
    )
    grouped: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for kind, source, topic, reopened in rows:
        reopened_topics, new_topics = grouped.setdefault((kind, source or ""), ([], []))
        (reopened_topics if reopened else new_topics).append(topic)
    sentences = []
    for (kind, source), (reopened_topics, new_topics) in grouped.items():
        parts = [
            f"{state} on {len(topics)} topic(s) ({', '.join(topics[:5])}{', ...' if len(topics) > 5 else ''})"
            for state, topics in (("reopened", reopened_topics), ("not submitted yet", new_topics))
            if topics
        ]
        name = f" into {source!r}" if source else ""
        sentences.append(f"{registry.work_label(kind)}{name}: {'; '.join(parts)}.")
    return sentences
