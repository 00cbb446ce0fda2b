"""What the reports app adds to the registry: its importers and the topic page's request."""

from assessor.models import Topic
from assessor.registry import Importer, ScoreRefresh, TopicPanel, register_importer, register_topic_panel
from reports.importing import reports_import, requests_import
from reports.kinds import IMPORT_REPORTS, IMPORT_REQUESTS
from reports.models import ReportRequest


def _request_panel(topic: Topic) -> dict:
    return {"report_request": ReportRequest.objects.filter(topic=topic).first()}


def register() -> None:
    # A grade source's run mean is over every request of the family (grades/scoring.py): new requests change it.
    register_importer(
        Importer(IMPORT_REQUESTS, "Report requests (AutoJudge JSONL)", requests_import, scores=ScoreRefresh.ALL)
    )
    register_importer(
        Importer(
            IMPORT_REPORTS, "Reports (AutoJudge JSONL, one report a line)", reports_import, scores=ScoreRefresh.TOUCHED
        )
    )
    register_topic_panel(TopicPanel(template="reports/topic_request_panel.html", context=_request_panel, order=0))
