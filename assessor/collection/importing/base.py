"""What every importer shares: line reading, errors that name the place, batches.

An importer streams its file in chunks (memory does not grow with the file),
runs inside one transaction (a bad line changes nothing), and records an
ImportBatch as the provenance of what it created.
"""

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import connection, models

from assessor.models import ImportBatch

T = TypeVar("T")
R = TypeVar("R", bound="ImportResult")
CHUNK_LINES = 2000
# PostgreSQL plans queries on table statistics that autovacuum refreshes only
# some time later (or never, where it is off); right after a large import,
# stale statistics make the scoring joins scan whole tables.
ANALYZE_AFTER_ROWS = 10_000
# Below every database's limit on query parameters (SQLite's conservative 999 included).
LOOKUP_BATCH = 900


class ImportFailure(Exception):
    """A bad input, named by file, line and field. Nothing was written."""

    def __init__(self, message: str, *, path: str | Path = "", line: int | None = None, field: str = ""):
        self.message = message
        self.path = str(path)
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        place = self.path or "<input>"
        if self.line is not None:
            place += f", line {self.line}"
        if self.field:
            place += f", field {self.field!r}"
        return f"{place}: {self.message}"


@dataclass
class ImportResult:
    path: str
    lines: int = 0
    created: int = 0
    unchanged: int = 0
    replaced: int = 0
    warnings: list[str] = field(default_factory=list)
    batch: ImportBatch | None = None

    def summary(self) -> str:
        text = (
            f"{self.path}: {self.lines} lines, {self.created} created, "
            f"{self.unchanged} unchanged, {self.replaced} replaced"
        )
        if self.warnings:
            text += f", {len(self.warnings)} warnings"
        return text


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) for each non-blank line; UTF-8 with or without BOM, LF or CRLF."""
    try:
        with path.open("r", encoding="utf-8-sig", newline="") as handle:
            for number, raw in enumerate(handle, start=1):
                line = raw.rstrip("\r\n")
                if line.strip():
                    yield number, line
    except UnicodeDecodeError as exc:
        raise ImportFailure(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None
    except FileNotFoundError:
        raise ImportFailure("no such file", path=path) from None


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in read_lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFailure(f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=number) from None
        if not isinstance(record, dict):
            raise ImportFailure("a line must hold a JSON object", path=path, line=number)
        yield number, record


def require(record: dict[str, Any], key: str, kind: type | tuple[type, ...], *, path: Path, line: int) -> Any:
    """The value of a required field, of the expected JSON type."""
    if key not in record:
        raise ImportFailure("missing", path=path, line=line, field=key)
    value = record[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ImportFailure(f"expected {expected}, got {type(value).__name__}", path=path, line=line, field=key)
    return value


def chunked(items: Iterable[T], size: int = CHUNK_LINES) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def in_batches(items: Iterable[T], size: int = LOOKUP_BATCH) -> Iterator[list[T]]:
    """Items in lists small enough for one `IN (...)` lookup."""
    return chunked(items, size)


def rows_insert(model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Insert plain rows in as few round trips as the database allows; returns how many.

    For the hundreds of thousands of labels of a benchmark-scale file, where
    bulk_create spends most of its time building model instances and SQL
    text: PostgreSQL gets a COPY, the others one prepared statement run over
    all rows. The values must already be database values: ids for foreign
    keys, `connection.ops.adapt_datetimefield_value` for datetimes.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(_column(model, name)) for name in fields)
    inserted = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    inserted += 1
            return inserted
        sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
        for batch in in_batches(rows, 10_000):
            cursor.executemany(sql, batch)
            inserted += len(batch)
    return inserted


def batch_start(
    *, kind: ImportBatch.Kind, path: Path, options: dict[str, Any] | None = None, user: User | None = None
) -> ImportBatch:
    return ImportBatch.objects.create(
        kind=kind,
        file_name=path.name,
        sha256=file_sha256(path),
        options=options or {},
        imported_by=user,
    )


def _column(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column, f"{model.__name__}.{name} is not a column"
    return field.column


def batch_finish(batch: ImportBatch, result: R) -> R:
    if not (result.created or result.replaced):
        # Importing a file again adds nothing, not even a record of the attempt.
        batch.delete()
        return result
    batch.lines = result.lines
    batch.created = result.created
    batch.unchanged = result.unchanged
    batch.replaced = result.replaced
    batch.warnings = result.warnings
    batch.save(update_fields=["lines", "created", "unchanged", "replaced", "warnings"])
    result.batch = batch
    return result


def statistics_refresh(result: ImportResult) -> bool:
    """Refresh PostgreSQL's planner statistics after a large import; True if it did."""
    if connection.vendor != "postgresql" or result.created + result.replaced < ANALYZE_AFTER_ROWS:
        return False
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return True
