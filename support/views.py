"""The leaderboard of a support method, and its downloads."""

from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from assessor.collection.pages import (
    download_response,
    leaderboard_context,
    scores_download,
    table_or_page,
    url_if_exists,
)
from assessor.collection.score_formats import team_prefix_query
from assessor.http import AuthenticatedRequest
from assessor.scoring.scores import SUPPORT_METRICS
from assessor.work.roles import organizer_required
from support.exporting import support_lines
from support.selectors import method_notes, support_methods_list, support_scores


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    methods = support_methods_list()
    method = request.GET.get("method") or (methods[0] if methods else "")
    context: dict = {"methods": methods, "method": method, "error": ""}
    if method:
        try:
            scores = support_scores(method=method, per_topic=False)
        except LookupError as exc:
            context["error"] = str(exc.args[0] if exc.args else exc)
        else:
            base_query = {"method": method}
            context.update(
                leaderboard_context(request, scores=scores, default_sort=SUPPORT_METRICS[0], base_query=base_query)
            )
            context["notes"] = method_notes(method=method)
            context["download_url"] = url_if_exists("collection:download_support_scores", method)
    return render(request, table_or_page(request, "support/leaderboard.html", context), context)


@organizer_required
def download_labels(request: AuthenticatedRequest, method: str) -> StreamingHttpResponse:
    lines = support_lines(
        method=method, provenance="provenance" in request.GET, team_prefix=team_prefix_query(request)
    )
    return download_response(lines, f"support.{method}.jsonl")


@organizer_required
def download_scores(request: AuthenticatedRequest, method: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(request, lambda: support_scores(method=method), f"support_scores.{method}")
