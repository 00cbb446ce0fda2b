"""The job engine: create a job and its items, claim and run items, cancel, resume.

An item is claimed by a conditional UPDATE (pending -> claimed, only while
the job is queued or running) and its row count: of two deliveries of one
task, one works and the other skips. Its result is written in the same
transaction that marks it done, and only if the claim is still this worker's:
a resumed, retried or duplicated task never redoes a finished item and never
writes a result twice. The LLM calls happen outside any transaction.

Each kind of job is registered by the app that owns it (assessor.registry.JobKind)
with its `compute(job=, item=, llm=)` (the calls; returns a result or raises)
and `store(job=, item=, result=)` (the writes).
"""

import copy
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from functools import partial
from typing import Any, NamedTuple, TypeVar

from django.contrib.auth.models import User
from django.db import DatabaseError, IntegrityError, close_old_connections, connections, router, transaction
from django.db.models import F
from django.utils import timezone

from assessor.campaigns.access import CampaignClosed, campaign_writable
from assessor.importing.base import statistics_refresh
from assessor.jobs.llm.client import LLMAnswerFailed, LLMConfig, LLMNotConfigured, LLMSession, LLMUnavailable, Usage
from assessor.jobs.llm.endpoints import endpoint_config
from assessor.jobs.llm.prompts import prompt_template_get
from assessor.models import Job, JobItem, LabelSource, LLMCall, PromptTemplate
from assessor.models.rows import Write, rows_insert_statement, with_writes, writes_joinable, writes_run
from assessor.models.scope import campaign_in_effect, campaign_scope
from assessor.names import name_problem
from assessor.project.celery import celery_task, worker_name
from assessor.registry import registry
from assessor.scoring.kept import scores_prepare_job, scores_refresh_job
from assessor.scoring.lifecycle import FINISHED_JOB_STATUSES
from assessor.scoring.written_ahead import ahead_dropped
from assessor.sources import DOING, SourceRefused, llm_described, source_claim, source_owner, source_refusal

logger = logging.getLogger(__name__)

T = TypeVar("T")

OPEN_STATUSES = (Job.Status.QUEUED, Job.Status.RUNNING)
FINAL_STATUSES = (Job.Status.DONE, Job.Status.FAILED, Job.Status.CANCELLED)


class JobRequestInvalid(ValueError):
    """What was asked cannot be done (an unknown topic, a name in use...); nothing was created."""


class ItemUnworkable(Exception):
    """An item that cannot be worked without a call (a passage without text...): it fails with this reason."""


# --- creation ---------------------------------------------------------------------


def job_create(
    *,
    kind: str,
    output_name: str,
    params: dict[str, Any],
    items: Iterable[tuple[str, dict[str, Any]]],
    prompts: Iterable[str],
    user: User | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
    family: str = "",
    owns_output: bool = True,
) -> Job:
    """The job row and its pending items, in one transaction (the caller may add rows to it).

    Its calls go to the named `endpoint` ("default" when None), or to `config`
    when given. `family` names the label family its output goes into: the job
    claims the LLM source of its output name there (assessor.sources), refused
    if people, files or another endpoint or model own the name. The job owns
    its output (`_job_insert`), unless `owns_output` is False: a job adding to
    an output whose owner is another job.
    """
    # Here as well as in output_name_check: no caller (a page, a command, a study, a benchmark) gets round the rule.
    if problem := name_problem(output_name):
        raise JobRequestInvalid(f"The name: {problem}")
    campaign = campaign_in_effect()
    try:
        campaign_writable(campaign)
    except CampaignClosed as closed:
        raise JobRequestInvalid(str(closed)) from None
    # An endpoint not named is the campaign's own default, else the deployment's.
    config = config or endpoint_config(endpoint or campaign.default_endpoint or None)
    items = list(items)
    if not items:
        raise JobRequestInvalid("the selection holds nothing to do")
    with transaction.atomic():
        versions = {name: prompt_template_get(name).version for name in prompts}
        job = _job_insert(
            kind=kind,
            output_name=output_name,
            output_family=output_family(kind=kind, family=family),
            owns_output=owns_output,
            params=params,
            model=config.model,
            endpoint_name=config.name,
            endpoint=config.base_url,
            prompt_versions=versions,
            created_by=user if user is not None and user.is_authenticated else None,
            campaign=campaign,
        )
        rows = [JobItem(job=job, key=key, payload=payload) for key, payload in items]
        JobItem.objects.bulk_create(rows, batch_size=1000)
        job.total_items = len(rows)
        job.save(update_fields=["total_items"])
        if family:
            try:
                source_claim(family=family, name=output_name, kind=LabelSource.Kind.LLM, job=job, user=user)
            except SourceRefused as exc:
                raise JobRequestInvalid(exc.message) from None
    return job


def output_family(*, kind: str, family: str) -> str:
    """Where a job's output name lives: the label family it claims a source in, else (a Crucible run) its kind."""
    return family or kind


def _output_owner(*, output_family: str, name: str) -> Job | None:
    """The job that owns the output (at most one: the constraint one_job_per_output)."""
    owners = Job.objects.filter(output_family=output_family, output_name=name, owns_output=True)
    return owners.exclude(status=Job.Status.CANCELLED).first()


def _owner_refusal(owner: Job, name: str) -> JobRequestInvalid:
    return JobRequestInvalid(
        f"Job {owner.pk} ({llm_described(owner.model, owner.endpoint_name)}) already produces {name!r}: "
        f"choose another name, or resume job {owner.pk}."
    )


def _output_claim(
    write: Callable[[], T], *, output_family: str, name: str, refusal: Callable[[Job], JobRequestInvalid]
) -> T:
    """Do `write`, which makes a job own an output (a new job's row, a cancelled job queued again).

    The database lets one job own an output (one_job_per_output): of two claims at the same moment, one is
    written and the other is refused here, naming the owner, with nothing made. `output_name_check` refuses a
    taken name earlier, in the same words; this is what holds when two launches pass it at once.
    """
    try:
        with transaction.atomic():
            return write()
    except IntegrityError:
        owner = _output_owner(output_family=output_family, name=name)
        if owner is None:
            raise
        raise refusal(owner) from None


def _job_insert(**fields: Any) -> Job:
    name = fields["output_name"]
    return _output_claim(
        lambda: Job.objects.create(**fields),
        output_family=fields["output_family"],
        name=name,
        refusal=lambda owner: _owner_refusal(owner, name),
    )


def job_source(job: Job, family: str) -> LabelSource:
    """The LLM source a job writes into (claimed when the job was made)."""
    return LabelSource.objects.get(family=family, name=job.output_name)


def job_source_id(job: Job, family: str) -> int:
    """The id of `job_source`, read once per job in a worker process (the job owns the source for its life)."""
    known = getattr(job, "_sources", None)
    if known is None:
        return job_source(job, family).pk
    if family not in known:
        known[family] = job_source(job, family).pk
    return known[family]


def output_name_check(*, kind: str, name: str, taken: bool, family: str) -> None:
    """Refuse a name already produced by another job or file: results are never written twice.

    A name that labels of `family` already hold is refused naming the source that owns it.
    """
    # Worded for the launch page and the command alike (its option is --name): no option syntax.
    if not name:
        raise JobRequestInvalid("A name is required: it names what the job produces.")
    if problem := name_problem(name):
        raise JobRequestInvalid(f"The name: {problem}")
    owner = _output_owner(output_family=output_family(kind=kind, family=family), name=name)
    if owner is not None:
        raise _owner_refusal(owner, name)
    if taken:
        source = LabelSource.objects.filter(family=family, name=name).first()
        if source is None:
            raise JobRequestInvalid(f"{name!r} is already in use: choose another name.")
        if source.kind != LabelSource.Kind.LLM:
            raise JobRequestInvalid(source_refusal(source, DOING[LabelSource.Kind.LLM]).message)
        raise JobRequestInvalid(f"{name!r} is already in use by {source_owner(source)}: choose another name.")


# --- running items ----------------------------------------------------------------


def item_claim(item_id: int, *, worker: str) -> bool:
    # The job's status as a subquery, not a join: Django turns a join into "id IN (SELECT ...)", whose
    # status test PostgreSQL would not re-check on the row after waiting for a concurrent claim.
    open_jobs = Job.objects.filter(status__in=OPEN_STATUSES).values("pk")
    claimed = JobItem.objects.filter(pk=item_id, status=JobItem.Status.PENDING, job_id__in=open_jobs).update(
        status=JobItem.Status.CLAIMED, claimed_by=worker, claimed_at=timezone.now(), attempts=F("attempts") + 1
    )
    return claimed == 1


# The jobs this process works items of, as read once: (id, created_at as the database returns it) -> the row. What a
# job kind's compute and store read of their job is what the job was made with (its kind, output, params, model,
# endpoint, prompt versions), fixed for its life; its status comes with each claim. The creation time tells a job
# apart from an earlier one of the same id (SQLite may give a deleted job's id again).
_jobs_read: dict[tuple[int, Any], Job] = {}
_jobs_lock = threading.Lock()
JOBS_KEPT = 64


# How far a claim counts the items of its job still pending after the one it takes (`Claimed.pending_after`).
PENDING_COUNTED = 64


class Claimed(NamedTuple):
    """An item a worker claimed, with a copy of its job holding the job's status at the claim."""

    item: JobItem
    job: Job
    # The job's items still pending after this one as it was claimed (at most PENDING_COUNTED): an item with fewer
    # left after it than its endpoint has calls in flight is among the job's last (`_item_work`).
    pending_after: int


def _item_claimed(item_id: int, *, worker: str) -> Claimed | None:
    """Claim the item as `item_claim` does and read it and its job in the same statement: the claimed item and a
    copy of its job with the job's current status, or None when it was not claimed."""
    return _claimed("id = %s", [item_id], worker=worker)


def _next_item_claimed(job_id: int, *, worker: str) -> Claimed | None:
    """Claim the job's first pending item as `_item_claimed` does; None when none is left or the job is not open.

    On PostgreSQL, workers claiming at once each skip the rows the others are claiming (SKIP LOCKED) instead of
    waiting for them and finding them taken; on SQLite a write runs alone.
    """
    connection = connections[router.db_for_write(JobItem)]
    items = connection.ops.quote_name(JobItem._meta.db_table)
    skip = " FOR UPDATE SKIP LOCKED" if connection.features.has_select_for_update_skip_locked else ""
    first_pending = f"SELECT id FROM {items} WHERE job_id = %s AND status = %s ORDER BY id LIMIT 1{skip}"
    return _claimed(f"id = ({first_pending})", [job_id, JobItem.Status.PENDING], worker=worker)


def claim_rehearsed(*, worker: str) -> None:
    """Run the claim of `_next_item_claimed` on no job (ids start at 1): it claims nothing, and the database session
    has planned it and read the catalogs it needs before a job's first items ask it all at once."""
    if _next_item_claimed(0, worker=worker) is not None:
        raise AssertionError("the rehearsal claimed an item of job 0")


def _claimed(which: str, params: list[Any], *, worker: str) -> Claimed | None:
    """Claim the pending item `which` names (SQL on its row, with its `params`) while its job is open."""
    connection = connections[router.db_for_write(JobItem)]
    quote = connection.ops.quote_name
    items, jobs = quote(JobItem._meta.db_table), quote(Job._meta.db_table)
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {items} SET status = %s, claimed_by = %s, claimed_at = %s, attempts = attempts + 1 "
            f"WHERE {which} AND status = %s AND job_id IN (SELECT id FROM {jobs} WHERE status IN (%s, %s)) "
            f"RETURNING id, job_id, {quote('key')}, payload, attempts, "
            f"(SELECT status FROM {jobs} WHERE {jobs}.id = {items}.job_id), "
            f"(SELECT created_at FROM {jobs} WHERE {jobs}.id = {items}.job_id), "
            # Items claimed at this moment by other threads may still read as pending: counted, a claim errs towards
            # more left after it.
            f"(SELECT count(*) FROM (SELECT 1 FROM {items} later WHERE later.job_id = {items}.job_id "
            f"AND later.status = %s AND later.id > {items}.id LIMIT %s) after_it)",
            [
                *(JobItem.Status.CLAIMED, worker, adapt(timezone.now()), *params, JobItem.Status.PENDING),
                *(*OPEN_STATUSES, JobItem.Status.PENDING, PENDING_COUNTED),
            ],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    item_id, job_id, key, payload, attempts, status, created, pending_after = row
    payload = JobItem._meta.get_field("payload").from_db_value(payload, None, connection)  # type: ignore[arg-type]
    item = JobItem(
        id=item_id, job_id=job_id, key=key, payload=payload, status=JobItem.Status.CLAIMED, claimed_by=worker,
        attempts=attempts,
    )  # fmt: skip
    with _jobs_lock:
        job = _jobs_read.get((job_id, created))
    if job is None:
        job = Job.objects.select_related("campaign").get(pk=job_id)
        job._prompts = {}  # type: ignore[attr-defined]  # its prompt versions' rows, read once (job_prompt)
        job._sources = {}  # type: ignore[attr-defined]  # its sources' ids by family, read once (job_source_id)
        with _jobs_lock:
            if len(_jobs_read) >= JOBS_KEPT:
                _jobs_read.clear()
            _jobs_read[(job_id, created)] = job
    # A copy per item (its threads share the read), holding the status the claim saw.
    job = copy.copy(job)
    job.status = status
    item.job = job
    return Claimed(item, job, pending_after)


# A job's calls are rows the answer cache looks up on every ask: on PostgreSQL, a long job analyzes their table
# each time this many of its items have finished, as autovacuum would where it runs (it may be off or behind), so
# that its look-ups are never planned on statistics from before the job.
CALLS_ANALYZE_EVERY = 10_000
# Once this many of a job's items are left unfinished, what its end will read is read ahead (`scores_prepare_job`):
# what a worker's threads have in hand (32 threads for a limit of 16), so that the thread reading has no item left
# to take and the rest still takes rounds of calls, longer than the read; the end reads those items' answers again.
PREPARE_WHEN_OPEN = 32


def _job_count(job_id: int, *, done: int = 0, failed: int = 0, usage: Usage) -> bool:
    """Add finished items and their calls' usage to the job in one write; True once every item is finished.

    Plain SQL for its RETURNING: the worker learns from the same write whether this was the job's last item, so
    that only then does it look for open items (a look per item cost a query per item), and whether the job's
    calls are due an ANALYZE (after the item's transaction: `_job_counted`).
    """
    connection = connections[router.db_for_write(Job)]
    sql, params = _job_count_statement(connection, job_id, done="%s", failed=failed, usage=usage)
    with connection.cursor() as cursor:
        cursor.execute(sql, [done, *params])
        row = cursor.fetchone()
    return _job_counted(row, connection, job_id=job_id, counted=bool(done or failed))


def _job_count_statement(connection: Any, job_id: int, *, done: str, failed: int, usage: Usage) -> tuple[str, list]:
    """`_job_count`'s UPDATE, the items done given as SQL (`done`: a parameter's mark, or a count of a WITH part),
    and its parameters but those of `done`."""
    table = connection.ops.quote_name(Job._meta.db_table)
    sql = (
        f"UPDATE {table} SET done_items = done_items + {done}, failed_items = failed_items + %s, "
        "calls = calls + %s, tokens_in = tokens_in + %s, tokens_out = tokens_out + %s, "
        "tokens_cached = tokens_cached + %s, cost_picodollars = cost_picodollars + %s WHERE id = %s "
        "RETURNING done_items + failed_items >= total_items, done_items + failed_items, total_items"
    )
    params = [
        failed,
        usage.calls,
        usage.tokens_in,
        usage.tokens_out,
        usage.tokens_cached,
        usage.cost_picodollars,
        job_id,
    ]
    return sql, params


def _job_counted(row: tuple | None, connection: Any, *, job_id: int, counted: bool) -> bool:
    """What `_job_count_statement`'s row says: whether every item is finished. `counted`: an item was added to the
    finished ones (the calls are then analyzed once the job has finished another CALLS_ANALYZE_EVERY, and its end is
    read ahead by the one item that leaves PREPARE_WHEN_OPEN unfinished, or the first of a smaller job)."""
    if row is None:
        return False
    finished, total = row[1], row[2]
    if counted and finished % CALLS_ANALYZE_EVERY == 0:
        transaction.on_commit(_calls_analyze, using=connection.alias)
    if counted and total > 1 and total - finished == min(PREPARE_WHEN_OPEN, total - 1):
        # After the commit, in this thread; a failure only leaves the end to read it all (logged, robust).
        transaction.on_commit(partial(scores_prepare_job, job_id), using=connection.alias, robust=True)
    return bool(row[0])


def _calls_analyze() -> None:
    """Refresh the planner's statistics of the calls table (PostgreSQL; SQLite's follow the job's end)."""
    connection = connections[router.db_for_write(LLMCall)]
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(LLMCall._meta.db_table)}")


def _item_fail(item: JobItem, *, worker: str, reason: str, raw: str, usage: Usage) -> bool:
    """Mark the item failed (if the claim is still this worker's); True when the job has no unfinished item left."""
    with transaction.atomic():
        failed = JobItem.objects.filter(pk=item.pk, status=JobItem.Status.CLAIMED, claimed_by=worker).update(
            status=JobItem.Status.FAILED, error=reason[:5000], raw_response=raw, finished_at=timezone.now()
        )
        return _job_count(item.job_id, failed=1 if failed else 0, usage=usage)


def _item_finish(
    item: JobItem,
    *,
    worker: str,
    store: Callable[[], None],
    usage: Usage,
    inserts: list[Write] | None = None,
    writes: list[Write] | None = None,
) -> tuple[bool, bool]:
    """Store the result and mark the item done, if the claim is still this worker's: (stored, job's last item).
    `inserts`: the result as INSERT statements (`_rows_statements`), written with the rest in one statement.
    `writes`: those of its calls (their logs), written first whatever becomes of the result; emptied once written."""
    if inserts is not None:
        return _item_finish_with_rows(item, worker=worker, inserts=inserts, usage=usage, writes=writes or [])
    _writes_left_run(writes or [])
    # The calls' usage is added to the job in the same write as the item's count (one write, not one per call).
    connection = connections[router.db_for_write(JobItem)]
    table = connection.ops.quote_name(JobItem._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        # Plain SQL: the ORM's building of this UPDATE cost as much CPU as the statement, on every item.
        cursor.execute(
            f"UPDATE {table} SET status = %s, error = '', raw_response = '', finished_at = %s "
            "WHERE id = %s AND status = %s AND claimed_by = %s",
            [
                JobItem.Status.DONE,
                connection.ops.adapt_datetimefield_value(timezone.now()),
                item.pk,
                JobItem.Status.CLAIMED,
                worker,
            ],
        )
        finished = cursor.rowcount
        if not finished:
            # The claim was taken back (a resume): another worker owns this item now.
            return False, _job_count(item.job_id, usage=usage) if usage.calls else False
        store()
        return True, _job_count(item.job_id, done=1, usage=usage)


def _item_finish_with_rows(
    item: JobItem, *, worker: str, inserts: list[Write], usage: Usage, writes: list[Write]
) -> tuple[bool, bool]:
    """`_item_finish` in one statement (PostgreSQL), for a result that is rows to insert (`inserts`: each an
    `INSERT ... SELECT` and its parameters, `rows_insert_statement`): the item marked done if the claim is still this
    worker's, the rows inserted only then, and the job's counts and the calls' usage added either way. One round
    trip, where the transaction of the three writes took five (its BEGIN and COMMIT included)."""
    connection = connections[router.db_for_write(JobItem)]
    items = connection.ops.quote_name(JobItem._meta.db_table)
    parts = [
        f"finished AS (UPDATE {items} SET status = %s, error = '', raw_response = '', finished_at = %s "
        "WHERE id = %s AND status = %s AND claimed_by = %s RETURNING 1)"
    ]
    params: list[Any] = [
        JobItem.Status.DONE,
        connection.ops.adapt_datetimefield_value(timezone.now()),
        item.pk,
        JobItem.Status.CLAIMED,
        worker,
    ]
    for number, (insert, values) in enumerate(inserts):
        parts.append(f"stored_{number} AS ({insert} WHERE EXISTS (SELECT 1 FROM finished))")
        params += values
    done = "(SELECT count(*) FROM finished)"
    count, count_params = _job_count_statement(connection, item.job_id, done=done, failed=0, usage=usage)
    # One statement needs no transaction of its own; inside a caller's, a savepoint, so that a statement refused
    # (a label stored meanwhile under the same name) leaves the caller's transaction usable for the item's failure.
    guard = transaction.atomic(using=connection.alias) if connection.in_atomic_block else nullcontext()
    sql, params = with_writes(writes, f"WITH {', '.join(parts)} {count}, {done}", [*params, *count_params])
    with guard, connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    writes.clear()
    stored = row is not None and bool(row[3])  # after `_job_count_statement`'s three: the count of `finished`
    # The claim was taken back (a resume): another worker owns this item, and only the calls' usage was added.
    return stored, _job_counted(row, connection, job_id=item.job_id, counted=stored)


def job_complete_if_finished(job_id: int) -> None:
    """Mark a queued or running job with no item left open done (failed, if an item failed), and make its labels
    count."""
    with transaction.atomic():
        finished = _job_finished(job_id)
        if finished is not None:
            # The job's labels count from now on.
            scores_refresh_job(job_id, kind=finished[0])
    if finished is not None:
        # The one caller that finished the job: its labels or grades are rows the planner must know of, as after
        # an import (a TREC-scale relevance job writes as many as a qrels file).
        statistics_refresh(rows=finished[1])


def _job_finished(job_id: int) -> tuple[str, int] | None:
    """Mark the job done (failed, if an item failed) if it is open and no item of it is; its kind and its done
    items' count when this call did, else None. One statement decides: the check for open items and the status
    the failed count gives are read with the row (a plain one: the job's end is on its critical path, and the
    ORM's build of it cost as much CPU as the rest of the statement's round trip)."""
    connection = connections[router.db_for_write(Job)]
    quote = connection.ops.quote_name
    jobs, items = quote(Job._meta.db_table), quote(JobItem._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {jobs} SET status = CASE WHEN failed_items = 0 THEN %s ELSE %s END, finished_at = %s "
            f"WHERE id = %s AND status IN (%s, %s) "
            f"AND NOT EXISTS (SELECT 1 FROM {items} WHERE {items}.job_id = %s AND {items}.status IN (%s, %s)) "
            f"RETURNING kind, done_items",
            [
                *(Job.Status.DONE, Job.Status.FAILED, connection.ops.adapt_datetimefield_value(timezone.now())),
                *(job_id, *OPEN_STATUSES, job_id, JobItem.Status.PENDING, JobItem.Status.CLAIMED),
            ],
        )
        row = cursor.fetchone()
    return (row[0], row[1]) if row is not None else None


def item_process(item_id: int, *, config: LLMConfig | None = None) -> str:
    """Claim and work one item: "done", "failed", or "skipped" (not pending, or its job is not open)."""
    worker = worker_name()
    claimed = _item_claimed(item_id, worker=worker)
    if claimed is None:
        return "skipped"
    return _claimed_item_work(claimed, worker=worker, config=config)


def job_items_process(job_id: int, count: int, *, config: LLMConfig | None = None) -> dict[str, int]:
    """Claim and work up to `count` of the job's pending items, one after the other, each claimed as the last
    finishes; returns counts by outcome. Stops early once no item is pending or the job is no longer open.

    What one task message asks (`job_dispatch`): the workers' threads take items as they free up, so a job's last
    items are shared out as evenly as one message per item would share them, for a fraction of the messages.
    """
    worker = worker_name()
    counts = {"done": 0, "failed": 0, "skipped": 0}
    for _ in range(count):
        claimed = _next_item_claimed(job_id, worker=worker)
        if claimed is None:
            break
        try:
            counts[_claimed_item_work(claimed, worker=worker, config=config)] += 1
        except Exception:
            # The item stays claimed, for a resume to find, as when a task of its own failed; the items still to
            # be claimed are not left without a message.
            logger.exception("job %s item %s", job_id, claimed.item.key)
            counts["failed"] += 1
    return counts


def _claimed_item_work(claimed: Claimed, *, worker: str, config: LLMConfig | None) -> str:
    item, job = claimed.item, claimed.job
    if job.status == Job.Status.QUEUED:
        Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(
            status=Job.Status.RUNNING, started_at=timezone.now()
        )
    # The item's rows are its job's campaign's (what it reads of the collection, the sources it writes).
    with campaign_scope(job.campaign):
        return _item_work(item, job, worker=worker, config=config, pending_after=claimed.pending_after)


def _item_work(item: JobItem, job: Job, *, worker: str, config: LLMConfig | None, pending_after: int) -> str:
    work = registry.job_kind(job.kind)
    outcome = "failed"
    llm: LLMSession | None = None
    try:
        base = config or endpoint_config(job.endpoint_name)
        # The job names its model: a worker configured otherwise still uses it.
        # Its calls' logs go with its next statement (`LLMSession.defer_writes`), the last with the item's finish.
        llm = LLMSession(
            config=replace(base, model=job.model),
            job_id=job.pk,
            item_id=item.pk,
            defer_writes=True,
            among_last=pending_after < min(base.concurrency, PENDING_COUNTED),
        )
        result = work.compute(job=job, item=item, llm=llm)
    except Exception as exc:
        usage = Usage()
        if llm is not None:
            llm.writes_flush()
            usage = llm.usage_take()
        reason, raw = item_failure_reason(exc, job=job, item=item)
        last = _item_fail(item, worker=worker, reason=reason, raw=raw, usage=usage)
    except BaseException:
        if llm is not None:
            llm.writes_flush()  # a worker told to stop in mid-item: the calls it made are logged all the same
        raise
    else:
        outcome, last = item_result_store(
            job, item, worker=worker, result=result, usage=llm.usage_take(), writes=llm.writes_take()
        )
    if last:
        job_complete_if_finished(job.pk)
    return outcome


def item_failure_reason(exc: Exception, *, job: Job, item: JobItem) -> tuple[str, str]:
    """Why an item's compute failed, and the answer that could not be used: the item's error and raw response."""
    if isinstance(exc, LLMAnswerFailed):
        return exc.reason, exc.raw
    if isinstance(exc, (LLMUnavailable, LLMNotConfigured, ItemUnworkable)):
        return str(exc), ""
    # A bug must not leave the item claimed for ever.
    logger.exception("job %s item %s", job.pk, item.key)
    return f"{type(exc).__name__}: {exc}", ""


def item_result_store(
    job: Job, item: JobItem, *, worker: str, result: Any, usage: Usage, writes: Sequence[Write] = ()
) -> tuple[str, bool]:
    """Store a computed item's result and mark it done; ("done" | "skipped" | "failed", whether it was the last).
    `writes`: its session's writes still to run (`LLMSession.writes_take`), whatever becomes of the result."""
    work = registry.job_kind(job.kind)
    left = list(writes)  # emptied once they are written
    try:
        inserts = _rows_statements(work.rows(job=job, item=item, result=result)) if work.rows else None
        stored, last = _item_finish(
            item,
            worker=worker,
            store=lambda: work.store(job=job, item=item, result=result),
            usage=usage,
            inserts=inserts,
            writes=left,
        )
    except DatabaseError as exc:
        # Rolled back (say, a person stored a result of the same name meanwhile): the item fails, visibly. The
        # calls' logs went back with the rest: they are written now.
        logger.exception("job %s item %s: storing the result", job.pk, item.key)
        _writes_left_run(left)
        last = _item_fail(item, worker=worker, reason=f"could not store the result: {exc}", raw="", usage=usage)
        return "failed", last
    except BaseException:
        _writes_left_run(left)  # a worker told to stop before the item's finish: its calls are logged all the same
        raise
    return ("done" if stored else "skipped"), last


def _writes_left_run(writes: list[Write]) -> None:
    """Run on their own the writes not yet written (`_item_finish` empties the list once it has), and empty it."""
    if writes:
        writes_run(writes, using=router.db_for_write(LLMCall))
        writes.clear()


def _rows_statements(rows: list[tuple[type, list[dict[str, Any]]]] | None) -> list[Write] | None:
    """A kind's rows of an item (`JobKind.rows`) as INSERT statements to run beside the item's finish; None when
    the kind's `store` must write them (no rows given, or a model or database without the one-statement form)."""
    if rows is None or not writes_joinable(router.db_for_write(JobItem)):
        return None
    inserts = []
    for model, model_rows in rows:
        if not model_rows:
            continue
        insert = rows_insert_statement(model, model_rows)
        if insert is None:
            return None
        inserts.append(insert)
    return inserts


# --- dispatch ------------------------------------------------------------------------

# The tasks (assessor.jobs.tasks) call this engine; the engine finds them by name in the
# Celery app, so that neither module imports the other.
ITEM_TASK = "assessor.job_item_run"
# Up to this many of a job's pending items, claimed one at a time (`job_items_process`). Each message costs a
# worker as much CPU as the job's own work on an answer (its delivery, acknowledgement and log lines); a message of
# several items shares that out, and a worker stopping waits for at most this many items of the message in hand.
ITEMS_TASK = "assessor.job_items_run"
ITEMS_PER_MESSAGE = 8
# A message whose thread claimed its whole count sends one more for its job (`job_items_continue`): a thread that has
# worked its message's items while others still work theirs goes on claiming through it, or a thread that has freed
# up does, so that a job's last items are never left to the few messages with room for them, one after the other.
# Sent as the need shows, not with the job: spares sent with it (as many as its share) were taken only once every
# first message had ended, when no item was left pending, each a message and a claim for nothing as the job's last
# calls went out (18 of a 400-call job's 50, 7.14-7.22 s into its 7.8 s: bench_llm's worker traced).
# Only a job's last messages send one more so: a thread done with an earlier one finds later ones queued behind it,
# and one more from each of them would be a message for nothing (250 of a 4,000-call job's 500, each claiming nothing,
# all at the job's end: 1.3-1.8 ms more of the worker's CPU an answer, and 0.35-0.53 s more wall, bench_llm).
# A small job still goes out in this many messages (never more than one an item), so that it is worked by as many
# threads at once as a worker has for twice an endpoint limit of 16 calls; of a larger job's, this many last ones
# send one more.
MESSAGES_AT_LEAST = 32
DISPATCH_TASK = "assessor.job_dispatch"
# A batch-mode job's steps (assessor.jobs.batch): rounds of its items and its batches at the provider.
BATCH_STEP_TASK = "assessor.job_batch_step"


def pending_item_ids(job_id: int) -> list[int]:
    return list(JobItem.objects.filter(job_id=job_id, status=JobItem.Status.PENDING).values_list("id", flat=True))


def messages_for(items: int) -> int:
    """How many messages of `ITEMS_PER_MESSAGE` items carry `items` pending items: their share, at least
    MESSAGES_AT_LEAST, never more than one an item (more follow as messages use up their count: `job_items_continue`)."""
    return min(items, max(-(-items // ITEMS_PER_MESSAGE), MESSAGES_AT_LEAST))


def messages_going_on(messages: int) -> int:
    """Of a job's `messages` sent together, how many last ones send one more once they have claimed their whole count
    (`job_items_continue`): every earlier one has at least MESSAGES_AT_LEAST queued behind it."""
    return min(messages, MESSAGES_AT_LEAST)


def job_items_continue(job_id: int, count: int, counts: dict[str, int], *, goes_on: bool = True) -> bool:
    """After a message's items (`job_items_process` and its `counts`): one that claimed its whole `count` may have left
    items pending, and one more message is sent for them, to the job's queue; returns whether it was. One that
    claimed fewer found none pending, or its job no longer open: none is; nor is one sent by a message that does not
    go on (`goes_on`: one of a job's earlier messages, with later ones queued behind it)."""
    if not goes_on or sum(counts.values()) < count:
        return False
    params = Job.objects.filter(pk=job_id).values_list("params", flat=True).first()
    if params is None:
        return False
    celery_task(ITEMS_TASK).apply_async(args=[job_id, count], queue=params.get("queue") or None)
    return True


def job_dispatch(job: Job) -> int:
    """Queue the job's pending items (after the commit), `ITEMS_PER_MESSAGE` to a task; returns how many items."""
    # Counted, not listed: a message names its job, and claims the items itself.
    pending = JobItem.objects.filter(job_id=job.pk, status=JobItem.Status.PENDING).count()
    queue = job.params.get("queue") or None
    if job.mode == Job.Mode.BATCH:
        # One task works the rounds and polls the batches; it queues its own next step.
        transaction.on_commit(lambda: celery_task(BATCH_STEP_TASK).apply_async(args=[job.pk], queue=queue))
        return pending

    def send() -> None:
        task = celery_task(ITEMS_TASK)
        messages = messages_for(pending)
        # Queued first, taken first: the last ones go on (`messages_going_on`), the messages sent for them too.
        earlier = messages - messages_going_on(messages)
        for number in range(messages):
            options = {"kwargs": {"goes_on": False}} if number < earlier else {}
            task.apply_async(args=[job.pk, ITEMS_PER_MESSAGE], queue=queue, **options)

    transaction.on_commit(send)
    return pending


def job_queue(job: Job) -> None:
    """Queue one task that fans the job's items out from a worker, so a web request never sends thousands."""
    queue = job.params.get("queue") or None
    transaction.on_commit(lambda: celery_task(DISPATCH_TASK).apply_async(args=[job.pk], queue=queue))


def _process_in_thread(item_id: int, config: LLMConfig | None) -> str:
    close_old_connections()
    try:
        return item_process(item_id, config=config)
    finally:
        connections.close_all()


def job_run_sync(job_id: int, *, threads: int = 1, config: LLMConfig | None = None) -> dict[str, int]:
    """Work every pending item in this process, `threads` at a time; returns counts by outcome."""
    ids = pending_item_ids(job_id)
    counts = {"done": 0, "failed": 0, "skipped": 0}
    if threads <= 1:
        outcomes: Iterable[str] = (item_process(item_id, config=config) for item_id in ids)
    else:
        pool = ThreadPoolExecutor(max_workers=threads)
        outcomes = pool.map(lambda item_id: _process_in_thread(item_id, config), ids)
    for outcome in outcomes:
        counts[outcome] += 1
    if threads > 1:
        pool.shutdown()
    job_complete_if_finished(job_id)
    return counts


# --- cancel and resume -------------------------------------------------------------


def job_cancel(job_id: int) -> bool:
    """Stop a job: pending items stay pending (a resume picks them up); items in flight finish. What was written
    ahead of its end is deleted (a resumed job's end writes it again)."""
    cancelled = Job.objects.filter(pk=job_id, status__in=OPEN_STATUSES).update(
        status=Job.Status.CANCELLED, finished_at=timezone.now()
    )
    if cancelled:
        ahead_dropped(job_id)
    return bool(cancelled)


def job_reopen(job_id: int, *, retry_failed: bool = True) -> int:
    """Make a job's unfinished items pending again and the job queued; returns the number pending.

    Items claimed by a worker that died go back to pending; so do failed items
    when `retry_failed` (their successful calls are cached, so a retry costs
    only what failed). Finished items are never touched. A running or cancelled
    job with nothing left to do is ended, as its last item's worker would have
    ended it.
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        JobItem.objects.filter(job=job, status=JobItem.Status.CLAIMED).update(
            status=JobItem.Status.PENDING, claimed_by="", claimed_at=None
        )
        if retry_failed:
            again = JobItem.objects.filter(job=job, status=JobItem.Status.FAILED).update(
                status=JobItem.Status.PENDING, error="", raw_response="", finished_at=None
            )
            if again:
                Job.objects.filter(pk=job.pk).update(failed_items=F("failed_items") - again)
        pending = JobItem.objects.filter(job=job, status=JobItem.Status.PENDING).count()
        # A cancelled job with nothing pending was cancelled once every item had finished (a job its last item's
        # worker left running, cancelled to be resumed from its page): resumed, it has only its end left, its output
        # claimed back first.
        if pending or job.status == Job.Status.CANCELLED:
            _job_requeue(job)
        if pending and job.status in FINISHED_JOB_STATUSES:
            # A finished job running again: its labels stop counting until it finishes.
            scores_refresh_job(job.pk)
    if not pending:
        # Every item is finished, and the job may still be open: the worker of its last item stopped between that
        # item's commit and the job's end. Nothing would end it now; this does (a done or failed job is left).
        job_complete_if_finished(job_id)
    return pending


def _job_requeue(job: Job) -> None:
    """Queue the job again; a cancelled job claims its output again, refused if another job took it meanwhile."""
    _output_claim(
        lambda: Job.objects.filter(pk=job.pk).update(status=Job.Status.QUEUED, finished_at=None, error=""),
        output_family=job.output_family,
        name=job.output_name,
        refusal=lambda owner: JobRequestInvalid(
            f"Job {job.pk} cannot resume: since it was cancelled, job {owner.pk} "
            f"({llm_described(owner.model, owner.endpoint_name)}) produces {job.output_name!r}."
        ),
    )


def job_resume(job_id: int, *, retry_failed: bool = True) -> int:
    """Reopen the job and queue its pending items on the broker; returns how many were queued."""
    if not job_reopen(job_id, retry_failed=retry_failed):
        return 0
    return job_dispatch(Job.objects.get(pk=job_id))


# --- watching ------------------------------------------------------------------------


def job_progress_line(job: Job) -> str:
    return (
        f"job {job.pk} {job.status}: {job.done_items + job.failed_items}/{job.total_items} items "
        f"({job.failed_items} failed), {job.calls} calls, {job.tokens_in}+{job.tokens_out} tokens, ${job.cost}"
    )


def job_wait(job_id: int, *, report: Callable[[str], None], interval: float = 1.0, timeout: float | None = None) -> Job:
    """Poll the job until it is finished or cancelled, reporting each change of progress."""
    started = time.monotonic()
    last = ""
    while True:
        job = Job.objects.get(pk=job_id)
        line = job_progress_line(job)
        if line != last:
            report(line)
            last = line
        if job.status in FINAL_STATUSES:
            return job
        if timeout is not None and time.monotonic() - started > timeout:
            return job
        time.sleep(interval)


def job_prompt(job: Job, name: str) -> PromptTemplate:
    """The prompt version the job was created with, so that all its results share one version.

    Read once per job in a worker process: a version's row never changes (its text and parameters are its hash).
    """
    known = getattr(job, "_prompts", None)
    if known is None:
        return PromptTemplate.objects.get(name=name, version=job.prompt_versions[name])
    if name not in known:
        known[name] = PromptTemplate.objects.get(name=name, version=job.prompt_versions[name])
    return known[name]
