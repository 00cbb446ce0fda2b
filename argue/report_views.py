"""The organizer's page of one judged report, sentence by sentence (argue/report_page.py), with a second source
beside the first where one is chosen: reached from the ARGUE-style leaderboard and from a run's page."""

from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from argue.kinds import ARGUE_FAMILY
from argue.models import JudgedReport
from argue.report_page import judged_by, report_page
from argue.scoring import listed
from assessor.http import AuthenticatedRequest
from assessor.models import Answer, Run
from assessor.scoring.lifecycle import labels_counted
from assessor.work.roles import organizer_required
from reports.texts import request_texts


def report_url(*, source: str, run: str, topic: str, vs: str = "") -> str:
    query = {"source": source, "run": run, "topic": topic} | ({"vs": vs} if vs else {})
    return f"{reverse('argue:report')}?{urlencode(query)}"


def _chosen(request: AuthenticatedRequest, name: str, choices: list[str]) -> str:
    """The page's choice of `name` among `choices` (the first by default); another value is a 404."""
    value = request.GET.get(name) or (choices[0] if choices else "")
    if value not in choices:
        raise Http404(f"No such {name}: {value!r}.")
    return value


@require_GET
@organizer_required
def report(request: AuthenticatedRequest) -> HttpResponse:
    names = [name for (name,) in listed()]
    source = _chosen(request, "source", names)
    vs = request.GET.get("vs", "")
    if vs and vs not in names:
        raise Http404(f"No ARGUE-style source named {vs!r}.")
    reports = judged_by(source)
    run = _chosen(request, "run", sorted({run for run, _ in reports}))
    topics = [topic for one_run, topic in reports if one_run == run]
    topic = _chosen(request, "topic", topics)
    answer = get_object_or_404(
        Answer.objects.select_related("run", "topic"), run__in=Run.objects.filter(run_id=run), topic_id=topic
    )
    page = report_page(answer=answer, names=[source, *([vs] if vs and vs != source else [])])
    at = topics.index(topic)
    near = {"previous": topics[at - 1] if at else "", "next": topics[at + 1] if at + 1 < len(topics) else ""}
    context = {
        "page": page,
        "names": names,
        "source": source,
        "vs": vs if vs != source else "",
        "runs": sorted({run for run, _ in reports}),
        "run": run,
        "topics": topics,
        "topic": topic,
        "request_text": request_texts([topic]).get(topic),
        "near": {key: report_url(source=source, run=run, topic=value, vs=vs) for key, value in near.items() if value},
    }
    return render(request, "argue/report.html", context)


def run_panel_context(run: Run) -> dict[str, Any] | None:
    """The registry's `RunPanel.context`: the run's reports each ARGUE-style source judged, each a link to its page
    (None where no source judged any)."""
    reports = labels_counted(JudgedReport.objects.filter(source__family=ARGUE_FAMILY, answer__run=run))
    judged: dict[str, list[str]] = defaultdict(list)
    for name, topic in sorted(set(reports.order_by().values_list("source__name", "answer__topic_id"))):
        judged[name].append(topic)
    if not judged:
        return None
    return {
        "sources": [
            (name, [(topic, report_url(source=name, run=run.run_id, topic=topic)) for topic in topics])
            for name, topics in judged.items()
        ]
    }
