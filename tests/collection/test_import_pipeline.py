"""The one import pipeline's comparison rule, on a small importer of `topic_id query` lines written for it.

Unlike the topics importer, its parser lets a topic repeat, and it keeps topics named `kept-*` from
being replaced: the two branches the collection's importers never reach together.
"""

from collections.abc import Iterator

import pytest

from assessor.importing.base import ImportFailure, ImportResult, read_lines
from assessor.importing.pipeline import Changes, RecordImport
from assessor.models import ImportBatch, Topic
from tests.builders import make_topic

pytestmark = pytest.mark.django_db

Row = tuple[int, str, str]  # (line, topic id, query)


class QueriesImport(RecordImport[Row, str, Topic, ImportResult]):
    kind = "pipeline-test"
    chunk_size = 2

    def __init__(self, **common):
        super().__init__(**common)
        self.repeats: list[tuple[int, int, bool]] = []  # (first line, line, first_new)

    def parse(self) -> Iterator[Row]:
        for number, text in read_lines(self.path):
            topic_id, query = text.split(" ", 1)
            yield number, topic_id, query

    def chunk_prepare(self, chunk):
        self.stored = Topic.objects.in_bulk([topic_id for _, topic_id, _ in chunk])

    def resolve(self, line):
        return line[1]

    def same(self, stored, line):
        return stored.query == line[2]

    def replaceable(self, stored):
        return not stored.id.startswith("kept-")

    def conflict(self, stored, line):
        return ImportFailure(f"{stored.id} holds {stored.query!r}", path=self.path, line=line[0])

    def repeated(self, first, line, *, first_new):
        self.repeats.append((first[0], line[0], first_new))
        if first[2] != line[2]:
            raise ImportFailure("repeated otherwise", path=self.path, line=line[0])

    def write(self, changes: Changes[str, Row, Topic]) -> None:
        for topic, (_, _, query) in changes.changed.values():
            topic.query = query
        self.writes.update(changes.changed_rows(), ["query"])
        self.writes.create(
            Topic(id=key, query=query, imported_from=self.batch) for key, (_, _, query) in changes.new.items()
        )


def test_lines_are_new_unchanged_or_replaced_and_counted_so(write_file):
    make_topic("same", query="q")
    make_topic("old", query="before")
    importer = QueriesImport(path=write_file("q.txt", "new a\nnew a\nsame q\nold after\n"), replace=True)
    result = importer.run()
    # Chunks of two: line 2 repeats line 1, which made its topic new, in the same chunk.
    assert (result.lines, result.created, result.unchanged, result.replaced) == (4, 1, 2, 1)
    assert importer.repeats == [(1, 2, True)]
    assert dict(Topic.objects.values_list("id", "query")) == {"new": "a", "same": "q", "old": "after"}
    assert ImportBatch.objects.get().kind == "pipeline-test"


def test_a_second_line_of_a_changed_key_is_compared_with_the_first(write_file):
    make_topic("old", query="before")
    importer = QueriesImport(path=write_file("q.txt", "old after\nold other\n"), replace=True)
    with pytest.raises(ImportFailure, match=r"q\.txt, line 2: repeated otherwise"):
        importer.run()
    assert importer.repeats == [(1, 2, False)]
    assert Topic.objects.get().query == "before"


@pytest.mark.parametrize("replace", [False, True])
def test_a_contradiction_fails_the_whole_file_unless_replace_may_replace_the_row(write_file, replace):
    make_topic("kept-1", query="before")
    path = write_file("q.txt", "fresh x\nkept-1 after\n")
    with pytest.raises(ImportFailure, match=r"q\.txt, line 2: kept-1 holds 'before'"):
        QueriesImport(path=path, replace=replace).run()
    assert list(Topic.objects.values_list("id", "query")) == [("kept-1", "before")]
    assert not ImportBatch.objects.exists()


def test_a_file_that_changes_nothing_leaves_no_batch(write_file):
    make_topic("same", query="q")
    result = QueriesImport(path=write_file("q.txt", "same q\n")).run()
    assert (result.lines, result.created, result.unchanged, result.replaced) == (1, 0, 1, 0)
    assert result.batch is None
    assert not ImportBatch.objects.exists()
