"""The report page's section of ARGUE-style judgments (assessor.registry.AnswerPanel): ARGUE's own page of one
judged report (argue.report_views) shows it sentence by sentence, with a second source beside the first and
their differences marked, so this section links there: each source that judged the report, with who stands
behind it, and each other source beside the first."""

from typing import Any

from argue.kinds import ARGUE_FAMILY
from argue.models import JudgedReport
from argue.report_views import report_url
from assessor.collection.answer_labels import source_column
from assessor.models import Answer
from assessor.scoring.lifecycle import labels_counted


def answer_panel_context(answer: Answer) -> dict[str, Any] | None:
    """The registry's `AnswerPanel.context`: the sources whose counted judgments of this report ARGUE's page
    shows, each with links to it alone and beside the first; None when no source judged it."""
    judged = labels_counted(JudgedReport.objects.filter(source__family=ARGUE_FAMILY, answer=answer))
    sources = sorted({report.source for report in judged.select_related("source")}, key=lambda source: source.name)
    if not sources:
        return None
    run, topic = answer.run.run_id, answer.topic_id
    first = sources[0].name
    return {
        "sources": [
            {
                "column": source_column(source),
                "url": report_url(source=source.name, run=run, topic=topic),
                "beside_first": report_url(source=first, run=run, topic=topic, vs=source.name)
                if source.name != first
                else "",
            }
            for source in sources
        ],
        "first": first,
    }
