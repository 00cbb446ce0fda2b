"""The page of a source against a truth leaderboard (metaeval.truth_comparison), and its JSON download."""

import json

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from assessor.http import AuthenticatedRequest
from assessor.work.roles import organizer_required
from metaeval.sources import source_judge, sources_list, sources_notes
from metaeval.truth import ON_MISSING, figure_names
from metaeval.truth_comparison import TruthOptions, truth_build, truth_json

FIGURE_HEADINGS = {
    "kendall": "Kendall tau-b",
    "pearson": "Pearson",
    "spearman": "Spearman",
    "tauap_b": "tau_ap_b",
    "tau_gap": "tau_GAP",
}


def _headings(top_k: int) -> list[tuple[str, str]]:
    return [(name, FIGURE_HEADINGS.get(name, f"Kendall over the truth's top {top_k}")) for name in figure_names(top_k)]


@require_GET
@organizer_required
def truth(request: AuthenticatedRequest) -> HttpResponse:
    """Source a against a truth leaderboard, as autojudge-evaluate's meta-evaluate computes it."""
    query = request.GET
    context: dict = {
        "sources": sources_list(),
        "a": query.get("a", ""),
        "truth": query.get("truth", ""),
        "metric": query.get("metric", ""),
        "on_missing": query.get("on_missing", "error"),
        "on_missing_choices": ON_MISSING,
        "top_k": query.get("top_k", "10"),
        "per_topic": query.get("per_topic", "") not in ("", "0"),
        "error": "",
        "comparison": None,
    }
    if context["a"] and context["truth"]:
        try:
            top_k = int(context["top_k"] or 10)
            comparison = truth_build(
                context["a"],
                context["truth"],
                metrics=context["metric"].split(),
                options=TruthOptions(on_missing=context["on_missing"], top_k=top_k),
            )
        except (LookupError, ValueError) as exc:
            context["error"] = str(exc.args[0] if exc.args else exc)
        else:
            if query.get("format") == "json":
                response = HttpResponse(json.dumps(truth_json(comparison), indent=2), content_type="application/json")
                response["Content-Disposition"] = 'attachment; filename="metaeval-truth.json"'
                return response
            names = figure_names(top_k)
            context["comparison"] = comparison
            context["headings"] = _headings(top_k)
            context["notes"] = sources_notes([context["a"], context["truth"]])
            context["judges"] = [
                (str(comparison.a), source_judge(comparison.a)),
                (str(comparison.truth), source_judge(comparison.truth)),
            ]
            context["rows"] = [
                {
                    "pair": pair,
                    "figures": [pair.figures[name] for name in names],
                    "means": [(pair.topics.mean[name], pair.topics.counted[name]) for name in names],
                    "topics": [
                        (topic, None if figures is None else [figures[name] for name in names])
                        for topic, figures in pair.topics.topics.items()
                    ],
                }
                for pair in comparison.pairs
            ]
            context["json_query"] = request.GET.copy()
            context["json_query"]["format"] = "json"
    return render(request, "metaeval/truth.html", context)
