"""The organizer's pages of every app on the answer-label kit: a source's leaderboard, its labels and its scores as
files. One set of pages, found by the app's name (`labels:leaderboard` with "verdicts")."""

from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from assessor.collection.pages import download_response, leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.labelkit.files import label_lines
from assessor.labelkit.registered import registered
from assessor.labelkit.scores import AnswerScores
from assessor.labelkit.spec import AnswerLabels
from assessor.work.roles import organizer_required


def _app(family: str) -> AnswerLabels:
    if (spec := registered.get(family)) is None:
        raise Http404(f"No app of answer labels is named {family!r}.")
    return spec


@organizer_required
def leaderboard(request: AuthenticatedRequest, family: str) -> HttpResponse:
    spec = _app(family)
    scoring = AnswerScores(spec)
    names = [name for (name,) in scoring.listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    context: dict = {"names": names, "name": name, "title": f"{spec.title} leaderboard", "about": spec.about_scores}
    if name:
        scores = scores_or_404(lambda: scoring.scores(name=name, per_topic=False))
        context.update(
            leaderboard_context(request, scores=scores, default_sort=spec.metric, base_query={"source": name})
        )
    return render(request, "collection/source_leaderboard.html", context)


@organizer_required
def download_labels(request: AuthenticatedRequest, family: str, name: str) -> StreamingHttpResponse:
    spec = _app(family)
    scores_or_404(lambda: AnswerScores(spec).scores(name=name, per_topic=False))  # a 404 for a source without any
    return download_response(label_lines(spec, name=name), f"{spec.name}.{name}.jsonl")


@organizer_required
def download_scores(request: AuthenticatedRequest, family: str, name: str) -> HttpResponse | StreamingHttpResponse:
    spec = _app(family)
    return scores_download(request, lambda: AnswerScores(spec).scores(name=name), f"{spec.name}_scores.{name}")
