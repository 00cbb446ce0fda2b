"""Queries a label save (and the answer page an assessor reads after every answer) makes on every call,
written by the ORM once and run straight on the connection.

Building and compiling a queryset costs several times the CPU of running it
(0.5-2 ms against 0.1-0.2 ms on the loaded 2-core test machine), and every
label save makes the same few reads and writes. The reads are written once per
connection by the ORM itself (its SQL, its locking clauses, its conversions of
dates and JSON); the writes are one row each, their values prepared by the
model's fields as the ORM prepares them. On PostgreSQL they run through
`statement_cursor`, so that the database too keeps them parsed and planned.
"""

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.utils import CursorDebugWrapper
from django.db.models import Aggregate, Field, Model, QuerySet, TextField

from assessor.models.scope import campaign_scope

# Values that stand for a prepared query's parameters while the ORM writes it: found again among its
# parameters by equality, so none may equal a constant of the query. The number fits every integer field
# (the ORM writes a lookup out of a field's range as no query at all).
_INT_MARK = 32_101
_TEXT_MARK = "\x01prepared-parameter-"


class _ServerBoundDebugCursor(CursorDebugWrapper):
    """Django's debug cursor (the queries a test captures, DEBUG's log) for a cursor that binds on the server: it
    logs the statement composed with its values, as Django's backend does when all its cursors bind on the server.
    Django's `last_executed_query` reads the text a client-side cursor sent, which a server-bound one has not."""

    def debug_sql(self, sql=None, params=None, use_last_executed_query=False, many=False):
        if use_last_executed_query and not many:
            try:
                sql = self.db.ops.compose_sql(sql, params)
            except psycopg.DataError:
                pass  # as Django's: values it cannot compose leave the statement's text
        return super().debug_sql(sql, params, use_last_executed_query=False, many=many)


@contextmanager
def statement_cursor() -> Iterator[Any]:
    """A cursor for the statements every request or label save runs. On PostgreSQL their values go apart from
    their text (server-side binding), so that psycopg prepares a statement on the server once the connection has run
    it `prepare_threshold` times (DATABASE_PREPARE_THRESHOLD): parsed and planned once, and no value quoted by
    psycopg. Django's own cursors bind on the client and are never prepared: a statement the ORM writes for a bulk
    insert may carry more values than the 65,535 the server takes apart from the text. Elsewhere Django's cursor.

    Wrapped as Django wraps its own (its errors, the queries it logs, its execute wrappers)."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.validate_thread_sharing()
    connection.ensure_connection()
    raw: Any = psycopg.Cursor(connection.connection)  # a DB-API cursor, as Django wraps its own
    wrapped = _ServerBoundDebugCursor(raw, connection) if connection.queries_logged else connection.make_cursor(raw)
    with wrapped as cursor:
        yield cursor


class Prepared:
    """A read the ORM writes once per connection and the connection then runs with other values.

    Building and compiling a queryset costs several times the CPU of running it
    (about 0.5-2 ms against 0.1-0.2 ms on the 2-core test machine), and every
    label save makes the same few reads: they are written once, with marks in
    place of their values, and run straight on the cursor, their rows converted
    as the ORM converts them (dates, JSON). `build` takes one argument per
    parameter (an int or a str, as `kinds` says) and returns a values_list
    queryset; call inside a transaction if it selects for update.
    """

    def __init__(self, build: Callable[..., QuerySet], *kinds: type[int] | type[str]):
        self.build = build
        self.marks: list[int | str] = [
            _INT_MARK - i if kind is int else f"{_TEXT_MARK}{i}" for i, kind in enumerate(kinds)
        ]

    def _compiled(self) -> tuple[str, list[tuple[int, Any]], Any, list]:
        """(SQL, each parameter as (argument index, None) or (-1, constant), compiler, converters)."""
        # The thread's own connection (django.db.connection is a proxy shared by the threads): its compiler
        # and converters stay with it.
        wrapper = connections[DEFAULT_DB_ALIAS]
        cache = wrapper.__dict__.setdefault("_prepared_queries", {})
        compiled = cache.get(self)
        if compiled is None:
            # Written outside any campaign: a campaign's filter would be kept in the SQL as a constant, for every
            # campaign after. What the query reads is named by its ids (and the access rule of its caller).
            with campaign_scope(None):
                queryset = self.build(*self.marks)
            compiler = queryset.query.get_compiler(connection=wrapper)
            sql, params = compiler.as_sql()
            slots = [(self.marks.index(p), None) if p in self.marks else (-1, p) for p in params]
            fields = [column[0] for column in compiler.select[0 : compiler.col_count]]
            compiled = cache[self] = (sql, slots, compiler, compiler.get_converters(fields))
        return compiled

    def rows(self, *values: Any) -> list[list[Any]]:
        sql, slots, compiler, converters = self._compiled()
        params = [values[index] if index >= 0 else constant for index, constant in slots]
        with statement_cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        if converters:
            rows = compiler.apply_converters(rows, converters)
        return [list(row) for row in rows]

    def first(self, *values: Any) -> list[Any] | None:
        rows = self.rows(*values)
        return rows[0] if rows else None


def instance_from_row(model: type[Model], fields: Sequence[str], row: Sequence[Any]) -> Any:
    """A model instance from the columns a prepared query read (the others deferred, as `.only()` does)."""
    by_name = dict(zip(fields, row, strict=True))
    # from_db takes the values in the order of the model's fields.
    names = [field.attname for field in model._meta.concrete_fields if field.attname in by_name]
    return model.from_db(connection.alias, names, [by_name[name] for name in names])


def _fields(model: type[Model]) -> dict[str, Field]:
    return {field.name: field for field in model._meta.concrete_fields}


def _columns(model: type[Model], values: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """The quoted columns of `values` (field names) and their values as the fields prepare them for saving."""
    quote = connection.ops.quote_name
    fields = _fields(model)
    return (
        [quote(fields[name].column) for name in values],
        [fields[name].get_db_prep_save(value, connection) for name, value in values.items()],
    )


def row_insert(model: type[Model], values: dict[str, Any]) -> None:
    """Insert one row (no signals, no id read back): for rows nothing in the request reads again."""
    columns, params = _columns(model, values)
    table = connection.ops.quote_name(model._meta.db_table)
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(params))})"
    with statement_cursor() as cursor:
        cursor.execute(sql, params)


def row_update(instance: Model, fields: Sequence[str]) -> None:
    """`instance.save(update_fields=fields)` as one UPDATE of its row, without signals."""
    model = type(instance)
    by_name = _fields(model)
    columns, params = _columns(model, {name: getattr(instance, by_name[name].attname) for name in fields})
    table = connection.ops.quote_name(model._meta.db_table)
    key = connection.ops.quote_name(model._meta.pk.column)
    sql = f"UPDATE {table} SET {', '.join(f'{column} = %s' for column in columns)} WHERE {key} = %s"
    with statement_cursor() as cursor:
        cursor.execute(sql, [*params, instance.pk])


def row_create(model: type[Model], values: dict[str, Any]) -> Any:
    """`model.objects.create(**values)` as one INSERT written without the ORM's query building, and no signals:
    the instance, its id read back (for rows a request writes on every call, such as a label)."""
    instance = model(**values)
    meta = model._meta
    fields = [field for field in meta.concrete_fields if field is not meta.auto_field]
    # pre_save as the ORM's insert calls it: the creation times (auto_now_add) are set here.
    params = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
    quote = connection.ops.quote_name
    table, key = quote(meta.db_table), quote(meta.pk.column)
    sql = f"INSERT INTO {table} ({', '.join(quote(field.column) for field in fields)}) "
    sql += f"VALUES ({', '.join(['%s'] * len(params))})"
    returning = meta.auto_field is not None and connection.features.can_return_columns_from_insert
    with statement_cursor() as cursor:
        cursor.execute(f"{sql} RETURNING {key}" if returning else sql, params)
        if returning:
            instance.pk = cursor.fetchone()[0]
        elif meta.auto_field is not None:
            instance.pk = connection.ops.last_insert_id(cursor, meta.db_table, meta.pk.column)
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance


class IdList(Aggregate):
    """The ids of a group as one text, comma-separated, in no order (`distinct=True`: each once): PostgreSQL's
    STRING_AGG, SQLite's GROUP_CONCAT. For a list a prepared read takes as one column beside other things, so that
    a save reads it in a statement it makes anyway (`id_list` reads it back)."""

    function = "GROUP_CONCAT"
    output_field = TextField()
    allow_distinct = True

    def as_postgresql(self, compiler: Any, wrapper: Any, **extra_context: Any) -> Any:
        template = "%(function)s(%(distinct)s(%(expressions)s)::text, ',')"
        return self.as_sql(compiler, wrapper, function="STRING_AGG", template=template, **extra_context)


def id_list(text: str | None) -> list[int]:
    return [int(part) for part in text.split(",")] if text else []
