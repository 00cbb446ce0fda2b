"""What the second family's prompts say of a topic: its request's title, background and problem statement.

A topic without a request (a TREC 2024 topic) is a request whose title is its query.
"""

from dataclasses import dataclass

from assessor.models import AssessorWork, Topic
from reports.models import ReportRequest


@dataclass(frozen=True)
class RequestText:
    title: str
    background: str
    problem_statement: str


def request_texts(topic_ids: list[str]) -> dict[str, RequestText]:
    """topic id -> its request's texts, for each of the topics that exist."""
    requests = ReportRequest.objects.in_bulk(topic_ids)
    texts: dict[str, RequestText] = {}
    for topic_id, query in Topic.objects.filter(pk__in=topic_ids).values_list("pk", "query"):
        request = requests.get(topic_id)
        texts[topic_id] = (
            RequestText(request.title, request.background, request.problem_statement)
            if request is not None
            else RequestText(query, "", "")
        )
    return texts


def work_request(work: AssessorWork) -> dict[str, RequestText]:
    """The judging pages' context of a report family's work: its topic's request (`LabelApp.context`)."""
    return {"request_text": request_texts([work.topic_id])[work.topic_id]}
