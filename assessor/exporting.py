"""The collection's files, written in the formats its importers read."""

from collections.abc import Iterator

from assessor.models import Qrel, QrelSource

FETCH_CHUNK = 20_000


def qrel_sources_list() -> list[str]:
    return list(QrelSource.objects.order_by("name").values_list("name", flat=True))


def qrels_lines(*, source: str) -> Iterator[str]:
    """TREC qrels `topic_id Q0 docid grade`, by topic then docid. Raises LookupError for an unknown source."""
    if not QrelSource.objects.filter(name=source).exists():
        known = ", ".join(qrel_sources_list()) or "none"
        raise LookupError(f"no qrels source named {source!r}; sources: {known}")
    rows = (
        Qrel.objects.filter(source__name=source)
        .order_by("topic_id", "segment_id")
        .values_list("topic_id", "segment_id", "grade")
        .iterator(chunk_size=FETCH_CHUNK)
    )
    for topic_id, docid, grade in rows:
        yield f"{topic_id} Q0 {docid} {grade}\n"
