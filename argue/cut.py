"""The report cut: how many of a report's sentences, from the first, its request's limit keeps."""

from collections.abc import Sequence

from reports.layout import report_cut
from reports.models import ReportRequest


def sentences_kept(*, topic_id: str, texts: Sequence[str]) -> int:
    """All of them when the topic's request sets no limit (or the topic has no request)."""
    request = ReportRequest.objects.filter(pk=topic_id).first()
    limit = request.length_limit if request is not None else None
    if limit is None:
        return len(texts)
    return report_cut(texts, *limit)
