"""The one import pipeline every importer configures: parse, resolve ids, compare with what is stored, write.

An importer is a `RecordImport`: it names its kind and options, parses its file
into lines (`parse`), and, a chunk of lines at a time, looks up what the chunk
names (`chunk_prepare`: ids, stored rows), gives each line its key (`resolve`:
an unknown id or a repeated record is an ImportFailure there), compares it with
the stored row of that key, and writes the chunk's new and changed rows
(`write`). The comparison is one rule for every importer:

- no stored row: the line is new;
- a line of this chunk already new or changed under the key: the two must agree
  (`repeated`), the second is unchanged;
- the stored row says the same (`same`): unchanged;
- it says otherwise: replaced under `replace` where the row may be
  (`replaceable`), else the import fails (`conflict`) and nothing is written.

`run` hands the import to `import_file`, which keeps its rules (staging on
SQLite, one transaction elsewhere, progress, the ImportBatch, all or nothing).
An importer whose records are not one row a key (answers with their sentences,
nugget lists) replaces `chunk_import` and keeps the rest.
"""

from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, cast

from django.contrib.auth.models import User

from assessor.importing.base import CHUNK_LINES, ImportFailure, ImportResult, chunked, import_file
from assessor.importing.staging import Writes
from assessor.models import Provenance

Line = TypeVar("Line")
Key = TypeVar("Key", bound=Hashable)
Stored = TypeVar("Stored")
Result = TypeVar("Result", bound=ImportResult)


@dataclass
class Changes(Generic[Key, Line, Stored]):
    """What a chunk's comparison decided: the lines new to the store, the stored rows they change."""

    new: dict[Key, Line] = field(default_factory=dict)
    changed: dict[Key, tuple[Stored, Line]] = field(default_factory=dict)
    # Stored rows a line completes (a placeholder filled in): written as changes, counted as created.
    filled: set[Key] = field(default_factory=set)

    def first(self, key: Key) -> Line | None:
        """The line of this chunk that already made `key` new or changed, if any."""
        if key in self.new:
            return self.new[key]
        return self.changed[key][1] if key in self.changed else None

    def changed_rows(self) -> list[Stored]:
        return [stored for stored, _ in self.changed.values()]


class RecordImport(Generic[Line, Key, Stored, Result]):
    """One file's import, configured by a subclass: its parser, its id resolution, its comparison, its writer."""

    kind: str  # the Importer kind it reads: a class attribute, or set by an importer configured per app
    # Lines a chunk holds; None: the whole file is one chunk (files whose records resolve together).
    chunk_size: ClassVar[int | None] = CHUNK_LINES

    def __init__(self, *, path: Path, replace: bool = False, user: User | None = None) -> None:
        self.path = Path(path)
        self.replace = replace
        self.user = user
        self.stored: dict[Key, Stored] = {}

    # --- what an importer configures ----------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """What the ImportBatch records of how the file was imported."""
        return {"replace": self.replace}

    def check(self) -> None:
        """Refuse bad options before anything is read (ImportFailure)."""

    def result_new(self) -> Result:
        return ImportResult(path=str(self.path))  # type: ignore[return-value]

    def parse(self) -> Iterator[Line]:
        raise NotImplementedError

    def start(self) -> None:
        """Before the first line is read: what the whole import stands on (a claimed source, a table)."""

    def chunk_prepare(self, chunk: list[Line]) -> None:
        """Look up what the chunk names: the ids it resolves, the stored rows (`self.stored`) it compares with."""

    def keyed(self, chunk: list[Line]) -> Iterator[tuple[Key, Line]]:
        """Each line with its key, line by line (so a line's unknown id is named before a later line's conflict)."""
        for line in chunk:
            self.result.lines += 1
            yield self.resolve(line), line

    def resolve(self, line: Line) -> Key:
        raise NotImplementedError

    def existing(self, key: Key) -> Stored | None:
        return self.stored.get(key)

    def same(self, stored: Stored, line: Line) -> bool:
        raise NotImplementedError

    def replaceable(self, stored: Stored) -> bool:
        return True

    def conflict(self, stored: Stored, line: Line) -> ImportFailure:
        """The error of a line that contradicts a stored row it may not replace."""
        raise NotImplementedError

    def repeated(self, first: Line, line: Line, *, first_new: bool) -> None:
        """A second line of the chunk for a key the first made new (`first_new`) or changed: refuse it if they differ."""
        raise NotImplementedError

    def write(self, changes: Changes[Key, Line, Stored]) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """After the last chunk: what is said of the whole file (warnings, an empty table)."""

    # --- the pipeline -------------------------------------------------------------------------

    def run(self) -> Result:
        """Check the options, then import the file atomically (`import_file`)."""
        self.check()
        return import_file(self.prepare, kind=self.kind, path=self.path, options=self.options(), user=self.user)

    def prepare(self, writes: Writes) -> Result:
        """`import_file`'s preparation: every chunk read, resolved, compared and written through `writes`."""
        self.writes = writes
        self.batch = writes.batch
        self.result = self.result_new()
        self.start()
        for chunk in self.chunks():
            self.chunk_import(chunk)
        self.finish()
        return self.result

    def chunks(self) -> Iterable[list[Line]]:
        if self.chunk_size is None:
            return [list(self.parse())]
        return chunked(self.parse(), self.chunk_size)

    def chunk_import(self, chunk: list[Line]) -> None:
        self.chunk_prepare(chunk)
        changes: Changes[Key, Line, Stored] = Changes()
        for key, line in self.keyed(chunk):
            self.compare(changes, key, line)
        self.write(changes)
        self.result.created += len(changes.new) + len(changes.filled)
        self.result.replaced += len(changes.changed) - len(changes.filled)

    def compare(self, changes: Changes[Key, Line, Stored], key: Key, line: Line) -> None:
        first = changes.first(key)
        if first is not None:
            self.repeated(first, line, first_new=key in changes.new)
            self.result.unchanged += 1
            return
        stored = self.existing(key)
        if stored is None:
            changes.new[key] = line
        elif self.same(stored, line):
            self.result.unchanged += 1
        elif self.replace and self.replaceable(stored):
            changes.changed[key] = (stored, line)
        else:
            raise self.conflict(stored, line)


class LabelsImport(RecordImport[Line, Key, Stored, Result]):
    """An importer of labels (rows with Provenance): under `replace`, a file replaces only what a file made, never
    a person's label or an LLM's."""

    def replaceable(self, stored: Stored) -> bool:
        return cast(Provenance, stored).imported_from_id is not None
