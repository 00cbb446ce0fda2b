"""Celery tasks of the meta-evaluation: thin, taking keys, safe to run twice."""

from celery import shared_task

from metaeval.comparison_page import COMPUTE_TASK, WARM_TASK
from metaeval.comparison_page import comparison_compute as compute
from metaeval.comparison_page import comparisons_warm as warm


@shared_task(name=COMPUTE_TASK)
def comparison_compute(key: str) -> bool:
    # A page computed meanwhile (by the warm-up, or in a request) is current and not computed twice.
    return compute(key)


@shared_task(name=WARM_TASK)
def comparisons_warm() -> int:
    return warm()
