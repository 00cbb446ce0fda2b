"""What every importer shares: line reading, errors that name the place, batches, where writes go.

An importer streams its file in chunks (memory does not grow with the file),
is all or nothing (a bad line changes nothing), and records an ImportBatch as
the provenance of what it created. `import_file` runs it: on SQLite the file is
read, checked and staged with no write lock, and moved in by one short switch
(see staging.py); on PostgreSQL it runs inside one transaction.
"""

import hashlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

from django.contrib.auth.models import User
from django.db import OperationalError, connection, models, transaction
from django.db.models import Max

from assessor.importing.progress import progress_current
from assessor.importing.staging import (
    DirectWrites,
    StagedWrites,
    SwitchConflict,
    Writes,
    staging_used,
)
from assessor.models import ImportBatch
from assessor.project.busy import database_busy
from assessor.registry import ScoreRefresh, registry
from assessor.scoring.kept import scores_refresh, scores_refresh_touched

T = TypeVar("T")
R = TypeVar("R", bound="ImportResult")
CHUNK_LINES = 2000
# PostgreSQL plans queries on table statistics that autovacuum refreshes only
# some time later (or never, where it is off); right after a large import,
# stale statistics make the scoring joins scan whole tables.
ANALYZE_AFTER_ROWS = 10_000
# Within an import, a table that got this many rows is analyzed before its kept scores are refreshed: any
# row, as the statistics may be older than the rows already there (a few small imports, then a refresh of
# thousands of labels planned as if they were none). A bounded sample: milliseconds on a small table.
ANALYZE_WRITTEN_ROWS = 1
# SQLite estimates each index from at most this many rows: a bounded ANALYZE,
# quick on a database of any size, and close enough for the planner.
SQLITE_ANALYSIS_LIMIT = 1000
# Below every database's limit on query parameters (SQLite's conservative 999 included).
LOOKUP_BATCH = 900
EMPTY_FILE = "the file is empty: there is nothing to import"
# How often an import prepares again when its switch meets another import's rows.
SWITCH_ATTEMPTS = 3

# Limits that real data stays far below (docs/formats-collection.md, "Limits"): a
# line or field past them is refused by name, never stored, so that one bad line
# can neither exhaust the parser nor weigh on every page that shows it.
MAX_LINE_CHARS = 1 << 20
MAX_JSON_DEPTH = 16
MAX_TOPIC_ID_CHARS = 64  # Topic.id
MAX_ID_CHARS = 200  # docids, run ids (Segment.docid, Run.run_id)
MAX_QUERY_CHARS = 2_000
MAX_SEGMENT_CHARS = 65_536
MAX_TITLE_CHARS = 2_000
MAX_URL_CHARS = 4_000
# The track allows 400 words; runs over it are imported with a warning, so the
# limit leaves ten times the room a 400-word answer takes.
MAX_ANSWER_CHARS = 32_000
MAX_NUGGET_CHARS = 1_000
# The text of JSON strings, and the brackets left when they are taken out.
JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
NOT_BRACKET = re.compile(r"[^\[\]{}]+")
# A JSON escape of a UTF-16 surrogate (\ud800 to \udfff, any case), and the character it becomes.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
SURROGATE = re.compile("[\ud800-\udfff]")


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
    """Yield (line number, text) for each non-blank line; UTF-8 with or without BOM, LF or CRLF.

    A file with no such line is refused: importing it would report success
    for what is most often a wrong path or a truncated download.
    """
    empty = True
    progress = progress_current()
    try:
        with path.open("r", encoding="utf-8-sig", newline="") as handle:
            if progress is not None:
                progress.reading(cast(BinaryIO, handle.buffer).tell)
            number = 0
            # Read with a bound, so that a line of many megabytes is refused before it is all in memory.
            while raw := handle.readline(MAX_LINE_CHARS + 2):
                number += 1
                if progress is not None:
                    progress.line_read(number)
                line = raw.rstrip("\r\n")
                if len(line) > MAX_LINE_CHARS:
                    raise ImportFailure(
                        f"the line is longer than {MAX_LINE_CHARS:,} characters", path=path, line=number
                    )
                if "\x00" in line:
                    # No database stores it in text (PostgreSQL refuses it), and no text file holds one.
                    column = line.index("\x00") + 1
                    raise ImportFailure(f"a NUL byte at character {column}: not a text file", path=path, line=number)
                if line.strip():
                    empty = False
                    yield number, line
    except UnicodeDecodeError as exc:
        raise ImportFailure(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None
    except FileNotFoundError:
        raise ImportFailure("no such file", path=path) from None
    if empty:
        raise ImportFailure(EMPTY_FILE, path=path)


def json_depth(text: str) -> int:
    """How deeply the lists and objects of a JSON text nest, counted without parsing it."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return 0  # cannot be too deep: the exact depth is not needed
    depth = deepest = 0
    for char in NOT_BRACKET.sub("", JSON_STRING.sub("", text)):
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in read_lines(path):
        yield number, json_record(line, path=path, line=number)


def json_record(text: str, *, path: Path, line: int) -> dict[str, Any]:
    """A line of a JSONL file as its object, refused by line (and field) if it is not one, or if it holds
    what no text may hold: the one reading of JSON lines every importer shares."""
    # Checked before parsing: the parser recurses once per level.
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ImportFailure(f"lists and objects nest deeper than {MAX_JSON_DEPTH} levels", path=path, line=line)
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailure(f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=line) from None
    except ValueError:
        # Python reads no integer of more digits than this (sys.get_int_max_str_digits): no file means one.
        raise ImportFailure(
            f"not valid JSON here: a whole number of more than {sys.get_int_max_str_digits():,} digits",
            path=path,
            line=line,
        ) from None
    if not isinstance(record, dict):
        raise ImportFailure("a line must hold a JSON object", path=path, line=line)
    characters_check(record, text, path=path, line=line)
    return record


def characters_check(record: Any, text: str, *, path: Path, line: int) -> None:
    """Refuse a parsed JSON line (`text` as the file has it) whose strings hold a NUL or a lone surrogate.

    JSON can write both as escapes, which the parser turns into characters no text holds: PostgreSQL
    refuses a NUL, and a lone surrogate (half of a UTF-16 pair, `\\ud800`) is stored by SQLite and then
    fails every page, download and export that encodes it. Only a line whose text has the escape is scanned.
    """
    if "\\u0000" in text and (where := nul_field(record)) is not None:
        raise ImportFailure(
            "holds a NUL character (\\u0000), which no text may hold", path=path, line=line, field=where
        )
    if SURROGATE_ESCAPE.search(text) and (where := surrogate_field(record)) is not None:
        raise ImportFailure(
            "holds a lone surrogate (an escape from \\ud800 to \\udfff without its pair), which is no "
            "character: no text may hold it",
            path=path,
            line=line,
            field=where,
        )


def nul_field(value: Any) -> str | None:
    """The field of a parsed JSON value whose string (or key) holds a NUL character, or None."""
    return _field_holding(value, lambda text: "\x00" in text)


def surrogate_field(value: Any) -> str | None:
    """The field of a parsed JSON value whose string (or key) holds a lone surrogate, or None."""
    return _field_holding(value, lambda text: SURROGATE.search(text) is not None)


def _field_holding(value: Any, holds: Callable[[str], bool], where: str = "") -> str | None:
    """The field of a parsed JSON value whose string (or key) `holds` what is looked for, or None."""
    if isinstance(value, str):
        return where or "(the line)" if holds(value) else None
    if isinstance(value, dict):
        for key, inner in value.items():
            # A key is named with its lone surrogates escaped, so that the error naming it can be shown.
            shown = key.encode("utf-8", "backslashreplace").decode("utf-8")
            name = f"{where}.{shown}" if where else shown
            if holds(key):
                return name
            if (found := _field_holding(inner, holds, name)) is not None:
                return found
    if isinstance(value, list):
        for index, inner in enumerate(value):
            if (found := _field_holding(inner, holds, f"{where}[{index}]")) is not None:
                return found
    return None


def require(record: dict[str, Any], key: str, kind: type | tuple[type, ...], *, path: Path, line: int) -> Any:
    """The value of a required field, of the expected JSON type."""
    if key not in record:
        raise ImportFailure("missing", path=path, line=line, field=key)
    value = record[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ImportFailure(f"expected {expected}, got {type(value).__name__}", path=path, line=line, field=key)
    return value


# The one rule for numbers in files: a whole number is a JSON integer, a number a JSON integer or float, each
# within the range its column holds. Never a boolean or a string ("3"), never NaN or Infinity (which Python's
# JSON parser accepts, and no column or score can use), and never a float where a whole number is wanted (a
# grade of 1.0 is not a tool's grade). Past a column's range PostgreSQL raises DataError and SQLite's driver
# OverflowError, so the range is checked here, by field.
MAX_STORED_INTEGER = 2_147_483_647  # IntegerField, PositiveIntegerField: 32 bits on every database


def number_shown(value: Any) -> str:
    """A value read where a number is wanted, as the error shows it (in JSON's words, and short)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, int):
        digits = len(str(abs(value)))
        return str(value) if digits <= 20 else f"a whole number of {digits} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return f"the string {value[:40]!r}" + ("..." if len(value) > 40 else "")
    return {dict: "an object", list: "a list", type(None): "null"}.get(type(value), type(value).__name__)


def integer_checked(value: Any, low: int, high: int, *, path: Path, line: int, field: str) -> int:
    """`value`, if it is a JSON whole number from `low` to `high`."""
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    raise ImportFailure(
        f"expected a whole number from {low:,} to {high:,}, got {number_shown(value)}",
        path=path,
        line=line,
        field=field,
    )


def float_checked(
    value: Any, low: float | None = None, high: float | None = None, *, path: Path, line: int, field: str
) -> float:
    """`value` as a float, if it is a finite JSON number (from `low` to `high`, where given)."""
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer past any float
            number = None
    if (
        number is not None
        and math.isfinite(number)
        and (low is None or number >= low)
        and (high is None or number <= high)
    ):
        return number
    bounds = f" from {low:g} to {high:g}" if low is not None and high is not None else ""
    raise ImportFailure(
        f"expected a finite number{bounds}, got {number_shown(value)}", path=path, line=line, field=field
    )


def optional_float(record: dict[str, Any], key: str, *, path: Path, line: int) -> float | None:
    """An optional number field (None when absent or null), under the rule for numbers."""
    value = record.get(key)
    return None if value is None else float_checked(value, path=path, line=line, field=key)


def optional_str(record: dict[str, Any], key: str, limit: int, *, path: Path, line: int, field: str = "") -> str:
    """The value of an optional text field ("" when absent or null), of at most `limit` characters; `field` names
    it in errors where it lies deeper than the record's top level."""
    value = record.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ImportFailure(f"expected str, got {type(value).__name__}", path=path, line=line, field=field or key)
    return limited(value, limit, path=path, line=line, field=field or key)


# The one rule for ids from files (topics, runs, documents and segments): the characters TREC files use,
# letters and digits of any script and . _ - # + : @ ( ) ~ =. Never whitespace, a control character or
# '/': ids go into URLs, into tab- and space-separated files and into file names.
ID_CHARACTERS = re.compile(r"[\w.#+:@()~=-]+")
ID_RULE = "letters, digits and . _ - # + : @ ( ) ~ = only"
CHARACTER_NAMES = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", " ": "a space", "\x00": "a NUL byte"}


def id_problem(value: str, limit: int) -> str:
    """What keeps `value` from being an id of at most `limit` characters ("" if nothing): the rule of every importer."""
    if not value:
        return "empty"
    if len(value) > limit:
        return f"{len(value):,} characters, over the limit of {limit:,}"
    if not ID_CHARACTERS.fullmatch(value):
        char = next(char for char in value if not ID_CHARACTERS.fullmatch(char))
        name = CHARACTER_NAMES.get(char) or (repr(char) if char.isprintable() else f"the character U+{ord(char):04X}")
        return f"{value!r} holds {name}: an id is {ID_RULE}"
    return ""


def id_checked(value: str, limit: int, *, path: Path, line: int, field: str) -> str:
    """`value`, if it is a non-empty id of at most `limit` characters, made of the id characters."""
    if problem := id_problem(value, limit):
        raise ImportFailure(problem, path=path, line=line, field=field)
    return value


def json_id(value: Any, limit: int, *, path: Path, line: int, field: str, whole_numbers: bool = False) -> str:
    """The id a JSON value holds: a string under the id rule, as written (never stripped: "1\\n" is not the
    topic "1"), or a whole number where tools write ids so (`whole_numbers`: topic ids)."""
    if whole_numbers and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ImportFailure(f"expected an id (a string), got {number_shown(value)}", path=path, line=line, field=field)
    return id_checked(value, limit, path=path, line=line, field=field)


def required_json_id(
    record: dict[str, Any], key: str, limit: int, *, path: Path, line: int, whole_numbers: bool = False
) -> str:
    """The id of a required field (`json_id`); absent or null is refused as missing."""
    if record.get(key) is None:
        raise ImportFailure("missing", path=path, line=line, field=key)
    return json_id(record[key], limit, path=path, line=line, field=key, whole_numbers=whole_numbers)


def finite_check(value: Any, *, path: Path, line: int, field: str) -> None:
    """Refuse NaN and Infinity anywhere in a JSON value kept as JSON (no JSON column, nor export, holds them)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ImportFailure(f"expected a finite number, got {number_shown(value)}", path=path, line=line, field=field)
    if isinstance(value, dict):
        for key, inner in value.items():
            finite_check(inner, path=path, line=line, field=f"{field}.{key}")
    if isinstance(value, list):
        for index, inner in enumerate(value):
            finite_check(inner, path=path, line=line, field=f"{field}[{index}]")


def option_id_checked(value: str, limit: int, *, path: Path, option: str) -> str:
    """An id given as an option (`--run-id`) rather than read from the file, under the files' rule."""
    if problem := id_problem(value, limit):
        raise ImportFailure(f"{option}: {problem}", path=path)
    return value


def limited(value: str, limit: int, *, path: Path, line: int, field: str) -> str:
    """`value`, if it is at most `limit` characters long."""
    if len(value) > limit:
        raise ImportFailure(
            f"{len(value):,} characters, over the limit of {limit:,}", path=path, line=line, field=field
        )
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


def import_file(
    prepare: Callable[[Writes], R],
    *,
    kind: str,
    path: Path,
    options: dict[str, Any] | None = None,
    user: User | None = None,
) -> R:
    """Run an import: `prepare(writes)` reads and checks the file and makes every write through `writes`.

    `writes.batch` is the import's ImportBatch, for the provenance of the rows.
    On SQLite the writes are staged and moved in by one short switch, during
    which the write lock is held (staging.py); if the switch meets another
    import's rows, the file is prepared again on what is now stored. Elsewhere
    the import runs inside one transaction, writing as it goes. Either way a
    failure (ImportFailure) leaves the database as it was.
    """
    path = Path(path)
    fields = {
        "kind": kind,
        "file_name": path.name,
        "sha256": file_sha256(path),
        "options": options or {},
        "imported_by": user,
    }
    if not staging_used():
        return _import_direct(prepare, fields)
    return _import_staged(prepare, fields, path=path)


def _import_direct(prepare: Callable[[Writes], R], fields: dict[str, Any]) -> R:
    """The import inside one transaction, writing as it goes (PostgreSQL, or SQLite with staging off)."""
    # Whoever watches the import (an upload's worker) hears how far it got, here and from read_lines and the writes.
    progress = progress_current()
    with transaction.atomic():
        imports_one_at_a_time()
        batch = ImportBatch.objects.create(**fields)
        with DirectWrites(batch) as writes:
            result = prepare(writes)
            if progress is not None:
                progress.prepared()
            _scores_refresh_later(writes, fields["kind"])
            return batch_finish(batch, result)


def _import_staged(prepare: Callable[[Writes], R], fields: dict[str, Any], *, path: Path) -> R:
    """The import staged, then switched in; prepared again when its switch meets another import's rows (SQLite)."""
    progress = progress_current()
    conflict: SwitchConflict | None = None
    for _ in range(SWITCH_ATTEMPTS):
        since = ImportBatch.objects.aggregate(last=Max("pk"))["last"] or 0
        batch = ImportBatch(**fields)
        if progress is not None:
            progress.restart()
        with StagedWrites(batch) as writes:
            result = prepare(writes)
            if progress is not None:
                progress.prepared()
            if not (result.created or result.replaced):
                # Importing a file again adds nothing, not even a record of the attempt.
                return result
            _batch_fill(batch, result)
            writes.create_one(batch)
            _scores_refresh_later(writes, fields["kind"])
            try:
                _switch(writes, since)
            except SwitchConflict as exc:
                conflict = exc
                continue
        result.batch = batch
        return result
    raise ImportFailure(
        f"the stored data kept changing while the file was prepared ({conflict}); nothing was imported: import it again",
        path=path,
    )


# Any number: the key of the one advisory lock the imports take on PostgreSQL.
IMPORT_LOCK_KEY = 73012024


def imports_one_at_a_time() -> None:
    """On PostgreSQL, wait until no other import is writing, for the rest of this transaction.

    Two imports that each found a row missing would both insert it, and the second
    would fail on the unique key instead of finding the row (five uploads of one file
    at once: one imports it, four are "unchanged"). After the wait, this import's
    reads see what the other wrote. Imports run one at a time; readers never wait.
    On SQLite the switch of the staged rows does the same (staging.py).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [IMPORT_LOCK_KEY])


def _scores_refresh_later(writes: Writes, kind: str) -> None:
    """Refresh the kept scores the import changed after its last write, in its transaction (the switch, when staged).

    The importer of the kind says whether scores read its rows, and whether it says what it
    wrote (Writes.scores_touch, scores_touch_everywhere, scores_touch_answers) or every kept
    score is refreshed.
    """
    importer = registry.importers.get(kind)
    refresh = importer.scores if importer else ScoreRefresh.NONE
    if refresh != ScoreRefresh.NONE and not writes.staged:
        writes.later(lambda: written_tables_analyze(writes))
    if refresh == ScoreRefresh.TOUCHED:
        writes.later(
            lambda: scores_refresh_touched(writes.scores_touched, writes.scores_everywhere, writes.scores_answers)
        )
    elif refresh == ScoreRefresh.ALL:
        writes.later(scores_refresh)


def written_tables_analyze(writes: Writes) -> list[str]:
    """On PostgreSQL, analyze the tables the import filled, inside its transaction; the tables analyzed.

    The refresh of kept scores that follows reads what the import just wrote,
    and PostgreSQL plans those reads on the statistics from before it: on a
    fresh database, which it takes for empty, one refresh after the NIST support
    file, or the demo's support files, ran for minutes on nested loops. ANALYZE in a transaction counts that
    transaction's own rows, reads a bounded sample, and blocks no reader or writer.
    """
    if connection.vendor != "postgresql":
        return []
    tables = sorted(table for table, rows in writes.rows_by_table.items() if rows >= ANALYZE_WRITTEN_ROWS)
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    return tables


def _switch(writes: StagedWrites, since: int) -> None:
    """The switch, tried again while other writes hold the database past the busy timeout.

    What was staged stays staged meanwhile: only the switch waits, not the preparation.
    """
    for attempt in range(1, SWITCH_ATTEMPTS + 1):
        try:
            writes.switch(other_imports=partial(_batches_since, since))
            return
        except OperationalError as exc:
            if not database_busy(exc) or attempt == SWITCH_ATTEMPTS:
                raise


def _batches_since(last: int) -> bool:
    """Whether an import was committed after the batch `last` (every import that writes records one)."""
    return ImportBatch.objects.filter(pk__gt=last).exists()


def _batch_fill(batch: ImportBatch, result: ImportResult) -> None:
    batch.lines = result.lines
    batch.created = result.created
    batch.unchanged = result.unchanged
    batch.replaced = result.replaced
    batch.warnings = result.warnings


def _column(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column, f"{model.__name__}.{name} is not a column"
    return field.column


def batch_finish(batch: ImportBatch, result: R) -> R:
    if not (result.created or result.replaced):
        # Importing a file again adds nothing, not even a record of the attempt.
        batch.delete()
        return result
    _batch_fill(batch, result)
    batch.save(update_fields=["lines", "created", "unchanged", "replaced", "warnings"])
    result.batch = batch
    return result


def statistics_refresh(result: ImportResult | None = None, *, rows: int | None = None) -> bool:
    """Refresh the planner's statistics after rows were written; True if it did.

    Without them the planner takes the tables for empty: with 20 assessors on a
    TREC-scale SQLite file, page p50 was 13.5 s before ANALYZE and 0.57 s after.
    SQLite's is bounded (PRAGMA analysis_limit), so it follows every import that
    wrote rows; PostgreSQL's reads whole tables, so it follows a large import
    (autovacuum catches up with small ones), or any call without a result nor
    `rows` (the end of a path that fills a database, such as the demo). `rows`:
    what another path wrote (a job, its items done), judged as an import's rows.
    """
    if result is not None:
        rows = result.created + result.replaced
    if rows == 0:
        return False
    if connection.vendor == "sqlite":
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"PRAGMA analysis_limit = {SQLITE_ANALYSIS_LIMIT}")
                cursor.execute("ANALYZE")
        except OperationalError as exc:
            if not database_busy(exc):
                raise
            # Other writes held the database past the busy timeout. The import is
            # committed all the same; the next one (or load_demo) refreshes them.
            return False
        return True
    if connection.vendor != "postgresql":
        return False
    if rows is not None and rows < ANALYZE_AFTER_ROWS:
        return False
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return True
