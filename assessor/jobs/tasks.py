"""Celery tasks of the job engine: thin, taking ids, safe to run twice."""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as futures_wait

from celery import shared_task
from celery.signals import worker_init, worker_ready
from django.apps import apps
from django.db import DEFAULT_DB_ALIAS, connections

from assessor.jobs.engine import (
    BATCH_STEP_TASK,
    DISPATCH_TASK,
    ITEM_TASK,
    ITEMS_TASK,
    claim_rehearsed,
    item_process,
    job_dispatch,
    job_items_continue,
    job_items_process,
)
from assessor.models import Job
from assessor.project.celery import worker_name


@shared_task(name=ITEMS_TASK, bind=True)
def job_items_run(self, job_id: int, count: int, goes_on: bool = True) -> dict[str, int]:
    # A duplicate delivery claims what is still pending, if anything: never an item claimed or done.
    counts = job_items_process(job_id, count)
    # Its whole count claimed: items may be left, for one more message, unless later messages of the job are queued
    # behind this one (`goes_on` False; a message sent before that flag existed goes on). Not when run where it was
    # sent (CELERY_TASK_ALWAYS_EAGER): the dispatch's messages, run one after the other, claim every item between
    # them, and one more would run inside this one (a job of thousands of items, thousands of frames deep).
    if not self.request.is_eager:
        job_items_continue(job_id, count, counts, goes_on=goes_on)
    return counts


@shared_task(name=ITEM_TASK)
def job_item_run(item_id: int) -> str:
    """One item: the messages queued before jobs were sent several items to a message. A duplicate delivery finds
    the item claimed or done and skips it."""
    return item_process(item_id)


@shared_task(name=DISPATCH_TASK)
def job_dispatch_task(job_id: int) -> int:
    """Fan a job's pending items out from a worker (pages use it, so a request never queues thousands)."""
    return job_dispatch(Job.objects.get(pk=job_id))


@shared_task(name=BATCH_STEP_TASK)
def job_batch_step(job_id: int) -> str:
    """A batch-mode job's step (assessor.jobs.batch); it queues the next while the job waits on its batches."""
    from assessor.jobs.batch import batch_step_queued

    return batch_step_queued(job_id)


# A job's threads mostly wait: on the LLM, the database, Redis. A thread whose answer has arrived waits again
# for the GIL until the thread holding it lets go, by default after 5 ms: a wait added to the slot it holds, on
# every call. At 1 ms it gets the GIL back sooner, for more switches between threads that compute.
WORKER_SWITCH_INTERVAL_SECONDS = 0.001


@worker_init.connect
def worker_prepared(**_kwargs) -> None:
    """A worker prepares as it starts what every job item would otherwise prepare in the middle of its first
    items, all threads at once: the LLM client (its import is a second of CPU; the default endpoint's HTTP client)
    and the shared concurrency limit's connection and scripts. Then it sets what it has loaded aside from the
    garbage collector."""
    import gc
    import sys

    from assessor.jobs.llm.client import LLMNotConfigured, llm_client_prepare
    from assessor.jobs.llm.concurrency import shared_slots_prepare
    from assessor.jobs.llm.endpoints import endpoint_config

    sys.setswitchinterval(WORKER_SWITCH_INTERVAL_SECONDS)
    import openai  # noqa: F401

    try:
        llm_client_prepare(endpoint_config(None))
    except LLMNotConfigured:
        pass  # no default endpoint: jobs name theirs, and prepare it on their first call
    shared_slots_prepare()
    # What is loaded by now (Django, the app, the LLM client's library: some 160,000 objects) stays for the
    # worker's life. Left to the collector, every full collection walks it again with the GIL held, stopping
    # every thread: 80-120 ms each, twice in a job of 200 answers. Frozen, a full collection walks only what
    # the jobs made since (as assessor/project/wsgi.py does for the web processes).
    gc.collect()
    gc.freeze()


# How long a starting worker waits for its threads to open their database connections before it says it is ready.
CONNECTIONS_OPEN_SECONDS = 10.0

logger = logging.getLogger(__name__)


@worker_ready.connect
def worker_connections_opened(sender=None, **_kwargs) -> None:
    """On PostgreSQL, each thread of a worker's threads pool opens its database connection as the worker starts,
    makes its session ready for jobs (`session_prepared`), and keeps it from task to task (checked before a task
    uses it again).

    Why: a job's first items come to all the threads at once, and whatever each thread's connection lacks then is
    made while the others wait for the machine too. A connection opened by the thread that first needs it costs
    that thread about 1.3 ms of CPU with the interpreter lock held and the server a process of its own (7 ms alone,
    25-57 ms each when 16-32 open together): the first 16 calls of a job of 400 went out over 100-160 ms instead of
    40-65 ms (bench_llm's job, its worker traced, two runs each way). The calls that start last end last: a job ends
    that much later. Kept, not let go of after CONN_MAX_AGE as the web processes' are: a worker idle for longer
    would open them all again at its next job.
    """
    pool = getattr(sender, "pool", None)
    executor = getattr(pool, "executor", None)
    if pool is None or not isinstance(executor, ThreadPoolExecutor):
        return  # a prefork or solo pool: no threads of its own
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        return  # SQLite's connections are closed after every task (CONN_MAX_AGE 0): nothing to keep
    # The threads' connections are made from these settings, each as its thread first asks for one.
    connections.settings[DEFAULT_DB_ALIAS].update(CONN_MAX_AGE=None, CONN_HEALTH_CHECKS=True)
    threads = int(pool.limit)
    # Each opening waits for the others, so that no thread takes two while another is still to be made.
    together = threading.Barrier(threads)

    def opened() -> None:
        connections[DEFAULT_DB_ALIAS].ensure_connection()
        session_prepared()
        together.wait(timeout=CONNECTIONS_OPEN_SECONDS)

    # Before the worker consumes its first message: these are the pool's first tasks, one a thread.
    futures = [executor.submit(opened) for _ in range(threads)]
    done, _pending = futures_wait(futures, timeout=CONNECTIONS_OPEN_SECONDS)
    failures = [error for error in (future.exception() for future in done) if error is not None]
    if failures or len(done) < threads:
        together.abort()
        # The database is down or slow to answer: a thread without a connection opens it when it needs it.
        logger.warning(
            "%s of %s worker threads opened and prepared their database connection as the worker started (%s)",
            len(done) - len(failures),
            threads,
            failures[0] if failures else "timed out",
        )


def session_prepared() -> None:
    """Ready a new PostgreSQL session for jobs: each table of the project planned once, and the engine's claim run
    on no job (`claim_rehearsed`).

    Why: a server process new to the database reads the catalogs of each table, index and statement as it first
    meets them. An item's first five statements cost such a process 6.0 ms against 2.2 ms once it knows them, and
    a job's first items bring that to the 16-32 threads' processes at once, on the machine the worker shares: the
    first 16 calls of bench_llm's job of 400 went out 94-128 ms after the job was sent with the sessions prepared,
    against 166-181 ms without (seven runs with, three without). Planning the tables costs a session about 25 ms
    as the worker starts.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for model in apps.get_models():
            meta = model._meta
            if meta.managed and not meta.proxy:
                # Planned, not run: the table, its indexes and its statistics, read into the session's caches.
                cursor.execute(f"EXPLAIN SELECT * FROM {quote(meta.db_table)} WHERE {quote(meta.pk.column)} IS NULL")
    claim_rehearsed(worker=worker_name())
