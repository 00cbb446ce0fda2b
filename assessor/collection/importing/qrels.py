"""TREC qrels: `topic_id Q0 docid grade`, whitespace separated, grades 0-3, under a named source."""

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User

from assessor.collection.importing.segments import segment_placeholders_create
from assessor.collection.kinds import QRELS, QRELS_FAMILY
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    Writes,
    chunked,
    id_checked,
    import_file,
    in_batches,
    read_lines,
)
from assessor.models import Qrel, QrelSource, Topic
from assessor.names import name_problem
from assessor.sources import import_source_claim

# Column 2 is TREC's unused "iteration": "0" in NIST's files, "Q0" in many others.
ITERATION_VALUES = ("0", "Q0")
GRADES = range(0, 4)


@dataclass(frozen=True)
class QrelLine:
    line: int
    topic_id: str
    docid: str
    grade: int


def _parse_qrel(text: str, *, path: Path, line: int) -> QrelLine:
    parts = text.split()
    if len(parts) != 4:
        raise ImportFailure(
            f"expected 4 whitespace-separated fields (topic_id Q0 docid grade), found {len(parts)}", path=path, line=line
        )
    topic_id, iteration, docid, grade_text = parts
    id_checked(topic_id, MAX_TOPIC_ID_CHARS, path=path, line=line, field="topic_id")
    id_checked(docid, MAX_ID_CHARS, path=path, line=line, field="docid")
    if iteration not in ITERATION_VALUES:
        raise ImportFailure(
            f"expected {' or '.join(ITERATION_VALUES)} in column 2, found {iteration!r}", path=path, line=line, field="Q0"
        )
    try:
        grade = int(grade_text)
    except ValueError:
        raise ImportFailure(f"not an integer: {grade_text!r}", path=path, line=line, field="grade") from None
    if grade not in GRADES:
        raise ImportFailure(f"grade {grade} is not in 0-3", path=path, line=line, field="grade")
    return QrelLine(line=line, topic_id=topic_id, docid=docid, grade=grade)


def _parse_qrels(path: Path) -> Iterator[QrelLine]:
    for number, text in read_lines(path):
        yield _parse_qrel(text, path=path, line=number)


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
                f"unknown topic {line.topic_id} (import the topics first)", path=path, line=line.line, field="topic_id"
            )


def _stored_qrels(source: QrelSource, chunk: list[QrelLine]) -> dict[tuple[str, str], Qrel]:
    topic_ids = {line.topic_id for line in chunk}
    docids = sorted({line.docid for line in chunk})
    stored: dict[tuple[str, str], Qrel] = {}
    for batch in in_batches(docids):
        rows = Qrel.objects.filter(source=source, topic_id__in=topic_ids, segment_id__in=batch)
        stored.update(((qrel.topic_id, qrel.segment_id), qrel) for qrel in rows)
    return stored


def qrels_import(
    *, path: Path, source: str, replace: bool = False, user: User | None = None
) -> ImportResult:
    path = Path(path)
    source_name = _source_checked(source)
    return import_file(
        lambda writes: _qrels_prepare(writes, path=path, source_name=source_name, replace=replace, user=user),
        kind=QRELS,
        path=path,
        options={"source": source_name, "replace": replace},
        user=user,
    )


def _qrels_prepare(
    writes: Writes, *, path: Path, source_name: str, replace: bool, user: User | None
) -> ImportResult:
    batch = writes.batch
    result = ImportResult(path=str(path))
    qrel_source: QrelSource | None = None
    for chunk in chunked(_parse_qrels(path)):
        if qrel_source is None:
            # Made only once there is a line, so an empty file leaves no empty source behind.
            # The name's source is claimed even when it exists: an LLM's grades take no file's.
            label_source = import_source_claim(
                writes=writes, family=QRELS_FAMILY, name=source_name, user=user, path=path,
                option="--source",
            )  # fmt: skip
            qrel_source = QrelSource.objects.filter(name=source_name).first() or writes.create_one(
                QrelSource(name=source_name, imported_from=batch, source_id=label_source)
            )
        _topics_check(chunk, path=path)
        segment_placeholders_create(writes, (line.docid for line in chunk))
        stored = _stored_qrels(qrel_source, chunk) if qrel_source.pk > 0 else {}
        # The grades earlier chunks of this file gave (the database does not hold them yet when staged).
        earlier_chunks = writes.first_claims(
            "qrel", ((f"{line.topic_id}\t{line.docid}", line.line, str(line.grade)) for line in chunk)
        )
        new: dict[tuple[str, str], QrelLine] = {}
        changed: dict[tuple[str, str], Qrel] = {}
        for line in chunk:
            result.lines += 1
            key = (line.topic_id, line.docid)
            earlier = new.get(key)
            existing = stored.get(key)
            claimed = earlier_chunks.get(f"{line.topic_id}\t{line.docid}")
            if claimed is not None:
                if claimed[1] != str(line.grade):
                    raise _repeated(line, f"grade {claimed[1]} earlier in this file", path=path)
                result.unchanged += 1
            elif earlier is not None:
                if earlier.grade != line.grade:
                    raise _repeated(line, f"grade {earlier.grade} on line {earlier.line}", path=path)
                result.unchanged += 1
            elif existing is None:
                new[key] = line
            elif key in changed and existing.grade != line.grade:
                # Rewritten by an earlier line of this very chunk.
                raise _repeated(line, f"grade {existing.grade} earlier in this file", path=path)
            elif existing.grade == line.grade:
                result.unchanged += 1
            elif replace:
                existing.grade = line.grade
                existing.imported_from = batch
                changed[key] = existing
                result.replaced += 1
            else:
                raise ImportFailure(
                    f"{source_name} grades {line.docid} for topic {line.topic_id} {existing.grade}, not {line.grade}; "
                    "use --replace to change it",
                    path=path,
                    line=line.line,
                    field="grade",
                )
        writes.create(
            [
                Qrel(source=qrel_source, topic_id=line.topic_id, segment_id=line.docid, grade=line.grade, imported_from=batch)
                for line in new.values()
            ]
        )
        writes.update(list(changed.values()), ["grade", "imported_from"])
        result.created += len(new)
    return result


def _repeated(line: QrelLine, earlier: str, *, path: Path) -> ImportFailure:
    return ImportFailure(
        f"topic {line.topic_id} / {line.docid} repeated with grade {line.grade} (was {earlier})",
        path=path,
        line=line.line,
        field="grade",
    )
