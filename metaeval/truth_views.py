"""The page of a source against a truth leaderboard (metaeval.truth_comparison), and its JSON download."""

import json

from django.http import HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET

from assessor.collection.exporting import campaign_file_name
from assessor.collection.tables import cell, figure_text, rows_html
from assessor.http import AuthenticatedRequest
from assessor.models.keys import published_id
from assessor.work.roles import organizer_required
from metaeval.sources import source_judge, sources_list, sources_notes
from metaeval.truth import ON_MISSING, RunsMismatch, figure_names
from metaeval.truth_comparison import TruthOptions, truth_json, truth_kept

FIGURE_HEADINGS = {
    "kendall": "Kendall tau-b",
    "pearson": "Pearson",
    "spearman": "Spearman",
    "tauap_b": "tau_ap_b",
    "tau_gap": "tau_GAP",
}


# The track's rule, the page's default: a truth run the judged source lacks counts 0 (autojudge-evaluate's
# `default`). The command line keeps the tool's own default, `error`.
PAGE_ON_MISSING = "zero"
MISSING_RULES = {
    "zero": "a truth run the judged source lacks counts 0 (the track's rule)",
    "skip": "a truth run the judged source lacks is left out",
    "error": "the two must hold the same runs",
}


def mismatch_message(mismatch: RunsMismatch) -> str:
    """The refusal of `error`, with the remedy as this page's form names it."""
    return (
        f"The leaderboards hold different runs{mismatch.where} ({mismatch.differences}). "
        'Choose "zero" under Missing runs to count a missing truth run 0, or "skip" to leave it out.'
    )


def _top_k(text: str) -> int:
    """The form's top k (10 when empty), refused in the form's words when it is not a whole number."""
    if not text.strip():
        return 10
    if not text.strip().isdigit():
        raise ValueError(f"Top k must be a whole number of runs, not {text!r}")
    return int(text)


def _headings(top_k: int) -> list[tuple[str, str]]:
    return [(name, FIGURE_HEADINGS.get(name, f"Kendall over the truth's top {top_k}")) for name in figure_names(top_k)]


TIED_CELL = '<td class="num" title="the scores all tie">—</td>'
UNDEFINED_CELL = '<td class="num">—</td>'


def _topic_rows(pair, names: tuple[str, ...]) -> SafeString:
    """Each topic's row of figures as HTML, made here rather than in the template: hundreds of topics of six
    figures each cost the template's loop and `floatformat` tens of milliseconds (30 ms for 301 topics)."""
    too_few = f'<td colspan="{len(names)}" class="small">fewer than 3 runs</td>'
    rows = []
    for topic, figures in pair.topics.topics.items():
        if figures is None:
            cells = [too_few]
        elif topic in pair.topics.tied:
            cells = [TIED_CELL] * len(names)
        else:
            cells = [
                f'<td class="num">{figure_text(figures[name])}</td>'
                if figures[name] == figures[name]
                else UNDEFINED_CELL
                for name in names
            ]
        rows.append(["<td></td>", cell(published_id(topic), css="mono"), *cells])
    return rows_html(rows)


def _comparison_context(request: AuthenticatedRequest, comparison, top_k: int, *, per_topic: bool) -> dict:
    """What the page shows of a comparison: its run-level row and per-topic rows a metric pair, the notes."""
    names = figure_names(top_k)
    json_query = request.GET.copy()
    json_query["format"] = "json"
    return {
        "comparison": comparison,
        "headings": _headings(top_k),
        "notes": sources_notes([request.GET["a"], request.GET["truth"]]),
        "judges": [
            (str(comparison.a), source_judge(comparison.a)),
            (str(comparison.truth), source_judge(comparison.truth)),
        ],
        "rows": [
            {
                "pair": pair,
                "figures": [pair.figures[name] for name in names],
                "means": [(pair.topics.mean[name], pair.topics.counted[name]) for name in names],
                "topics": _topic_rows(pair, names) if per_topic else "",
            }
            for pair in comparison.pairs
        ],
        "json_query": json_query,
    }


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
        "on_missing": query.get("on_missing") or PAGE_ON_MISSING,
        "on_missing_choices": ON_MISSING,
        "missing_rules": MISSING_RULES,
        "top_k": query.get("top_k", "10"),
        "per_topic": query.get("per_topic", "") not in ("", "0"),
        "error": "",
        "comparison": None,
    }
    if context["a"] and context["truth"]:
        try:
            top_k = _top_k(context["top_k"])
            comparison = truth_kept(
                context["a"],
                context["truth"],
                metrics=context["metric"].split(),
                options=TruthOptions(on_missing=context["on_missing"], top_k=top_k),
            )
        except RunsMismatch as mismatch:
            context["error"] = mismatch_message(mismatch)
        except (LookupError, ValueError) as exc:
            context["error"] = str(exc.args[0] if exc.args else exc)
        else:
            if query.get("format") == "json":
                response = HttpResponse(json.dumps(truth_json(comparison), indent=2), content_type="application/json")
                response["Content-Disposition"] = f'attachment; filename="{campaign_file_name("metaeval-truth.json")}"'
                return response
            context.update(_comparison_context(request, comparison, top_k, per_topic=context["per_topic"]))
    return render(request, "metaeval/truth.html", context)
