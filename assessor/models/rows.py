"""Rows written many times a second (a job worker's call log and labels, the kept scores), in one plain INSERT each.

`Model.objects.create` and `bulk_create` build a model instance per row and compile the statement through the
ORM: for the two call-log rows and the twenty labels of an AutoAssign answer, that was a third of the CPU a
worker spent around the calls. Here the values are prepared by the fields themselves (`get_db_prep_save`, as
the ORM does), fields left out take their defaults, and one INSERT of all the rows is sent.

On PostgreSQL, rows of more values than psycopg keeps the parsed form of a statement for (50) go as one JSON
document (`INSERT ... SELECT ... FROM json_to_recordset(%s)`), when their columns are plain (numbers, text, times):
one parameter and the same text every time (a JSON column's value goes in the document as it is), where the twenty labels of an answer in a VALUES list of 180 parameters
were parsed again on every insert, and each value prepared and quoted on its own (about 2 ms of CPU an answer).
"""

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connections, models, router
from django.db.models.fields import NOT_PROVIDED
from django.utils import timezone

# Well within SQLite's limit of parameters in one statement for any model here.
ROWS_PER_STATEMENT = 200
# psycopg parses a statement's text once and keeps it for statements of at most this many parameters
# (psycopg._queries.MAX_CACHED_STATEMENT_PARAMS): beyond, PostgreSQL gets the rows as arrays.
CACHED_STATEMENT_PARAMS = 50
# Rows in one JSON document (PostgreSQL): a few megabytes at most for the rows written here.
RECORDSET_ROWS = 5000


@cache
def _columns(model: type[models.Model]) -> tuple[tuple[models.Field, str], ...]:
    """The model's concrete fields but its automatic key, with the name a row gives each value under."""
    return tuple((field, field.attname) for field in model._meta.concrete_fields if field is not model._meta.auto_field)


def _default(field: models.Field) -> Any:
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return timezone.now()
    if field.has_default():
        return field.get_default()
    if field.null:
        return None
    if field.default is NOT_PROVIDED and field.blank and field.empty_strings_allowed:
        return ""
    raise ValueError(f"{field.model.__name__}.{field.name} has no default: give it a value")


def rows_insert(model: type[models.Model], rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert `rows` (dicts by attribute name: `job_id`, not `job`) of `model` in one statement, without instances."""
    connection = connections[router.db_for_write(model)]
    # A JSON document is one parameter however many rows it holds.
    size = (
        RECORDSET_ROWS
        if connection.vendor == "postgresql" and _recordset(model, connection.alias)
        else ROWS_PER_STATEMENT
    )
    for start in range(0, len(rows), size):
        _insert(model, rows[start : start + size])


# A data-modifying statement (an INSERT, a DELETE) and its parameters, to run as a part of another statement's WITH:
# PostgreSQL runs every part of one statement or none, at one moment (`with_writes`).
Write = tuple[str, list]


def row_insert_write(model: type[models.Model], row: Mapping[str, Any]) -> Write:
    """One row's plain INSERT (`rows_insert`'s, for one row), to run beside other writes (`with_writes`)."""
    connection = connections[router.db_for_write(model)]
    values = [_prepared(field, row[name] if name in row else _default(field), connection) for field, name in _columns(model)]
    return _insert_head(model, connection.alias) + f"VALUES ({', '.join(['%s'] * len(values))})", values


def _prepared(field: models.Field, value: Any, connection: Any) -> Any:
    """The value as its field prepares it for the database (`get_db_prep_save`, as the ORM does): a plain int or
    str needs no preparing but for a JSON column, where a str is a JSON document's string."""
    if type(value) in (int, str) and not isinstance(field, models.JSONField):
        return value
    return field.get_db_prep_save(value, connection)


def with_writes(writes: Sequence[Write], sql: str, params: Sequence[Any]) -> tuple[str, list]:
    """The statement `sql` (which may open with a WITH of its own) with the `writes` run as parts of its WITH, before
    its own: one round trip for all of them (PostgreSQL)."""
    if not writes:
        return sql, list(params)
    parts = ", ".join(f"written_{number} AS ({write})" for number, (write, _params) in enumerate(writes))
    head, rest = ("WITH " + parts + ", ", sql[len("WITH ") :]) if sql.startswith("WITH ") else ("WITH " + parts + " ", sql)
    return head + rest, [value for _write, write_params in writes for value in write_params] + list(params)


def writes_joinable(using: str) -> bool:
    """Whether writes can run as parts of another statement's WITH on the database `using` (`with_writes`): only
    PostgreSQL has a data-modifying WITH."""
    return connections[using].vendor == "postgresql"


def writes_run(writes: Sequence[Write], *, using: str) -> None:
    """Run the writes in one statement on the database `using` (PostgreSQL)."""
    if not writes:
        return
    connection = connections[using]
    sql, params = with_writes(writes[:-1], *writes[-1])
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def rows_insert_statement(model: type[models.Model], rows: Sequence[Mapping[str, Any]]) -> tuple[str, list] | None:
    """`rows_insert`'s INSERT as one `INSERT ... SELECT ... FROM json_to_recordset(%s)` and its one parameter, for a
    statement that runs it beside other writes (a WITH part, which may add a WHERE to its SELECT); None where that
    form is not available (not PostgreSQL, a column that is not plain, more rows than one document holds)."""
    connection = connections[router.db_for_write(model)]
    if not writes_joinable(connection.alias) or len(rows) > RECORDSET_ROWS:
        return None
    recordset = _recordset(model, connection.alias)
    if not recordset:
        return None
    return _insert_head(model, connection.alias) + recordset, [_json_rows(_columns(model), rows, connection)]


def _insert(model: type[models.Model], rows: Sequence[Mapping[str, Any]]) -> None:
    if not rows:
        return
    connection = connections[router.db_for_write(model)]
    columns = _columns(model)
    head = _insert_head(model, connection.alias)
    if (
        connection.vendor == "postgresql"
        and len(rows) * len(columns) > CACHED_STATEMENT_PARAMS
        and (recordset := _recordset(model, connection.alias))
    ):
        with connection.cursor() as cursor:
            cursor.execute(head + recordset, [_json_rows(columns, rows, connection)])
        return
    values: list[Any] = []
    for row in rows:
        for field, name in columns:
            values.append(_prepared(field, row[name] if name in row else _default(field), connection))
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    with connection.cursor() as cursor:
        cursor.execute(head + f"VALUES {', '.join([one] * len(rows))}", values)


@cache
def _insert_head(model: type[models.Model], alias: str) -> str:
    quote = connections[alias].ops.quote_name
    names = ", ".join(quote(field.column) for field, _name in _columns(model))
    return f"INSERT INTO {quote(model._meta.db_table)} ({names}) "


# Columns whose values JSON carries as they are, once prepared: numbers, text, booleans and times (as ISO text).
PLAIN_TYPES = frozenset(
    {
        "AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField", "SmallIntegerField",
        "PositiveIntegerField", "PositiveBigIntegerField", "PositiveSmallIntegerField", "FloatField", "CharField",
        "SlugField", "TextField", "BooleanField", "DateTimeField",
    }
)  # fmt: skip


def _plain(field: models.Field) -> bool:
    target = field.target_field if field.is_relation else field  # type: ignore[attr-defined]
    return target.get_internal_type() in PLAIN_TYPES or _json(field)


def _json(field: models.Field) -> bool:
    """A JSON column whose value the document carries as it is (the field's own encoding is json.dumps)."""
    return isinstance(field, models.JSONField) and field.encoder is None


@cache
def _recordset(model: type[models.Model], alias: str) -> str:
    """`SELECT ... FROM json_to_recordset(%s::json) AS r(column type, ...)` for the model's columns, or "" when one
    of them is not plain."""
    connection = connections[alias]
    columns = _columns(model)
    if not all(_plain(field) for field, _name in columns):
        return ""
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field, _name in columns)
    typed = ", ".join(f"{quote(field.column)} {field.db_type(connection)}" for field, _name in columns)
    return f"SELECT {names} FROM json_to_recordset(%s::json) AS r({typed})"


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} in a row of plain columns")


def _json_rows(
    columns: tuple[tuple[models.Field, str], ...], rows: Sequence[Mapping[str, Any]], connection: Any
) -> str:
    """The rows as a JSON array of objects by column, each value prepared by its field (as the ORM does); a plain
    int or str needs no preparing, and a value every row leaves out is prepared once."""
    prepared: list[dict[str, Any]] = [{} for _ in rows]
    for field, name in columns:
        column = field.column
        if not any(name in row for row in rows):
            value = _default(field) if _json(field) else field.get_db_prep_save(_default(field), connection)
            if isinstance(value, datetime):
                value = _json_value(value)  # once, not for each row
            for out in prepared:
                out[column] = value
            continue
        if _json(field):
            for row, out in zip(rows, prepared, strict=True):
                out[column] = row[name] if name in row else _default(field)
            continue
        for row, out in zip(rows, prepared, strict=True):
            value = row[name] if name in row else _default(field)
            out[column] = _prepared(field, value, connection)
    return json.dumps(prepared, default=_json_value, ensure_ascii=False)
