"""Celery tasks of the job engine: thin, taking ids, safe to run twice."""

from celery import shared_task
from celery.signals import worker_init

from assessor.jobs.engine import (
    BATCH_STEP_TASK,
    DISPATCH_TASK,
    ITEM_TASK,
    ITEMS_TASK,
    item_process,
    job_dispatch,
    job_items_process,
)
from assessor.models import Job


@shared_task(name=ITEMS_TASK)
def job_items_run(job_id: int, count: int) -> dict[str, int]:
    # A duplicate delivery claims what is still pending, if anything: never an item claimed or done.
    return job_items_process(job_id, count)


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
