"""`topic_id<TAB>query` TSV."""

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
from assessor.models import Topic


def _parse_topics(path: Path):
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
            raise ImportFailure(f"topic repeated (first on line {seen[topic_id]})", path=path, line=number, field="topic_id")
        seen[topic_id] = number
        yield number, topic_id, query


def topics_import(*, path: Path, replace: bool = False, user: User | None = None) -> ImportResult:
    return import_file(
        lambda writes: _topics_prepare(writes, path=path, replace=replace),
        kind=TOPICS,
        path=path,
        options={"replace": replace},
        user=user,
    )


def _topics_prepare(writes: Writes, *, path: Path, replace: bool) -> ImportResult:
    batch = writes.batch
    result = ImportResult(path=str(path))
    for chunk in chunked(_parse_topics(path)):
        stored = Topic.objects.in_bulk([topic_id for _, topic_id, _ in chunk])
        new = []
        changed = []
        for number, topic_id, query in chunk:
            result.lines += 1
            existing = stored.get(topic_id)
            if existing is None:
                new.append(Topic(id=topic_id, query=query, imported_from=batch))
            elif existing.query == query:
                result.unchanged += 1
            elif replace:
                existing.query = query
                existing.imported_from = batch
                changed.append(existing)
                result.replaced += 1
            else:
                raise ImportFailure(
                    f"topic {topic_id} is stored with another query ({existing.query!r}); use --replace to change it",
                    path=path,
                    line=number,
                    field="query",
                )
        writes.update(changed, ["query", "imported_from"])
        writes.create(new)
        result.created += len(new)
    return result
