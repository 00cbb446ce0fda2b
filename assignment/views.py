"""The leaderboard of a nugget condition (nugget set name + assigner name), and its downloads."""

from django.contrib import messages
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from assessor.collection.pages import (
    download_response,
    leaderboard_context,
    scores_download,
    table_or_page,
    url_if_exists,
)
from assessor.collection.score_formats import team_prefix_query
from assessor.http import AuthenticatedRequest, back_url
from assessor.jobs.engine import JobRequestInvalid, job_queue
from assessor.jobs.llm.client import LLMNotConfigured
from assessor.models import LabelSource
from assessor.work.roles import organizer_required
from assignment.auto import auto_assign_rerun_create
from assignment.exporting import assignments_lines
from assignment.kinds import LABEL_FAMILY
from assignment.selectors import assigner_is_stale, condition_notes, conditions_list, nugget_scores

PRIMARY_METRIC = "Vstrict"


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    conditions = conditions_list()
    nuggets = request.GET.get("nuggets", "")
    assigner = request.GET.get("assigner", "")
    if not (nuggets and assigner) and conditions:
        nuggets, assigner = conditions[0]
    context: dict = {
        "conditions": conditions,
        "set_names": sorted({name for name, _ in conditions}),
        "assigner_names": sorted({name for _, name in conditions}),
        "nuggets": nuggets,
        "assigner": assigner,
        "error": "",
    }
    if nuggets and assigner:
        try:
            scores = nugget_scores(nuggets=nuggets, assigner=assigner, per_topic=False)
        except LookupError as exc:
            context["error"] = str(exc.args[0] if exc.args else exc)
        else:
            base_query = {"nuggets": nuggets, "assigner": assigner}
            context.update(
                leaderboard_context(request, scores=scores, default_sort=PRIMARY_METRIC, base_query=base_query)
            )
            context["notes"] = condition_notes(nuggets=nuggets, assigner=assigner)
            context["stale_rerun"] = bool(context["notes"]) and assigner_is_stale(assigner)
            context["scores_url"] = url_if_exists("collection:download_scores", nuggets, assigner)
            context["assignments_url"] = url_if_exists("collection:download_assignments", nuggets, assigner)
    return render(request, table_or_page(request, "assignment/leaderboard.html", context), context)


@organizer_required
def download_assignments(request: AuthenticatedRequest, nuggets: str, assigner: str) -> StreamingHttpResponse:
    lines = assignments_lines(
        nuggets=nuggets,
        assigner=assigner,
        provenance="provenance" in request.GET,
        team_prefix=team_prefix_query(request),
    )
    return download_response(lines, f"assignments.{nuggets}.{assigner}.jsonl")


@organizer_required
def download_scores(request: AuthenticatedRequest, nuggets: str, assigner: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(
        request, lambda: nugget_scores(nuggets=nuggets, assigner=assigner), f"scores.{nuggets}.{assigner}"
    )


@require_POST
@organizer_required
def rerun_stale(request: AuthenticatedRequest, assigner: str) -> HttpResponse:
    """Queue a job that labels again, with the assigner's model and prompts, only the nuggets that changed."""
    get_object_or_404(LabelSource, family=LABEL_FAMILY, name=assigner)  # the campaign's (its scoped manager)
    try:
        job = auto_assign_rerun_create(name=assigner, user=request.user)
    except (JobRequestInvalid, LLMNotConfigured) as exc:
        messages.error(request, str(exc))
        return redirect(back_url(request, request.META.get("HTTP_REFERER"), fallback=reverse("assignment:leaderboard")))
    job_queue(job)
    messages.success(request, f"Job {job.pk} labels {job.total_items} answer(s) again for the changed nuggets.")
    return redirect("jobs:detail", job_id=job.pk)
