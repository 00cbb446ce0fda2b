"""Reads for the jobs pages."""

from django.db.models import QuerySet

from assessor.models import Job, JobItem, LLMCall


def jobs_list() -> QuerySet[Job]:
    return Job.objects.select_related("created_by").order_by("-created_at")


def job_failures(job: Job, *, limit: int = 200) -> QuerySet[JobItem]:
    return job.items.filter(status=JobItem.Status.FAILED).order_by("id")[:limit]


def job_calls(job: Job) -> QuerySet[LLMCall]:
    return LLMCall.objects.filter(job=job).select_related("prompt", "item").order_by("id")


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

