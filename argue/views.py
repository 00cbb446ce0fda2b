"""The ARGUE-style pages: the leaderboard of a source and its score downloads."""

from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from argue import scoring
from assessor.collection.pages import leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.work.roles import organizer_required


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    """Runs ranked by an ARGUE-style source's F1 (a run's mean of its topics' F1)."""
    names = [name for (name,) in scoring.listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    context: dict = {"names": names, "name": name}
    if name:
        scores = scores_or_404(lambda: scoring.argue_scores(name=name, per_topic=False))
        context.update(leaderboard_context(request, scores=scores, default_sort="f1", base_query={"source": name}))
    return render(request, "argue/leaderboard.html", context)


@organizer_required
def download_scores(request: AuthenticatedRequest, name: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(request, lambda: scoring.argue_scores(name=name), f"argue.{name}")
