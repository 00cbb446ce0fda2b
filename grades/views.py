"""The grade pages: the leaderboard of a grade source and its download (the people's grading pages are in
grades/judge_views.py)."""

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from assessor.collection.pages import (
    download_response,
    leaderboard_context,
    scores_download,
    scores_or_404,
    table_or_page,
)
from assessor.collection.score_formats import score_file_query
from assessor.http import AuthenticatedRequest
from assessor.jobs.engine import JobRequestInvalid, job_queue
from assessor.jobs.llm.client import LLMNotConfigured
from assessor.models import LabelSource
from assessor.scoring.scores import Scores
from assessor.work.roles import organizer_required
from grades import scoring
from grades.exporting import jsonl_file_name, jsonl_lines
from grades.kinds import GRADES_FAMILY
from grades.llm import grades_rerun_create
from grades.measures import DEFAULT_THRESHOLD, THRESHOLDS, threshold_metrics


def _threshold(request: AuthenticatedRequest) -> int:
    value = request.GET.get("threshold", "")
    return int(value) if value.isdigit() and int(value) in THRESHOLDS else DEFAULT_THRESHOLD


def _shown(scores: Scores, threshold: int) -> Scores:
    """The measures of one grade threshold (every threshold's are kept)."""
    metrics = threshold_metrics(threshold)
    return Scores(
        metrics=metrics,
        per_topic={key: {m: row[m] for m in metrics} for key, row in scores.per_topic.items()},
        run_means={run: {m: row[m] for m in metrics} for run, row in scores.run_means.items()},
        topics=scores.topics,
        runs=scores.runs,
    )


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    """Runs ranked by a grade source's measures at a grade threshold (a run's mean over every request of the family)."""
    names = [name for (name,) in scoring.listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    threshold = _threshold(request)
    context: dict = {"names": names, "name": name, "threshold": threshold, "thresholds": THRESHOLDS}
    if name:
        scores = scores_or_404(lambda: scoring.grade_scores(name=name))  # per topic: the plot's intervals
        base = {"source": name, "threshold": str(threshold)}
        context.update(
            leaderboard_context(request, scores=_shown(scores, threshold), default_sort="avggrade", base_query=base)
        )
        context["download_url"] = reverse("collection:download_grade_scores", args=[name])
        context["requests"] = len(scores.topics)
        context["with_documents"] = scoring.graded_with_documents(name)
        context["covered_at"] = threshold * (scoring.COMBINED_SCALE if context["with_documents"] else 1)
        context["notes"] = scoring.notes([(name,)])[(name,)]
        context["stale_rerun"] = (
            LabelSource.objects.filter(family=GRADES_FAMILY, name=name, kind=LabelSource.Kind.LLM)
            .exclude(stale={})
            .exists()
        )
    template = table_or_page(request, "grades/leaderboard.html", context)
    if name and not template.endswith("#table"):  # a sort click redraws the table alone
        from metaeval.plots import leaderboard_plot  # matplotlib, imported by the pages that draw (0.4 s)

        context["plot"] = leaderboard_plot(scores, "avggrade")
    return render(request, template, context)


@organizer_required
def download_scores(request: AuthenticatedRequest, name: str) -> HttpResponse | StreamingHttpResponse:
    """Every measure at every threshold, in the layout asked for (`?format=jsonl`: the AutoJudge tools' JSONL)."""
    if request.GET.get("format") == "jsonl":
        scores = scores_or_404(lambda: scoring.grade_scores(name=name))
        file = score_file_query(request)
        return download_response(jsonl_lines(scores, file), jsonl_file_name(f"grades.{name}", file))
    return scores_download(request, lambda: scoring.grade_scores(name=name), f"grades.{name}")


@require_POST
@organizer_required
def rerun_stale(request: AuthenticatedRequest, name: str) -> HttpResponse:
    """Queue a job that grades, with the source's model and prompt, only the questions that changed."""
    get_object_or_404(LabelSource, family=GRADES_FAMILY, name=name)  # the campaign's (its scoped manager)
    try:
        job = grades_rerun_create(name=name, user=request.user)
    except (JobRequestInvalid, LLMNotConfigured) as exc:
        messages.error(request, str(exc))
        return redirect(f"{reverse('collection:grade_leaderboard')}?{urlencode({'source': name})}")
    job_queue(job)
    messages.success(request, f"Job {job.pk} grades the changed questions: {job.total_items} grade(s).")
    return redirect("jobs:detail", job_id=job.pk)
