"""Where an import's writes go until it is known to be whole: the staging area, then one short switch.

SQLite lets one writer at a time, and a transaction takes its write lock at
BEGIN (transaction_mode IMMEDIATE). An import that read, checked and wrote a
file inside one transaction held that lock for the whole file, and every label
save of the time waited for it. So on SQLite an import runs in two phases:

1. Preparation, with no write lock. The importer reads its file, checks every
   line and looks up stored rows (plain reads: in WAL mode readers neither wait
   for a writer nor hold one up), and hands every row it would write to a
   `StagedWrites`: rows go into a private SQLite file (the staging area, on
   disk, so that memory does not grow with the file), and the order of all
   writes (rows, updates, deletions) into a log. Rows it creates get *provisional* primary keys (below
   -PROVISIONAL), which other staged rows may use in their foreign keys.
2. The switch, one short transaction: it checks that no other import was
   committed meanwhile (else the import prepares again, see
   `base.import_file`), and replays the writes in the order they were made,
   rows copied with `INSERT ... SELECT` from the attached staging file,
   provisional keys turned into real ones on the way. The write lock is held
   for this step only.

A bad line fails the preparation: nothing was written, the staging file is
dropped. A switch that meets rows written since the preparation (a unique or
foreign key violated, another import committed) rolls back whole, and the
import prepares again on what is now stored, where any real conflict is named by
file, line and field.

On PostgreSQL (MVCC: writers do not block readers, nor writers of other rows)
`DirectWrites` writes at once, inside the import's one transaction, as before.
Importers use the same calls either way.
"""

import os
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction

from assessor.importing.progress import progress_current
from assessor.models import ImportBatch
from assessor.project.security import owner_only_folder

M = TypeVar("M", bound=models.Model)

PROVISIONAL = 1 << 32
# The rows of a staging table moved or looked up at once.
COPY_BATCH = 10_000
# The page cache of the switch, in KiB (negative: SQLite's unit for a size): at most this much memory, for its duration.
SWITCH_CACHE_KIB = -256 * 1024
LOOKUP_BATCH = 900


def provisional(key: Any) -> bool:
    return isinstance(key, int) and key < -PROVISIONAL


class SwitchConflict(Exception):
    """The switch met rows written since the preparation; it rolled back, and the import prepares again."""


def _column(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column, f"{model.__name__}.{name} is not a column"
    return field.column


def _auto_key(model: type[models.Model]) -> bool:
    return isinstance(model._meta.pk, models.AutoField | models.BigAutoField | models.SmallAutoField)


class Writes:
    """The writes of one import: the calls importers make instead of bulk_create, bulk_update, delete.

    Also holds what an import remembers across its chunks (`first_claims`), in a
    scratch SQLite file, so that a file of any size is checked in bounded memory.
    """

    staged = False

    def __init__(self, batch: ImportBatch) -> None:
        self.batch = batch
        self.progress = progress_current()
        # What the import wrote that scores read, for the refresh after its last write:
        # (score family, source columns) -> topics of its labels; topics where it changed what other
        # sources' labels stand on (a replaced nugget list, replaced sentences, new citations).
        self.scores_touched: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        self.scores_everywhere: set[str] = set()
        # Stored answers whose text or parts it rewrote (a run's import): every source's scores of those alone.
        self.scores_answers: set[int] = set()
        # Rows written per table, for the statistics the score refresh plans its reads on.
        self.rows_by_table: Counter[str] = Counter()
        handle, name = tempfile.mkstemp(prefix="import-", suffix=".sqlite3", dir=staging_directory())
        os.close(handle)
        self.path = Path(name)
        self.db = sqlite3.connect(name, isolation_level=None, check_same_thread=False)
        # A private scratch file: nothing to recover after a crash, so no journal and no syncing.
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.execute("CREATE TABLE claim (namespace TEXT, key TEXT, line INTEGER, value TEXT, PRIMARY KEY (namespace, key))")
        self.db.execute("BEGIN")

    def close(self) -> None:
        self.db.close()
        self.path.unlink(missing_ok=True)

    def _written(self, count: int, model: type[models.Model]) -> None:
        self.rows_by_table[model._meta.db_table] += count
        if self.progress is not None:
            self.progress.rows_written(count)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def first_claims(self, namespace: str, items: Iterable[tuple[str, int, str]]) -> dict[str, tuple[int, str]]:
        """For the (key, line, value) of a chunk, the (line, value) an earlier chunk claimed each key with.

        Keys new to the import are claimed with their first line and value. An
        importer uses it to catch a key repeated in a later chunk of its file.
        """
        items = list(items)
        earlier: dict[str, tuple[int, str]] = {}
        keys = sorted({key for key, _, _ in items})
        for start in range(0, len(keys), LOOKUP_BATCH):
            part = keys[start : start + LOOKUP_BATCH]
            rows = self.db.execute(
                f"SELECT key, line, value FROM claim WHERE namespace = ? AND key IN ({', '.join('?' * len(part))})",
                [namespace, *part],
            )
            earlier.update((key, (line, value)) for key, line, value in rows)
        self.db.executemany(
            "INSERT OR IGNORE INTO claim VALUES (?, ?, ?, ?)",
            ((namespace, key, line, value) for key, line, value in items if key not in earlier),
        )
        return earlier

    # --- what importers call -------------------------------------------------

    def scores_touch(self, *, family: str, columns: tuple[str, ...], topics: Iterable[str]) -> None:
        """The import wrote labels of this score source in these topics."""
        self.scores_touched.setdefault((family, columns), set()).update(topics)

    def scores_touch_everywhere(self, topics: Iterable[str]) -> None:
        """The import changed what other sources' labels stand on in these topics: their scores there may change.

        A new answer is not such a change: a source scores only the answers it has labels on.
        """
        self.scores_everywhere.update(topics)

    def scores_touch_answers(self, answers: Iterable[int]) -> None:
        """The import rewrote these stored answers (their text, sentences or citations): the scores any source
        keeps of them may change, and no other answer's (a new answer has no labels, so no scores yet)."""
        self.scores_answers.update(answers)

    def create(self, objects: Iterable[M], *, ignore_conflicts: bool = False) -> list[M]:
        """bulk_create: the objects get their primary keys (provisional ones when staged)."""
        raise NotImplementedError

    def create_one(self, obj: M) -> M:
        self.create([obj])
        return obj

    def rows(self, model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
        """rows_insert: plain rows, foreign keys as ids (provisional ones too)."""
        raise NotImplementedError

    def update(self, objects: Iterable[models.Model], fields: Sequence[str]) -> None:
        """bulk_update of stored rows."""
        raise NotImplementedError

    def delete(self, model: type[models.Model], keys: Iterable[Any]) -> None:
        """Delete stored rows by primary key, with what cascades from them."""
        raise NotImplementedError

    def later(self, work: Callable[[], Any]) -> None:
        """A write that must see the database as it is when it is made (a conditional update)."""
        raise NotImplementedError


class DirectWrites(Writes):
    """Writes made at once, inside the import's one transaction (PostgreSQL)."""

    def create(self, objects: Iterable[M], *, ignore_conflicts: bool = False) -> list[M]:
        objects = list(objects)
        if not objects:
            return objects
        model = type(objects[0])
        created = model._default_manager.bulk_create(objects, ignore_conflicts=ignore_conflicts)
        self._written(len(created), model)
        return created

    def rows(self, model, fields, rows):
        from assessor.importing.base import rows_insert

        inserted = rows_insert(model, fields, rows)
        self._written(inserted, model)
        return inserted

    def update(self, objects, fields):
        objects = list(objects)
        if objects:
            model = type(objects[0])
            model._default_manager.bulk_update(objects, list(fields))
            self._written(len(objects), model)

    def delete(self, model, keys):
        keys = list(keys)
        for start in range(0, len(keys), LOOKUP_BATCH):
            model._default_manager.filter(pk__in=keys[start : start + LOOKUP_BATCH]).delete()
        self._written(len(keys), model)

    def later(self, work):
        work()


class StagedWrites(Writes):
    """Writes kept in the staging file until `switch` moves them in, in one short transaction (SQLite)."""

    staged = True

    def __init__(self, batch: ImportBatch) -> None:
        super().__init__(batch)
        self.made: dict[type[models.Model], int] = {}  # provisional keys handed out, by model
        # Staging tables: (model, columns, ignore_conflicts) -> rows to insert, (model, columns) -> updates.
        self.inserts: dict[tuple[type[models.Model], tuple[str, ...], bool], str] = {}
        self.updates: dict[tuple[type[models.Model], tuple[str, ...]], str] = {}
        # Every write, in the order the importer made it (rows as a range of a staging table), replayed so at the switch.
        self.log: list[tuple] = []
        batch.pk = self.key_new(type(batch))

    def key_new(self, model: type[models.Model]) -> int:
        self.made[model] = self.made.get(model, 0) + 1
        return -PROVISIONAL - self.made[model]

    def _table(self, registry: dict, key: tuple, prefix: str, columns: int, *, unique_first: bool = False) -> str:
        if key not in registry:
            name = f"{prefix}{len(registry)}"
            self.db.execute(f"CREATE TABLE {name} ({', '.join(f'c{i}' for i in range(columns))})")
            if unique_first:
                self.db.execute(f"CREATE UNIQUE INDEX {name}_key ON {name} (c0)")
            registry[key] = name
        return registry[key]

    def _insert(self, model, columns: Sequence[str], rows: Iterable[Sequence[Any]], ignore_conflicts: bool) -> int:
        table = self._table(
            self.inserts, (model, tuple(columns), ignore_conflicts), "insert_", len(columns), unique_first=ignore_conflicts
        )
        verb = "INSERT OR IGNORE" if ignore_conflicts else "INSERT"
        first = self._rowid_last(table) + 1
        cursor = self.db.executemany(f"{verb} INTO {table} VALUES ({', '.join('?' * len(columns))})", rows)
        last = self._rowid_last(table)
        if last >= first:
            self.log.append(("insert", model, tuple(columns), table, first, last, ignore_conflicts))
        self._written(cursor.rowcount, model)
        return cursor.rowcount

    def _rowid_last(self, table: str) -> int:
        return self.db.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0]

    def create(self, objects: Iterable[M], *, ignore_conflicts: bool = False) -> list[M]:
        objects = list(objects)
        if not objects:
            return objects
        model = type(objects[0])
        fields = list(model._meta.concrete_fields)
        if ignore_conflicts:
            # The key first: the staging table keeps one row per key, as the database will.
            fields = [model._meta.pk] + [field for field in fields if not field.primary_key]
        auto = _auto_key(model)
        for obj in objects:
            if auto and obj.pk is None:
                obj.pk = self.key_new(model)
            obj._state.adding = False
        rows = (tuple(field.get_db_prep_save(field.pre_save(obj, True), connection) for field in fields) for obj in objects)
        self._insert(model, [field.column for field in fields], rows, ignore_conflicts)
        return objects

    def rows(self, model, fields, rows):
        return self._insert(model, [_column(model, name) for name in fields], rows, False)

    def update(self, objects, fields):
        objects = list(objects)
        if not objects:
            return
        model = type(objects[0])
        chosen = [model._meta.get_field(name) for name in fields]
        columns = (model._meta.pk.column, *(field.column for field in chosen))
        table = self._table(self.updates, (model, columns), "update_", len(columns))
        first = self._rowid_last(table) + 1
        self.db.executemany(
            f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})",
            ((obj.pk, *(field.get_db_prep_save(getattr(obj, field.attname), connection) for field in chosen)) for obj in objects),
        )
        self.log.append(("update", model, columns, table, first, first + len(objects) - 1))
        self._written(len(objects), model)

    def delete(self, model, keys):
        keys = list(keys)
        if keys:
            self.log.append(("delete", model, keys))
            self._written(len(keys), model)

    def later(self, work):
        self.log.append(("later", work))

    # --- the switch -------------------------------------------------------------

    def switch(self, *, other_imports: Callable[[], bool]) -> None:
        """Move everything staged into the database in one transaction; the batch gets its real key.

        `other_imports` tells, inside the transaction, whether another import was
        committed since the preparation began: its rows may contradict what was
        checked, so the switch gives way (SwitchConflict) and the import prepares again.
        """
        self.db.commit()
        # ATTACH is refused inside a transaction, and an in-memory database (the tests') cannot be attached from:
        # there the rows go through Python instead, which is slower but the same writes.
        attach = not connection.in_atomic_block and not connection.is_in_memory_db()  # type: ignore[attr-defined]
        connection.ensure_connection()
        if attach:
            with connection.cursor() as cursor:
                cursor.execute("ATTACH DATABASE %s AS staging", [str(self.path)])
                cursor.execute("PRAGMA main.cache_size")
                (cache_size,) = cursor.fetchone()
                # Index pages in memory while the lock is held: the switch of a 24,000-answer run took a third of the time.
                cursor.execute(f"PRAGMA main.cache_size = {SWITCH_CACHE_KIB}")
        try:
            with transaction.atomic():
                if other_imports():
                    raise SwitchConflict("another import was committed during the preparation")
                with connection.cursor() as cursor:
                    bases = {model: self._key_reserve(cursor, model, self.made[model]) for model in self.made}
                    for entry in self.log:
                        self._replay(cursor, entry, bases, attach=attach)
        except IntegrityError as exc:
            raise SwitchConflict(str(exc)) from exc
        finally:
            if attach:
                with connection.cursor() as cursor:
                    cursor.execute("DETACH DATABASE staging")
                    cursor.execute(f"PRAGMA main.cache_size = {int(cache_size)}")
        self.batch.pk = bases[type(self.batch)] + (-self.batch.pk - PROVISIONAL)

    @staticmethod
    def _key_reserve(cursor, model: type[models.Model], count: int) -> int:
        """Reserve `count` keys for the model's staged rows; returns the key before them.

        Past every key used, deleted ones too (Django's SQLite keys are
        AUTOINCREMENT); the sequence moves past the reserved ones, so that rows
        inserted without a key (plain rows) take keys after them.
        """
        quote = connection.ops.quote_name
        table = model._meta.db_table
        cursor.execute(f"SELECT coalesce(max({quote(model._meta.pk.column)}), 0) FROM {quote(table)}")
        (base,) = cursor.fetchone()
        cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        row = cursor.fetchone()
        base = max(base, row[0] if row else 0)
        if row:
            cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [base + count, table])
        else:
            cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, base + count])
        return base

    def _translations(self, model, columns: Sequence[str], bases: dict) -> list[int | None]:
        """For each column: the key base of the model whose provisional keys it may hold, else None."""
        by_column = {field.column: field for field in model._meta.concrete_fields}
        result: list[int | None] = []
        for column in columns:
            field = by_column[column]
            if field.primary_key:
                target = model
            elif field.is_relation:
                target = field.related_model
            else:
                target = None
            result.append(bases.get(target) if target is not None else None)
        return result

    def _translate(self, row: Sequence[Any], translations: list[int | None]) -> tuple:
        return tuple(
            base + (-value - PROVISIONAL) if base is not None and provisional(value) else value
            for value, base in zip(row, translations, strict=True)
        )

    def _copy_in_database(self, cursor, model, columns, table, span, ignore_conflicts, bases) -> None:
        quote = connection.ops.quote_name
        selected = []
        for index, base in enumerate(self._translations(model, columns, bases)):
            column = f"c{index}"
            selected.append(
                column if base is None else f"CASE WHEN {column} < -{PROVISIONAL} THEN {base} - {column} - {PROVISIONAL} ELSE {column} END"
            )
        verb = "INSERT OR IGNORE" if ignore_conflicts else "INSERT"
        cursor.execute(
            f"{verb} INTO main.{quote(model._meta.db_table)} ({', '.join(quote(c) for c in columns)}) "
            f"SELECT {', '.join(selected)} FROM staging.{table} WHERE rowid BETWEEN %s AND %s ORDER BY rowid",
            span,
        )

    def _copy_through_python(self, cursor, model, columns, table, span, ignore_conflicts, bases) -> None:
        quote = connection.ops.quote_name
        translations = self._translations(model, columns, bases)
        verb = "INSERT OR IGNORE" if ignore_conflicts else "INSERT"
        sql = f"{verb} INTO {quote(model._meta.db_table)} ({', '.join(quote(c) for c in columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
        rows = self.db.execute(f"SELECT * FROM {table} WHERE rowid BETWEEN ? AND ? ORDER BY rowid", span)
        while batch := rows.fetchmany(COPY_BATCH):
            cursor.executemany(sql, [self._translate(row, translations) for row in batch])

    def _replay(self, cursor, entry: tuple, bases: dict, *, attach: bool) -> None:
        kind = entry[0]
        if kind == "insert":
            _, model, columns, table, first, last, ignore_conflicts = entry
            copy = self._copy_in_database if attach else self._copy_through_python
            copy(cursor, model, columns, table, (first, last), ignore_conflicts, bases)
        elif kind == "later":
            entry[1]()
        elif kind == "delete":
            _, model, keys = entry
            for start in range(0, len(keys), LOOKUP_BATCH):
                model._default_manager.filter(pk__in=keys[start : start + LOOKUP_BATCH]).delete()
        else:
            _, model, columns, table, first, last = entry
            quote = connection.ops.quote_name
            translations = self._translations(model, columns, bases)
            assignments = ", ".join(f"{quote(column)} = %s" for column in columns[1:])
            sql = f"UPDATE {quote(model._meta.db_table)} SET {assignments} WHERE {quote(columns[0])} = %s"
            rows = self.db.execute(f"SELECT * FROM {table} WHERE rowid BETWEEN ? AND ? ORDER BY rowid", (first, last))
            while batch := rows.fetchmany(COPY_BATCH):
                translated = [self._translate(row, translations) for row in batch]
                cursor.executemany(sql, [(*row[1:], row[0]) for row in translated])


def staging_directory() -> Path:
    folder = Path(getattr(settings, "IMPORT_STAGING_DIR", "") or Path(settings.VAR_DIR) / "import-staging")
    # The staged copies hold the imported rows: owner-only, like the database they go into.
    return owner_only_folder(folder)


def staging_used() -> bool:
    """Whether imports stage their writes: on SQLite, unless IMPORT_STAGING is off."""
    return connection.vendor == "sqlite" and getattr(settings, "IMPORT_STAGING", True)


def deletion_counts(model: type[models.Model], keys: Iterable[Any]) -> dict[str, int]:
    """What deleting these rows deletes, by model label as QuerySet.delete reports it, without deleting.

    A staged deletion happens at the switch; its warning is written now.
    """
    from django.db.models.deletion import Collector

    keys = list(keys)
    counts: dict[str, int] = {}
    for start in range(0, len(keys), LOOKUP_BATCH):
        collector = Collector(using=connection.alias, origin=None)
        collector.collect(model._default_manager.filter(pk__in=keys[start : start + LOOKUP_BATCH]))  # type: ignore[arg-type]
        for queryset in collector.fast_deletes:
            label = queryset.model._meta.label
            counts[label] = counts.get(label, 0) + queryset.count()
        for each_model, instances in collector.data.items():
            label = each_model._meta.label
            counts[label] = counts.get(label, 0) + len(instances)
    return {label: count for label, count in counts.items() if count}
