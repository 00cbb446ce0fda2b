"""The leaderboard of a nugget condition (nugget set name + assigner name)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from assessor import selectors
from assessor.roles import organizer_required
from assessor.views import leaderboard_context, table_or_page, url_if_exists

PRIMARY_METRIC = "Vstrict"


@organizer_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    conditions = selectors.nugget_conditions() or []
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
            scores = selectors.nugget_scores_of(nuggets=nuggets, assigner=assigner)
        except LookupError as exc:
            context["error"] = str(exc.args[0] if exc.args else exc)
        else:
            base_query = {"nuggets": nuggets, "assigner": assigner}
            context.update(
                leaderboard_context(request, scores=scores, default_sort=PRIMARY_METRIC, base_query=base_query)
            )
            context["scores_url"] = url_if_exists("collection:download_scores", nuggets, assigner)
            context["assignments_url"] = url_if_exists("collection:download_assignments", nuggets, assigner)
    return render(request, table_or_page(request, "assignment/leaderboard.html", context), context)
