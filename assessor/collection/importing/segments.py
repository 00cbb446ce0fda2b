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
    import_file,
    in_batches,
    limited,
    optional_str,
    read_jsonl,
    require,
)
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
        raise ImportFailure(f"missing (the text goes in one of {', '.join(TEXT_KEYS)})", path=path, line=line, field="segment")
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
    path = Path(path)
    return import_file(
        lambda writes: _segments_prepare(writes, path=path, replace=replace),
        kind=SEGMENTS,
        path=path,
        options={"replace": replace},
        user=user,
    )


def _segments_prepare(writes: Writes, *, path: Path, replace: bool) -> ImportResult:
    batch = writes.batch
    result = ImportResult(path=str(path))
    for chunk in chunked(_parse_segments(path)):
        stored = {}
        for docids in in_batches({line.docid for line in chunk}):
            stored.update(Segment.objects.in_bulk(docids))
        # What earlier chunks of this file said of the same docids (the database does not hold it yet when staged).
        earlier_chunks = writes.first_claims("segment", ((line.docid, line.line, _fingerprint(line)) for line in chunk))
        new: dict[str, SegmentLine] = {}
        changed: dict[str, Segment] = {}
        for line in chunk:
            result.lines += 1
            earlier = new.get(line.docid)
            claimed = earlier_chunks.get(line.docid)
            if claimed is not None:
                if claimed[1] != _fingerprint(line):
                    # Written by an earlier chunk of this very file.
                    raise ImportFailure(
                        f"segment {line.docid} repeated in this file with another text (first on line {claimed[0]})",
                        path=path,
                        line=line.line,
                        field="docid",
                    )
                result.unchanged += 1
                continue
            if earlier is not None:
                if (earlier.text, earlier.title, earlier.url) != (line.text, line.title, line.url):
                    raise ImportFailure(
                        f"segment {line.docid} repeated with another text (first on line {earlier.line})",
                        path=path,
                        line=line.line,
                        field="docid",
                    )
                result.unchanged += 1
                continue
            existing = stored.get(line.docid)
            if existing is None:
                new[line.docid] = line
            elif line.docid in changed:
                if (existing.text, existing.title, existing.url) != (line.text, line.title, line.url):
                    raise ImportFailure(
                        f"segment {line.docid} repeated in this file with another text", path=path, line=line.line, field="docid"
                    )
                result.unchanged += 1
            elif _same(existing, line):
                result.unchanged += 1
            elif not existing.text or replace:
                # Filling a placeholder is what it waits for; anything else needs --replace.
                if existing.text:
                    result.replaced += 1
                else:
                    result.created += 1
                existing.text, existing.title, existing.url = line.text, line.title, line.url
                existing.imported_from = batch
                changed[line.docid] = existing
            else:
                differs = "text" if existing.text != line.text else "title" if existing.title != line.title else "url"
                raise ImportFailure(
                    f"segment {line.docid} is stored with another {differs}; use --replace to change it",
                    path=path,
                    line=line.line,
                    field=line.text_key if differs == "text" else differs,
                )
        writes.create(
            [
                Segment(docid=line.docid, text=line.text, title=line.title, url=line.url, imported_from=batch)
                for line in new.values()
            ]
        )
        writes.update(list(changed.values()), ["text", "title", "url", "imported_from"])
        result.created += len(new)
    return result
