"""The organizer's jobs pages: launch, watch (htmx polling), failures, call log, cancel and resume."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from assessor.http import AuthenticatedRequest
from assessor.jobs.batch import batch_summary
from assessor.jobs.engine import FINAL_STATUSES, JobRequestInvalid, job_cancel, job_queue, job_reopen
from assessor.jobs.forms import EndpointForm, job_launch
from assessor.jobs.llm.client import LLMNotConfigured
from assessor.jobs.llm.endpoints import EndpointRefused, endpoint_add, endpoint_delete, endpoint_missing, endpoints_list
from assessor.jobs.selectors import job_calls, job_failures, job_paid, job_params_shown, job_percent, jobs_list
from assessor.models import Job, JobItem
from assessor.models.scope import scoped_campaign
from assessor.registry import registry
from assessor.work.access import campaign_closed_reason
from assessor.work.pages import closed_refusal
from assessor.work.roles import organizer_required

CALLS_PER_PAGE = 50


def _llm_context() -> dict:
    endpoints = endpoints_list()
    usable = [endpoint for endpoint in endpoints if endpoint.usable]
    return {
        # Jobs can be launched as soon as one endpoint can be used; the notice says why the default cannot.
        "llm_missing": "" if usable else endpoints[0].missing,
        "llm_endpoints": usable,
        # In the order the apps registered them (INSTALLED_APPS).
        "launch_kinds": list(registry.launchable_kinds(scoped_campaign())),  # of the campaign's families
    }


def _output_url(job: Job) -> str | None:
    """The page of what the job made, once it made something: done, or stopped short (failed, cancelled) with
    some items done; from its kind's app (a kind whose app gives none, or is gone, has no link)."""
    job_kind = registry.job_kinds.get(job.kind)
    if job_kind is None or job_kind.output_url is None:
        return None
    if job.status not in FINAL_STATUSES or not job.done_items:
        return None
    return job_kind.output_url(job)


def _job_context(job: Job) -> dict:
    finished = job.status in FINAL_STATUSES
    return {
        "job": job,
        "output_url": _output_url(job),
        "percent": job_percent(job),
        "finished": finished,
        "can_cancel": not finished,
        # A job that finished with failures or was cancelled has items left; a done one has none.
        "can_resume": job.status in (Job.Status.FAILED, Job.Status.CANCELLED),
    }


@organizer_required
def job_list(request: AuthenticatedRequest) -> HttpResponse:
    jobs = [_job_context(job) for job in jobs_list()[:200]]
    polling = any(not row["finished"] for row in jobs)
    template = "jobs/job_list.html"
    if request.htmx:
        template += "#jobs_table"
    return render(request, template, {"rows": jobs, "polling": polling, **_llm_context()})


def _in_flight(job: Job) -> int:
    """Items a worker still holds: a cancelled job's claimed items finish (and write) on their own."""
    if job.status != Job.Status.CANCELLED:
        return 0
    return JobItem.objects.filter(job=job, status=JobItem.Status.CLAIMED).count()


@organizer_required
def job_detail(request: AuthenticatedRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    context = {**_job_context(job), "failures": job_failures(job), "asked": job_params_shown(job), **_llm_context()}
    context["in_flight"] = _in_flight(job)
    context["paid"] = job_paid(job)
    context["batches"] = batch_summary(job)
    if context["in_flight"]:
        context["finished"] = False  # the page follows them until they land
    template = "jobs/job_detail.html"
    if request.htmx:
        template += "#progress_panel"
    return render(request, template, context)


@organizer_required
def job_call_log(request: AuthenticatedRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    page = Paginator(job_calls(job), CALLS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "jobs/job_calls.html", {"job": job, "page": page})


@organizer_required
def job_launch_page(request: AuthenticatedRequest, kind: str) -> HttpResponse:
    job_kind = registry.job_kinds.get(kind)
    if job_kind is None or job_kind.form is None or not registry.used_in(scoped_campaign(), [job_kind]):
        raise Http404("no such job in this campaign")
    form_class = job_kind.form
    form = form_class(request.POST or None)
    context = {"job_kind": job_kind, "form": form, **_llm_context()}
    if request.method == "POST" and (closed := campaign_closed_reason(scoped_campaign())):
        messages.error(request, closed)
        return render(request, "jobs/job_launch.html", context, status=403)
    if request.method == "POST" and not context["llm_missing"] and form.is_valid():
        try:
            job = job_launch(kind=kind, selection=form.selection(), user=request.user)
        except (JobRequestInvalid, LLMNotConfigured) as exc:
            form.add_error(None, str(exc))
        else:
            job_queue(job)
            messages.success(request, f"Job {job.pk} queued: {job.total_items} items.")
            return redirect("jobs:detail", job.pk)
    return render(request, "jobs/job_launch.html", context)


@require_POST
@organizer_required
def job_cancel_view(request: AuthenticatedRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    if job_cancel(job.pk):
        messages.success(request, f"Job {job.pk} cancelled; items in flight finish, the rest wait for a resume.")
    else:
        messages.warning(request, f"Job {job.pk} was not queued or running.")
    return redirect("jobs:detail", job.pk)


@require_POST
@organizer_required
def job_resume_view(request: AuthenticatedRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    if refusal := closed_refusal(request, reverse("jobs:detail", args=[job.pk])):
        return refusal
    if job.kind not in registry.job_kinds:
        # Its app is no longer installed: nothing here can work its items.
        messages.error(request, f"Job {job.pk} cannot resume: no installed app does jobs of kind {job.kind!r}.")
        return redirect("jobs:detail", job.pk)
    if missing := endpoint_missing(job.endpoint_name):
        messages.error(request, missing)
        return redirect("jobs:detail", job.pk)
    try:
        pending = job_reopen(job.pk)
    except JobRequestInvalid as exc:  # its output is another job's now
        messages.error(request, str(exc))
        return redirect("jobs:detail", job.pk)
    if pending:
        job_queue(job)
        messages.success(request, f"Job {job.pk} resumed: {pending} items queued.")
    else:
        # A job left running by a worker that stopped before its end was ended by the reopen: its status says so.
        job.refresh_from_db(fields=["status"])
        messages.warning(request, f"Job {job.pk} has nothing left to do: it is {job.status}.")
    return redirect("jobs:detail", job.pk)


@organizer_required
def endpoints_page(request: AuthenticatedRequest) -> HttpResponse:
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        name = form.cleaned_data["name"]
        try:
            endpoint_add(name=name, fields=form.endpoint_fields(), user=request.user)
        except EndpointRefused as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Endpoint {name!r} added: jobs can choose it now.")
            return redirect("jobs:endpoints")
    return render(request, "jobs/endpoints.html", {"endpoints": endpoints_list(), "form": form})


@require_POST
@organizer_required
def endpoint_delete_view(request: AuthenticatedRequest, name: str) -> HttpResponse:
    try:
        endpoint_delete(name=name)
    except EndpointRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Endpoint {name!r} removed; its jobs keep its name, model and URL.")
    return redirect("jobs:endpoints")
