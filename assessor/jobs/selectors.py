"""Reads for the jobs pages."""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, QuerySet, Sum

from assessor.models import Job, JobItem, LLMCall
from assessor.models.jobs import cached_percent, dollars


def jobs_list() -> QuerySet[Job]:
    return Job.objects.select_related("created_by").order_by("-created_at")


def job_failures(job: Job, *, limit: int = 200) -> QuerySet[JobItem]:
    return job.items.filter(status=JobItem.Status.FAILED).order_by("id")[:limit]


def job_calls(job: Job) -> QuerySet[LLMCall]:
    return LLMCall.objects.filter(job=job).select_related("prompt", "item").order_by("id")


@dataclass(frozen=True)
class Paid:
    """The calls a job paid for, their tokens and their cost."""

    calls: int
    tokens_in: int
    tokens_out: int
    cost_picodollars: int
    tokens_cached: int = 0  # of tokens_in, served from the provider's prompt cache

    @property
    def cost(self) -> Decimal:
        return dollars(self.cost_picodollars)

    @property
    def cached_percent(self) -> str:
        return cached_percent(self.tokens_cached, self.tokens_in)


def job_paid(job: Job) -> Paid:
    """Every call the job paid for over its whole life, read from its call log: first run and resumes alike,
    calls of items that failed or whose worker died before they were redone, re-asks.

    Not the job's counters: they add an item's calls when the item finishes, so the calls of an item whose
    worker stopped in the middle are paid and logged but never added. Answers from the cache cost nothing;
    a request that could not be sent reached no endpoint.
    """
    paid = LLMCall.objects.filter(job=job, from_cache=False, reached=True).aggregate(
        calls=Count("id"),
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
        cost=Sum("cost_picodollars"),
        tokens_cached=Sum("tokens_cached"),
    )
    return Paid(
        paid["calls"], paid["tokens_in"] or 0, paid["tokens_out"] or 0, paid["cost"] or 0, paid["tokens_cached"] or 0
    )


def job_percent(job: Job) -> int:
    if not job.total_items:
        return 100
    return int(100 * (job.done_items + job.failed_items) / job.total_items)


def job_params_shown(job: Job) -> list[tuple[str, str]]:
    """What the organizer asked for, as text: a list is its items, a text is itself; empty choices are left out."""
    shown = []
    for key, value in (job.params or {}).items():
        if value in (None, "", [], {}):
            continue
        text = " ".join(str(item) for item in value) if isinstance(value, list | tuple) else str(value)
        shown.append((key, text))
    return shown

