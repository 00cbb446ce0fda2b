"""`topic_id<TAB>query` TSV: each topic stored under its key in the campaign in effect (assessor.models.keys)."""

from collections.abc import Iterable, Iterator
from pathlib import Path

from django.contrib.auth.models import User

from assessor.collection.kinds import TOPICS
from assessor.importing.base import (
    MAX_QUERY_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    Writes,
    chunked,
    id_checked,
    import_file,
    limited,
    read_lines,
)
from assessor.importing.pipeline import Changes, RecordImport
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import Topic
from assessor.models.keys import published_id

TopicLine = tuple[int, str, str]  # (line number, topic's stored key, query)


def _parse_topics(path: Path) -> Iterator[TopicLine]:
    topic_ids = FileTopicIds()
    seen: dict[str, int] = {}
    for number, line in read_lines(path):
        parts = line.split("\t")
        if len(parts) != 2:
            raise ImportFailure(f"expected 2 tab-separated fields, found {len(parts)}", path=path, line=number)
        topic_id, query = parts[0].strip(), parts[1].strip()
        id_checked(topic_id, MAX_TOPIC_ID_CHARS, path=path, line=number, field="topic_id")
        if not query:
            raise ImportFailure("empty", path=path, line=number, field="query")
        limited(query, MAX_QUERY_CHARS, path=path, line=number, field="query")
        if topic_id in seen:
            raise ImportFailure(
                f"topic repeated (first on line {seen[topic_id]})", path=path, line=number, field="topic_id"
            )
        seen[topic_id] = number
        yield number, topic_ids.key(topic_id, path=path, line=number, field="topic_id"), query


def topics_import(*, path: Path, replace: bool = False, user: User | None = None) -> ImportResult:
    return import_file(
        lambda writes: _topics_prepare(writes, path=path, replace=replace),
        kind=TOPICS,
        path=path,
        options={"replace": replace},
        user=user,
    )


def _topics_prepare(writes: Writes, *, path: Path, replace: bool) -> ImportResult:
    return TopicsImport(path=path, replace=replace).prepare(writes)


class TopicsImport(RecordImport[TopicLine, str, Topic, ImportResult]):
    """One topic a line, keyed by its id (the parser refuses a repeated one)."""

    kind = TOPICS

    def parse(self) -> Iterator[TopicLine]:
        return _parse_topics(self.path)

    def chunks(self) -> Iterable[list[TopicLine]]:
        return chunked(self.parse())

    def chunk_prepare(self, chunk: list[TopicLine]) -> None:
        self.stored = Topic.objects.in_bulk([topic_id for _, topic_id, _ in chunk])

    def resolve(self, line: TopicLine) -> str:
        return line[1]

    def same(self, stored: Topic, line: TopicLine) -> bool:
        return stored.query == line[2]

    def conflict(self, stored: Topic, line: TopicLine) -> ImportFailure:
        return ImportFailure(
            f"topic {published_id(stored.id)} is stored with another query ({stored.query!r}); use --replace to change it",
            path=self.path,
            line=line[0],
            field="query",
        )

    def write(self, changes: Changes[str, TopicLine, Topic]) -> None:
        for topic, (_, _, query) in changes.changed.values():
            topic.query, topic.imported_from = query, self.batch
        self.writes.update(changes.changed_rows(), ["query", "imported_from"])
        self.writes.create(
            Topic(id=topic_id, query=query, imported_from=self.batch) for topic_id, (_, _, query) in changes.new.items()
        )
