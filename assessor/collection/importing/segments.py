"""Segments as JSONL: `{"docid", "segment" | "contents" | "text", "title"?, "url"?}`.

Qrels and runs may name segments before their text is imported: those exist as
placeholder rows with empty text (`segment_placeholders_create`), and filling
in a placeholder's text is not a contradiction.
"""

import hashlib
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.kinds import SEGMENTS
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_SEGMENT_CHARS,
    MAX_TITLE_CHARS,
    MAX_URL_CHARS,
    ImportFailure,
    ImportResult,
    Writes,
    chunked,
    id_checked,
    in_batches,
    limited,
    optional_str,
    read_jsonl,
    require,
)
from assessor.importing.pipeline import Changes, RecordImport
from assessor.models import Segment

# The field names the text goes by in the wild: ours, pyserini's, and a plain one.
TEXT_KEYS = ("segment", "contents", "text")


@dataclass(frozen=True)
class SegmentLine:
    line: int
    docid: str
    text: str
    title: str
    url: str
    text_key: str  # which key held the text, for error messages


def _parse_segment(record: dict[str, Any], *, path: Path, line: int) -> SegmentLine:
    docid = require(record, "docid", str, path=path, line=line)
    id_checked(docid, MAX_ID_CHARS, path=path, line=line, field="docid")
    text_key = next((key for key in TEXT_KEYS if key in record), None)
    if text_key is None:
        raise ImportFailure(
            f"missing (the text goes in one of {', '.join(TEXT_KEYS)})", path=path, line=line, field="segment"
        )
    text = require(record, text_key, str, path=path, line=line)
    if not text.strip():
        raise ImportFailure("empty text", path=path, line=line, field=text_key)
    limited(text, MAX_SEGMENT_CHARS, path=path, line=line, field=text_key)
    return SegmentLine(
        line=line,
        docid=docid,
        text=text,
        title=optional_str(record, "title", MAX_TITLE_CHARS, path=path, line=line),
        url=optional_str(record, "url", MAX_URL_CHARS, path=path, line=line),
        text_key=text_key,
    )


def _parse_segments(path: Path) -> Iterator[SegmentLine]:
    for number, record in read_jsonl(path):
        yield _parse_segment(record, path=path, line=number)


def segments_existing(docids: Collection[str]) -> set[str]:
    """The docids among `docids` that are stored, in a few queries whatever their number."""
    found: set[str] = set()
    for batch in in_batches(docids):
        found.update(Segment.objects.filter(docid__in=batch).values_list("docid", flat=True))
    return found


def segment_placeholders_create(writes: Writes, docids: Iterable[str]) -> int:
    """Make an empty-text row for every docid not stored yet; returns how many were new.

    Placeholders carry no batch: they are a reference to a passage, not data
    from a file, and the segments import fills them in later. A docid named
    again in a later chunk of a staged import is one placeholder.
    """
    wanted = set(docids)
    missing = wanted - segments_existing(wanted)
    # ignore_conflicts: another import may add the same docid concurrently.
    writes.create([Segment(docid=docid) for docid in sorted(missing)], ignore_conflicts=True)
    return len(missing)


def _fingerprint(line: SegmentLine) -> str:
    return hashlib.sha1("\x00".join((line.text, line.title, line.url)).encode()).hexdigest()


def _same(stored: Segment, line: SegmentLine) -> bool:
    return (stored.text, stored.title, stored.url) == (line.text, line.title, line.url)


def segments_import(*, path: Path, replace: bool = False, user: User | None = None) -> ImportResult:
    return SegmentsImport(path=path, replace=replace, user=user).run()


class SegmentsImport(RecordImport[SegmentLine, str, Segment, ImportResult]):
    """One segment a line, keyed by docid; a placeholder's text is filled in, anything else needs --replace."""

    kind = SEGMENTS

    def parse(self) -> Iterator[SegmentLine]:
        return _parse_segments(self.path)

    def chunks(self) -> Iterable[list[SegmentLine]]:
        return chunked(self.parse())

    def chunk_prepare(self, chunk: list[SegmentLine]) -> None:
        self.stored = {}
        for docids in in_batches({line.docid for line in chunk}):
            self.stored.update(Segment.objects.in_bulk(docids))
        # What earlier chunks of this file said of the same docids (the database does not hold it yet when staged).
        self.earlier_chunks = self.writes.first_claims(
            "segment", ((line.docid, line.line, _fingerprint(line)) for line in chunk)
        )

    def resolve(self, line: SegmentLine) -> str:
        return line.docid

    def compare(self, changes: Changes[str, SegmentLine, Segment], key: str, line: SegmentLine) -> None:
        claimed = self.earlier_chunks.get(key)
        stored = self.existing(key)
        if claimed is not None:
            if claimed[1] != _fingerprint(line):
                # Written by an earlier chunk of this very file.
                raise ImportFailure(
                    f"segment {line.docid} repeated in this file with another text (first on line {claimed[0]})",
                    path=self.path,
                    line=line.line,
                    field="docid",
                )
            self.result.unchanged += 1
        elif stored is not None and not stored.text and changes.first(key) is None:
            # Filling a placeholder is what it waits for: created, with or without --replace.
            changes.changed[key] = (stored, line)
            changes.filled.add(key)
        else:
            super().compare(changes, key, line)

    def repeated(self, first: SegmentLine, line: SegmentLine, *, first_new: bool) -> None:
        if (first.text, first.title, first.url) == (line.text, line.title, line.url):
            return
        if first_new:
            message = f"segment {line.docid} repeated with another text (first on line {first.line})"
        else:
            message = f"segment {line.docid} repeated in this file with another text"
        raise ImportFailure(message, path=self.path, line=line.line, field="docid")

    def same(self, stored: Segment, line: SegmentLine) -> bool:
        return _same(stored, line)

    def conflict(self, stored: Segment, line: SegmentLine) -> ImportFailure:
        differs = "text" if stored.text != line.text else "title" if stored.title != line.title else "url"
        return ImportFailure(
            f"segment {line.docid} is stored with another {differs}; use --replace to change it",
            path=self.path,
            line=line.line,
            field=line.text_key if differs == "text" else differs,
        )

    def write(self, changes: Changes[str, SegmentLine, Segment]) -> None:
        self.writes.create(
            Segment(docid=line.docid, text=line.text, title=line.title, url=line.url, imported_from=self.batch)
            for line in changes.new.values()
        )
        for segment, line in changes.changed.values():
            segment.text, segment.title, segment.url = line.text, line.title, line.url
            segment.imported_from = self.batch
        self.writes.update(changes.changed_rows(), ["text", "title", "url", "imported_from"])
