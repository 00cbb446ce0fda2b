"""Batch mode: a job's calls sent through the provider's batch interface, at its batch price.

A batch-mode job goes in rounds. A round runs every pending item's `compute` with a BatchSession
(assessor.jobs.llm.batch_client): an item whose asks all have answers (the cache's, or earlier batches') is stored
as the live path stores it (the engine's claim and finish, in the same transaction); an item that asks for
something not yet answered records the request and stays pending. The round's wanted requests become its batches,
split at the provider's limits (LLM_BATCH_MAX_REQUESTS, LLM_BATCH_MAX_BYTES), uploaded and created; a step polls
them, reads their output and error files into the requests, and runs the next round, until no item is pending.

Every step is written down before it is taken, so that a restart of any process at any point pays no request
twice: the batches and their requests before the upload; the file's id right after the upload (a lost id costs
one more file, no call); the state "creating" before a batch is created and its id right after (a restart that
lost the id finds the batch by its metadata with `batches.list()` rather than creating a second). Reading a
finished batch is one transaction. One step of a job runs at a time (a lease on the job).

A batch that failed, expired or was cancelled falls back to what it answered: those answers count (the items they
complete are stored), the rest of its requests wait again, and the job stops as failed, saying why, to be resumed
in batch mode or live. A request the provider failed transiently (429, 5xx) is sent again in a later round, up to
LLM_MAX_RETRIES times; then its item fails with the reason.
"""

import json
import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.db.models import Count, F, Sum
from django.utils import timezone

from assessor.jobs.engine import (
    BATCH_STEP_TASK,
    JobRequestInvalid,
    _item_fail,
    _job_count,
    item_claim,
    item_failure_reason,
    item_result_store,
    job_complete_if_finished,
    job_progress_line,
)
from assessor.jobs.llm.batch_client import (
    AskDeferred,
    BatchSession,
    batch_body,
    step_lease_claim,
    step_lease_release,
)
from assessor.jobs.llm.client import (
    LLMConfig,
    LLMNotConfigured,
    _openai_client,
)
from assessor.jobs.llm.endpoints import endpoint_config
from assessor.jobs.llm.inflight import holder_name
from assessor.models import Job, JobItem, LLMBatch, LLMBatchRequest
from assessor.models.jobs import dollars
from assessor.models.scope import campaign_of_row, campaign_scope, scoped_campaign
from assessor.project.celery import celery_task, worker_name
from assessor.registry import registry

logger = logging.getLogger(__name__)

CHAT_PATH = "/v1/chat/completions"

State = LLMBatch.State
Status = LLMBatchRequest.Status
# The provider's states of a batch still at work, and of one that ended.
AT_WORK = (State.VALIDATING, State.IN_PROGRESS, State.FINALIZING, State.CANCELLING)
ENDED = (State.COMPLETED, State.FAILED, State.EXPIRED, State.CANCELLED)
FALLBACKS = (State.FAILED, State.EXPIRED, State.CANCELLED)
OURS = (State.NEW, State.UPLOADED, State.CREATING)
# An error the provider may not make again: the request goes in a later round's batch.
# The error lines of the requests an expired or cancelled batch never reached.
UNSENT_CODES = {"batch_expired", "batch_cancelled"}
TRANSIENT_CODES = {"rate_limit_exceeded", "server_error", "timeout", "internal_error", "service_unavailable"}

# A step holds its job this long without news; a step that died frees it when it runs out.
STEP_LEASE_SECONDS = 600.0

# Tests stop the flow between two steps by raising from here; it is called with each point's name.
checkpoint: Callable[[str], None] | None = None


def _checkpoint(point: str) -> None:
    if checkpoint is not None:
        checkpoint(point)


# --- choosing batch mode --------------------------------------------------------------


def batch_refusal(endpoint_name: str | None) -> str:
    """Why a job of endpoint `endpoint_name` cannot run in batch mode; empty when it can."""
    try:
        config = endpoint_config(endpoint_name)
    except LLMNotConfigured as exc:
        return str(exc)
    if not config.batch:
        return (
            f"The LLM endpoint {config.name!r} does not offer batch mode: mark it with batch = true "
            "(LLM_BATCH=1 for the default endpoint, or on its page) if its provider has the batch interface."
        )
    return ""


def job_mode_set(job: Job, *, mode: str, reasks: str = Job.Mode.BATCH) -> None:
    """Run `job` live or in batch mode from now on (a new job, or one resumed); refused if its endpoint has none."""
    if mode == Job.Mode.BATCH and (refusal := batch_refusal(job.endpoint_name)):
        raise JobRequestInvalid(refusal)
    Job.objects.filter(pk=job.pk).update(mode=mode, batch_reasks=reasks)
    job.mode, job.batch_reasks = mode, reasks


def batch_dispatch(job: Job) -> None:
    """Queue the job's first step (after the commit); it queues the next until the job ends."""
    queue = job.params.get("queue") or None
    transaction.on_commit(lambda: celery_task(BATCH_STEP_TASK).apply_async(args=[job.pk], queue=queue))


# --- a round ----------------------------------------------------------------------------


def _job_config(job: Job) -> LLMConfig:
    return replace(endpoint_config(job.endpoint_name), model=job.model)


def batch_item_process(item_id: int, *, config: LLMConfig, reasks_live: bool, record: bool = True) -> str:
    """Claim and work one item with the batch session: "done", "failed", "deferred" or "skipped"."""
    worker = worker_name()
    if not item_claim(item_id, worker=worker):
        return "skipped"
    item = JobItem.objects.select_related("job").get(pk=item_id)
    job = item.job
    if job.status == Job.Status.QUEUED:
        Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(
            status=Job.Status.RUNNING, started_at=timezone.now()
        )
    work = registry.job_kind(job.kind)
    llm = BatchSession(config=config, job_id=job.pk, item_id=item.pk, reasks_live=reasks_live, record=record)
    try:
        result = work.compute(job=job, item=item, llm=llm)
    except AskDeferred:
        with transaction.atomic():
            JobItem.objects.filter(pk=item.pk, status=JobItem.Status.CLAIMED, claimed_by=worker).update(
                status=JobItem.Status.PENDING, claimed_by="", claimed_at=None
            )
            _job_count(job.pk, usage=llm.usage_take())
        return "deferred"
    except Exception as exc:
        usage = llm.usage_take()
        reason, raw = item_failure_reason(exc, job=job, item=item)
        _item_fail(item, worker=worker, reason=reason, raw=raw, usage=usage)
        return "failed"
    outcome, _last = item_result_store(job, item, worker=worker, result=result, usage=llm.usage_take())
    return outcome


def _in_thread(work: Callable[[int], str], item_id: int) -> str:
    close_old_connections()
    try:
        return work(item_id)
    finally:
        connections.close_all()


def batch_round(job: Job, *, threads: int = 1, record: bool = True) -> dict[str, int]:
    """Work every pending item once with the answers in so far; counts by outcome."""
    config = _job_config(job)
    reasks_live = job.batch_reasks == Job.Mode.LIVE

    campaign = scoped_campaign()  # the round's threads work in the step's campaign (a thread starts outside it)

    def work(item_id: int) -> str:
        with campaign_scope(campaign):
            return batch_item_process(item_id, config=config, reasks_live=reasks_live, record=record)

    ids = list(JobItem.objects.filter(job=job, status=JobItem.Status.PENDING).values_list("id", flat=True))
    counts = {"done": 0, "failed": 0, "deferred": 0, "skipped": 0}
    if threads <= 1:
        outcomes: Iterable[str] = (work(item_id) for item_id in ids)
        for outcome in outcomes:
            counts[outcome] += 1
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for outcome in pool.map(lambda item_id: _in_thread(work, item_id), ids):
                counts[outcome] += 1
    return counts


# --- the batches ------------------------------------------------------------------------


def _line(config: LLMConfig, row: LLMBatchRequest) -> bytes:
    body = batch_body(config, row.messages, row.options)
    line = {"custom_id": row.custom_id, "method": "POST", "url": CHAT_PATH, "body": body}
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def batches_split(sizes: list[int], *, max_requests: int, max_bytes: int) -> list[range]:
    """Consecutive runs of requests (by their lines' sizes) with at most `max_requests` and `max_bytes` each."""
    runs: list[range] = []
    start, total = 0, 0
    for index, size in enumerate(sizes):
        if index > start and (index - start >= max_requests or total + size > max_bytes):
            runs.append(range(start, index))
            start, total = index, 0
        total += size
    if start < len(sizes):
        runs.append(range(start, len(sizes)))
    return runs


def batches_make(job: Job, config: LLMConfig) -> list[LLMBatch]:
    """The round's batches of the job's wanted requests, written with their requests before anything is sent."""
    with transaction.atomic():
        rows = list(
            LLMBatchRequest.objects.select_for_update()
            .filter(job=job, status=Status.WANTED, batch__isnull=True)
            .order_by("id")
        )
        if not rows:
            return []
        sizes = [len(_line(config, row)) for row in rows]
        round_number = (job.llm_batches.order_by("-round").values_list("round", flat=True).first() or 0) + 1
        made = []
        for run in batches_split(
            sizes, max_requests=settings.LLM_BATCH_MAX_REQUESTS, max_bytes=settings.LLM_BATCH_MAX_BYTES
        ):
            batch = LLMBatch.objects.create(job=job, round=round_number, request_total=len(run))
            LLMBatchRequest.objects.filter(pk__in=[rows[index].pk for index in run]).update(
                batch=batch, status=Status.SENT, attempts=F("attempts") + 1
            )
            made.append(batch)
    _checkpoint("batches_made")
    return made


def _metadata(batch: LLMBatch) -> dict[str, str]:
    return {"assessor_job": str(batch.job_id), "assessor_batch": str(batch.pk)}


def _batch_upload(client: Any, config: LLMConfig, batch: LLMBatch) -> None:
    rows = batch.requests.order_by("id")
    data = b"".join(_line(config, row) for row in rows)
    uploaded = client.files.create(file=(f"job{batch.job_id}-batch{batch.pk}.jsonl", data), purpose="batch")
    _checkpoint("file_uploaded")
    LLMBatch.objects.filter(pk=batch.pk).update(input_file_id=uploaded.id, state=State.UPLOADED)
    batch.input_file_id, batch.state = uploaded.id, State.UPLOADED
    _checkpoint("file_saved")


def _batch_found(client: Any, batch: LLMBatch) -> Any | None:
    """The provider's batch made for this row by a step that died before writing its id down."""
    wanted = _metadata(batch)
    for remote in client.batches.list(limit=100):
        metadata = remote.metadata or {}
        if all(metadata.get(name) == value for name, value in wanted.items()) and (
            remote.input_file_id == batch.input_file_id
        ):
            return remote
    return None


def _batch_create(client: Any, batch: LLMBatch) -> None:
    remote = _batch_found(client, batch) if batch.state == State.CREATING else None
    if remote is None:
        LLMBatch.objects.filter(pk=batch.pk).update(state=State.CREATING)
        batch.state = State.CREATING
        _checkpoint("batch_creating")
        remote = client.batches.create(
            input_file_id=batch.input_file_id,
            endpoint=CHAT_PATH,
            completion_window=settings.LLM_BATCH_WINDOW,
            metadata=_metadata(batch),
        )
        _checkpoint("batch_created")
    _batch_update(batch, remote, submitted=True)
    _checkpoint("batch_saved")


def _when(seconds: int | None):
    if not seconds:
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, tz=UTC)


def _batch_update(batch: LLMBatch, remote: Any, *, submitted: bool = False) -> None:
    counts = getattr(remote, "request_counts", None)
    errors = getattr(remote, "errors", None)
    reasons = [error.message for error in (getattr(errors, "data", None) or []) if getattr(error, "message", None)]
    fields: dict[str, Any] = {
        "provider_id": remote.id,
        "state": remote.status,
        "output_file_id": remote.output_file_id or "",
        "error_file_id": remote.error_file_id or "",
    }
    if counts is not None:
        fields.update(
            request_total=counts.total or batch.request_total,
            request_completed=counts.completed,
            request_failed=counts.failed,
        )
    if reasons:
        fields["error"] = "; ".join(reasons)[:5000]
    if submitted and batch.submitted_at is None:
        fields["submitted_at"] = timezone.now()
    if remote.status in ENDED and batch.finished_at is None:
        ended = (
            getattr(remote, "completed_at", None)
            or getattr(remote, "failed_at", None)
            or getattr(remote, "expired_at", None)
            or getattr(remote, "cancelled_at", None)
        )
        fields["finished_at"] = _when(ended) or timezone.now()
    LLMBatch.objects.filter(pk=batch.pk).update(**fields)
    for name, value in fields.items():
        setattr(batch, name, value)


def _transient(status_code: int | None, code: str) -> bool:
    return status_code in (408, 409, 429) or (status_code or 0) >= 500 or code in TRANSIENT_CODES


def _file_lines(client: Any, file_id: str) -> list[dict]:
    if not file_id:
        return []
    content = client.files.content(file_id).content
    return [json.loads(line) for line in content.decode().splitlines() if line.strip()]


def _batch_read(client: Any, batch: LLMBatch) -> None:
    """Read an ended batch's output and error files into its requests, in one transaction."""
    lines = _file_lines(client, batch.output_file_id) + _file_lines(client, batch.error_file_id)
    _checkpoint("files_read")
    retries = settings.LLM_MAX_RETRIES
    with transaction.atomic():
        rows = {row.custom_id: row for row in batch.requests.select_for_update().filter(status=Status.SENT)}
        answered, failed = [], []
        for line in lines:
            row = rows.pop(str(line.get("custom_id")), None)
            if row is None:
                continue
            response = line.get("response") or {}
            status_code = response.get("status_code")
            body = response.get("body")
            if status_code == 200 and isinstance(body, dict) and not line.get("error"):
                choices = body.get("choices") or [{}]
                row.response = body
                row.raw_response = ((choices[0] or {}).get("message") or {}).get("content") or ""
                row.status = Status.ANSWERED
                answered.append(row)
                continue
            error = line.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
            code = str(error.get("code") or "")
            if not response and code in UNSENT_CODES:
                rows[row.custom_id] = row  # never asked: it waits, as the requests the batch did not reach
                continue
            message = f"{status_code or ''} {code}: {error.get('message') or 'no answer'}".strip()
            if _transient(status_code, code) and row.attempts <= retries:
                row.status, row.batch, row.error = Status.WANTED, None, message
            else:
                tries = f" after {row.attempts} batch{'es' if row.attempts != 1 else ''}" if row.attempts > 1 else ""
                row.status, row.error = Status.FAILED, f"{message}{tries}"
            failed.append(row)
        LLMBatchRequest.objects.bulk_update(answered, ["response", "raw_response", "status"], batch_size=500)
        LLMBatchRequest.objects.bulk_update(failed, ["status", "batch", "error"], batch_size=500)
        # Asked but not answered: a batch that ended short. They wait for the next round (or a resume).
        missing = [row.pk for row in rows.values()]
        if missing:
            LLMBatchRequest.objects.filter(pk__in=missing).update(
                status=Status.WANTED, batch=None, attempts=F("attempts") - 1
            )
        LLMBatch.objects.filter(pk=batch.pk).update(read_at=timezone.now())
        batch.read_at = timezone.now()


def batches_advance(job: Job, client: Any, config: LLMConfig) -> list[LLMBatch]:
    """Take each of the job's unread batches one step on: upload, create, poll, read; returns those just read."""
    read = []
    for batch in LLMBatch.objects.filter(job=job, read_at__isnull=True).order_by("id"):
        if batch.state == State.NEW:
            _batch_upload(client, config, batch)
        if batch.state in (State.UPLOADED, State.CREATING):
            _batch_create(client, batch)
        elif batch.state in AT_WORK:
            _batch_update(batch, client.batches.retrieve(batch.provider_id))
            _checkpoint("polled")
        if batch.state in ENDED:
            _batch_read(client, batch)
            _checkpoint("batch_read")
            read.append(batch)
    return read


def _batches_cancel(job: Job, client: Any) -> None:
    """A cancelled job cancels its batches at the provider: what they answered so far is read when they end."""
    for batch in LLMBatch.objects.filter(job=job, read_at__isnull=True, state__in=AT_WORK).exclude(
        state=State.CANCELLING
    ):
        _batch_update(batch, client.batches.cancel(batch.provider_id))


def _fallback_reason(batches: list[LLMBatch]) -> str:
    parts = []
    for batch in batches:
        why = f": {batch.error}" if batch.error else ""
        parts.append(
            f"batch {batch.pk} ({batch.provider_id or 'not created'}) of round {batch.round} {batch.state}{why}; "
            f"{batch.request_completed} of {batch.request_total} requests answered"
        )
    waiting = LLMBatchRequest.objects.filter(job_id=batches[0].job_id, status=Status.WANTED).count()
    return (
        "; ".join(parts) + f". The answers received count; {waiting} requests wait: resume the job "
        "(in batch mode again, or live) to ask them."
    )


# --- a step -------------------------------------------------------------------------------


def batch_step(job_id: int, *, threads: int | None = None) -> str:
    """One step of a batch-mode job: "waiting" (on its batches), "done", "stopped" (cancelled, or a batch fell back),
    or "busy" (another step holds the job). Its round works `threads` items at once (LLM_BATCH_ROUND_THREADS)."""
    with campaign_scope(campaign_of_row(Job, job_id)):
        return _batch_step(job_id, threads=threads)


def _batch_step(job_id: int, *, threads: int | None = None) -> str:
    threads = threads or int(getattr(settings, "LLM_BATCH_ROUND_THREADS", 1))
    holder = holder_name()
    if not step_lease_claim(job_id, holder=holder, seconds=STEP_LEASE_SECONDS):
        return "busy"
    try:
        return _step(Job.objects.get(pk=job_id), threads=threads)
    finally:
        step_lease_release(job_id, holder=holder)


def _step(job: Job, *, threads: int) -> str:
    config = _job_config(job)
    client = _openai_client(config)
    if job.status not in (Job.Status.QUEUED, Job.Status.RUNNING):
        if job.status == Job.Status.CANCELLED:
            _batches_cancel(job, client)
        batches_advance(job, client, config)
        return "waiting" if LLMBatch.objects.filter(job=job, read_at__isnull=True).exists() else "stopped"
    read = batches_advance(job, client, config)
    if LLMBatch.objects.filter(job=job, read_at__isnull=True).exists():
        return "waiting"
    fallen = [batch for batch in read if batch.state in FALLBACKS]
    # Items held by a step that died: this step holds the job, so no one else works them.
    JobItem.objects.filter(job=job, status=JobItem.Status.CLAIMED).update(
        status=JobItem.Status.PENDING, claimed_by="", claimed_at=None
    )
    # After a fallback too: what the batches answered counts, and the requests still wanted wait for a resume.
    batch_round(job, threads=threads)
    _checkpoint("round_done")
    if fallen:
        reason = _fallback_reason(fallen)
        Job.objects.filter(pk=job.pk, status__in=(Job.Status.QUEUED, Job.Status.RUNNING)).update(
            status=Job.Status.FAILED, finished_at=timezone.now(), error=reason
        )
        return "stopped"
    if batches_make(job, config):
        batches_advance(job, client, config)
        return "waiting"
    job_complete_if_finished(job.pk)
    return "done"


def batch_step_queued(job_id: int) -> str:
    """The Celery task's step: queues the next step after a countdown while the job waits on its batches."""
    outcome = batch_step(job_id)
    if outcome == "waiting":
        queue = Job.objects.filter(pk=job_id).values_list("params", flat=True).first() or {}
        celery_task(BATCH_STEP_TASK).apply_async(
            args=[job_id], countdown=settings.LLM_BATCH_POLL_SECONDS, queue=queue.get("queue") or None
        )
    return outcome


def batches_recall(job: Job, *, poll: float | None = None) -> None:
    """Call back the job's batches still out before it goes on live: a batch not yet at the provider is dropped
    (its requests wait again), one at work is cancelled, and each is read as it ends, so that its answers count."""
    config = _job_config(job)
    client = _openai_client(config)
    interval = settings.LLM_BATCH_POLL_SECONDS if poll is None else poll
    for batch in LLMBatch.objects.filter(job=job, read_at__isnull=True, state__in=OURS):
        remote = _batch_found(client, batch) if batch.state == State.CREATING else None
        if remote is not None:
            _batch_update(batch, remote, submitted=True)
            continue
        with transaction.atomic():
            LLMBatchRequest.objects.filter(batch=batch, status=Status.SENT).update(
                status=Status.WANTED, batch=None, attempts=F("attempts") - 1
            )
            LLMBatch.objects.filter(pk=batch.pk).update(state=State.CANCELLED, read_at=timezone.now())
    while LLMBatch.objects.filter(job=job, read_at__isnull=True).exists():
        _batches_cancel(job, client)
        batches_advance(job, client, config)
        if LLMBatch.objects.filter(job=job, read_at__isnull=True).exists():
            time.sleep(interval)


def batch_settle(job: Job, *, threads: int = 1) -> dict[str, int]:
    """Store what the job's batches answered before it goes on live (its batches still out called back first):
    a round that records nothing new."""
    batches_recall(job)
    return batch_round(job, threads=threads, record=False)


# --- watching -------------------------------------------------------------------------------


def batches_line(job: Job) -> str:
    """The job's batches' states, one line: what `--wait` prints when it changes."""
    batches = list(LLMBatch.objects.filter(job=job).order_by("id"))
    if not batches:
        return ""
    shown = ", ".join(
        f"#{batch.pk} r{batch.round} {batch.state} {batch.request_completed}/{batch.request_total}"
        + (f" ({batch.request_failed} failed)" if batch.request_failed else "")
        for batch in batches
    )
    return f"job {job.pk} batches: {shown}"


def _report_changes(job_id: int, report: Callable[[str], None], last: list[str]) -> Job:
    job = Job.objects.get(pk=job_id)
    for index, line in enumerate((job_progress_line(job), batches_line(job))):
        if line and line != last[index]:
            report(line)
            last[index] = line
    return job


def batch_run_sync(
    job_id: int,
    *,
    threads: int | None = None,
    report: Callable[[str], None] = lambda _line: None,
    poll: float | None = None,
) -> Job:
    """Run the batch job's steps in this process, polling its batches, until it is done or stops."""
    interval = settings.LLM_BATCH_POLL_SECONDS if poll is None else poll
    last = ["", ""]
    while True:
        outcome = batch_step(job_id, threads=threads)
        job = _report_changes(job_id, report, last)
        if outcome in ("done", "stopped"):
            return job
        time.sleep(interval)


def batch_wait(job_id: int, *, report: Callable[[str], None], interval: float = 1.0) -> Job:
    """Follow a batch job the workers run, reporting its progress and its batches' states as they change."""
    last = ["", ""]
    while True:
        job = _report_changes(job_id, report, last)
        if job.status in (Job.Status.DONE, Job.Status.FAILED, Job.Status.CANCELLED):
            return job
        time.sleep(interval)


__all__ = [
    "BATCH_STEP_TASK",
    "batch_dispatch",
    "batch_refusal",
    "batch_round",
    "batch_run_sync",
    "batch_settle",
    "batch_step",
    "batch_step_queued",
    "batch_summary",
    "batch_wait",
    "batches_line",
    "batches_split",
    "job_mode_set",
]


# --- the job's page ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchSummary:
    """What the job's page shows of a batch-mode job: its batches, and the calls answered through them."""

    batches: list[LLMBatch]
    calls: int
    tokens_in: int
    tokens_out: int
    cost_picodollars: int
    factor: float | None  # the endpoint's batch price factor (None: the endpoint is gone)
    waiting: int  # requests wanted or sent, not answered yet

    @property
    def cost(self) -> Decimal:
        return dollars(self.cost_picodollars)

    @property
    def cost_live(self) -> Decimal | None:
        """The same calls at the endpoint's live prices."""
        if not self.factor:
            return None
        return dollars(int(Decimal(self.cost_picodollars) / Decimal(repr(self.factor))))


def batch_summary(job: Job) -> BatchSummary | None:
    """The job's batches and their calls; None for a job that never ran in batch mode."""
    batches = list(LLMBatch.objects.filter(job=job).order_by("id"))
    if job.mode != Job.Mode.BATCH and not batches:
        return None
    used = LLMBatchRequest.objects.filter(job=job, status=Status.USED).aggregate(
        calls=Count("id"), tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"), cost=Sum("cost_picodollars")
    )
    try:
        factor: float | None = endpoint_config(job.endpoint_name).batch_price_factor
    except LLMNotConfigured:
        factor = None
    return BatchSummary(
        batches=batches,
        calls=used["calls"],
        tokens_in=used["tokens_in"] or 0,
        tokens_out=used["tokens_out"] or 0,
        cost_picodollars=used["cost"] or 0,
        factor=factor,
        waiting=LLMBatchRequest.objects.filter(job=job, status__in=(Status.WANTED, Status.SENT)).count(),
    )
