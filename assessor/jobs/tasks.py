"""Celery tasks of the job engine: thin, taking ids, safe to run twice."""

from celery import shared_task
from celery.signals import worker_init

from assessor.jobs.engine import DISPATCH_TASK, ITEM_TASK, item_process, job_dispatch
from assessor.models import Job


@shared_task(name=ITEM_TASK)
def job_item_run(item_id: int) -> str:
    # A duplicate delivery finds the item claimed or done and skips it.
    return item_process(item_id)


@shared_task(name=DISPATCH_TASK)
def job_dispatch_task(job_id: int) -> int:
    """Fan a job's pending items out from a worker (pages use it, so a request never queues thousands)."""
    return job_dispatch(Job.objects.get(pk=job_id))


@worker_init.connect
def client_imported(**_kwargs) -> None:
    """A worker imports the LLM client as it starts (a second of CPU), not in the middle of its first item."""
    import openai  # noqa: F401
