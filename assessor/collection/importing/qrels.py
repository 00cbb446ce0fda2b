"""TREC qrels: `topic_id Q0 docid grade`, whitespace separated, grades 0-3, under a named source.

Topic ids are read as the campaign's files give them and stored under their keys (assessor.models.keys);
the source is the campaign's: two campaigns may each have a source "nist".
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.importing.segments import segment_placeholders_create
from assessor.collection.kinds import QRELS, QRELS_FAMILY
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    chunked,
    id_checked,
    in_batches,
    read_lines,
)
from assessor.importing.pipeline import Changes, RecordImport
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import Qrel, QrelSource, Topic
from assessor.models.keys import published_id
from assessor.names import name_problem
from assessor.sources import import_source_claim

# Column 2 is TREC's unused "iteration": "0" in NIST's files, "Q0" in many others.
ITERATION_VALUES = ("0", "Q0")
GRADES = range(0, 4)


@dataclass(frozen=True)
class QrelLine:
    line: int
    topic_id: str  # the topic's stored key
    docid: str
    grade: int


def _parse_qrel(text: str, *, path: Path, line: int, topic_ids: FileTopicIds) -> QrelLine:
    parts = text.split()
    if len(parts) != 4:
        raise ImportFailure(
            f"expected 4 whitespace-separated fields (topic_id Q0 docid grade), found {len(parts)}",
            path=path,
            line=line,
        )
    topic_id, iteration, docid, grade_text = parts
    id_checked(topic_id, MAX_TOPIC_ID_CHARS, path=path, line=line, field="topic_id")
    id_checked(docid, MAX_ID_CHARS, path=path, line=line, field="docid")
    if iteration not in ITERATION_VALUES:
        raise ImportFailure(
            f"expected {' or '.join(ITERATION_VALUES)} in column 2, found {iteration!r}",
            path=path,
            line=line,
            field="Q0",
        )
    try:
        grade = int(grade_text)
    except ValueError:
        raise ImportFailure(f"not an integer: {grade_text!r}", path=path, line=line, field="grade") from None
    if grade not in GRADES:
        raise ImportFailure(f"grade {grade} is not in 0-3", path=path, line=line, field="grade")
    key = topic_ids.key(topic_id, path=path, line=line, field="topic_id")
    return QrelLine(line=line, topic_id=key, docid=docid, grade=grade)


def _parse_qrels(path: Path) -> Iterator[QrelLine]:
    topic_ids = FileTopicIds()
    for number, text in read_lines(path):
        yield _parse_qrel(text, path=path, line=number, topic_ids=topic_ids)


def _source_checked(source: str) -> str:
    name = source.strip()
    if problem := name_problem(name):
        raise ImportFailure(problem, field="source")
    return name


def _topics_check(chunk: list[QrelLine], *, path: Path) -> None:
    known = set(Topic.objects.filter(id__in={line.topic_id for line in chunk}).values_list("id", flat=True))
    for line in chunk:
        if line.topic_id not in known:
            raise ImportFailure(
                f"unknown topic {published_id(line.topic_id)} (import the topics first)",
                path=path,
                line=line.line,
                field="topic_id",
            )


def _stored_qrels(source: QrelSource, chunk: list[QrelLine]) -> dict[tuple[str, str], Qrel]:
    topic_ids = {line.topic_id for line in chunk}
    docids = sorted({line.docid for line in chunk})
    stored: dict[tuple[str, str], Qrel] = {}
    for batch in in_batches(docids):
        rows = Qrel.objects.filter(source=source, topic_id__in=topic_ids, segment_id__in=batch)
        stored.update(((qrel.topic_id, qrel.segment_id), qrel) for qrel in rows)
    return stored


def qrels_import(*, path: Path, source: str, replace: bool = False, user: User | None = None) -> ImportResult:
    path = Path(path)
    return QrelsImport(path=path, source=_source_checked(source), replace=replace, user=user).run()


QrelKey = tuple[str, str]  # (topic id, docid)


class QrelsImport(RecordImport[QrelLine, QrelKey, Qrel, ImportResult]):
    """One grade a line, keyed by topic and document, under one named source; chunk by chunk."""

    kind = QRELS

    def __init__(self, *, source: str, **common: Any) -> None:
        super().__init__(**common)
        self.source_name = source
        self.qrel_source: QrelSource | None = None

    def options(self) -> dict[str, Any]:
        return {"source": self.source_name, "replace": self.replace}

    def parse(self) -> Iterator[QrelLine]:
        return _parse_qrels(self.path)

    def chunks(self) -> Iterable[list[QrelLine]]:
        return chunked(self.parse())

    def chunk_prepare(self, chunk: list[QrelLine]) -> None:
        if self.qrel_source is None:
            # Made only once there is a line, so an empty file leaves no empty source behind.
            # The name's source is claimed even when it exists: an LLM's grades take no file's.
            label_source = import_source_claim(
                writes=self.writes, family=QRELS_FAMILY, name=self.source_name, user=self.user, path=self.path,
                option="--source",
            )  # fmt: skip
            self.qrel_source = QrelSource.objects.filter(name=self.source_name).first() or self.writes.create_one(
                QrelSource(name=self.source_name, imported_from=self.batch, source_id=label_source)
            )
        _topics_check(chunk, path=self.path)
        segment_placeholders_create(self.writes, (line.docid for line in chunk))
        self.stored = _stored_qrels(self.qrel_source, chunk) if self.qrel_source.pk > 0 else {}
        # The grades earlier chunks of this file gave (the database does not hold them yet when staged).
        self.earlier_chunks = self.writes.first_claims(
            "qrel", ((f"{line.topic_id}\t{line.docid}", line.line, str(line.grade)) for line in chunk)
        )

    def resolve(self, line: QrelLine) -> QrelKey:
        return line.topic_id, line.docid

    def compare(self, changes: Changes[QrelKey, QrelLine, Qrel], key: QrelKey, line: QrelLine) -> None:
        claimed = self.earlier_chunks.get(f"{line.topic_id}\t{line.docid}")
        if claimed is None:
            super().compare(changes, key, line)
            return
        if claimed[1] != str(line.grade):
            raise _repeated(line, f"grade {claimed[1]} earlier in this file", path=self.path)
        self.result.unchanged += 1

    def repeated(self, first: QrelLine, line: QrelLine, *, first_new: bool) -> None:
        if first.grade != line.grade:
            earlier = (
                f"grade {first.grade} on line {first.line}"
                if first_new
                else f"grade {first.grade} earlier in this file"
            )
            raise _repeated(line, earlier, path=self.path)

    def same(self, stored: Qrel, line: QrelLine) -> bool:
        return stored.grade == line.grade

    def conflict(self, stored: Qrel, line: QrelLine) -> ImportFailure:
        return ImportFailure(
            f"{self.source_name} grades {line.docid} for topic {published_id(line.topic_id)} {stored.grade}, "
            f"not {line.grade}; "
            "use --replace to change it",
            path=self.path,
            line=line.line,
            field="grade",
        )

    def write(self, changes: Changes[QrelKey, QrelLine, Qrel]) -> None:
        self.writes.create(
            [
                Qrel(
                    source=self.qrel_source, topic_id=line.topic_id, segment_id=line.docid, grade=line.grade,
                    imported_from=self.batch,
                )
                for line in changes.new.values()
            ]
        )  # fmt: skip
        for qrel, line in changes.changed.values():
            qrel.grade, qrel.imported_from = line.grade, self.batch
        self.writes.update(changes.changed_rows(), ["grade", "imported_from"])


def _repeated(line: QrelLine, earlier: str, *, path: Path) -> ImportFailure:
    return ImportFailure(
        f"topic {published_id(line.topic_id)} / {line.docid} repeated with grade {line.grade} (was {earlier})",
        path=path,
        line=line.line,
        field="grade",
    )
