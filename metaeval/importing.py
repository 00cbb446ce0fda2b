"""Score tables: the TSV `export_scores` writes, `run_id<TAB>topic_id<TAB>metric<TAB>value`.

A row whose topic is `all` is a run's mean; a table may hold only those. A
header line (`run_id topic_id metric value`) is allowed; fields split on tabs,
or on runs of spaces in a file with no tab.
"""

import math
import re
from collections.abc import Iterator
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.text import slugify

from assessor.collection.importing.base import (
    ImportFailure,
    ImportResult,
    batch_finish,
    batch_start,
    chunked,
    read_lines,
)
from assessor.models import ImportBatch
from metaeval.models import ImportedScore, ScoreTable

HEADER = ("run_id", "topic_id", "metric", "value")
METRIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.@-]*$")
Cell = tuple[str, str, str]


def _fields(line: str) -> list[str]:
    return [part.strip() for part in line.split("\t")] if "\t" in line else line.split()


def _parse_scores(path: Path) -> Iterator[tuple[int, Cell, float]]:
    seen: dict[Cell, int] = {}
    for number, line in read_lines(path):
        parts = _fields(line)
        if len(parts) != 4:
            raise ImportFailure(
                f"expected 4 fields (run_id topic_id metric value), found {len(parts)}", path=path, line=number
            )
        if not seen and tuple(part.lower() for part in parts) == HEADER:
            continue
        run_id, topic_id, metric, raw_value = parts
        for name, text in (("run_id", run_id), ("topic_id", topic_id)):
            if not text:
                raise ImportFailure("empty", path=path, line=number, field=name)
        if not METRIC_NAME.match(metric):
            raise ImportFailure(f"not a metric name: {metric!r}", path=path, line=number, field="metric")
        try:
            value = float(raw_value)
        except ValueError:
            raise ImportFailure(f"not a number: {raw_value!r}", path=path, line=number, field="value") from None
        if not math.isfinite(value):
            raise ImportFailure(f"not a finite number: {raw_value!r}", path=path, line=number, field="value")
        cell = (run_id, topic_id, metric)
        if cell in seen:
            raise ImportFailure(
                f"run {run_id}, topic {topic_id}, metric {metric} repeated (first on line {seen[cell]})",
                path=path,
                line=number,
            )
        seen[cell] = number
        yield number, cell, value


@transaction.atomic
def scores_import(
    *, path: Path, name: str, replace: bool = False, user: User | None = None
) -> ImportResult:
    """Import a score table under `name` (compared as the source `scores:NAME`).

    Importing the same file again adds nothing; a cell stored with another value
    is an error unless `replace`, which makes the table exactly the file's rows.
    """
    path = Path(path)
    if not name or slugify(name) != name:
        raise ImportFailure(f"a table name must be a slug (letters, digits, - and _), not {name!r}", path=path)
    batch = batch_start(kind=ImportBatch.Kind.SCORES, path=path, options={"name": name, "replace": replace}, user=user)
    result = ImportResult(path=str(path))
    table, created = ScoreTable.objects.get_or_create(name=name, defaults={"imported_from": batch})
    stored: dict[Cell, float] = {}
    if not created:
        if replace:
            result.replaced = table.scores.count()
            table.scores.all().delete()
            table.imported_from = batch
            table.save(update_fields=["imported_from"])
        else:
            stored = {
                (run_id, topic_id, metric): value
                for run_id, topic_id, metric, value in table.scores.values_list("run_id", "topic_id", "metric", "value")
            }
    for chunk in chunked(_parse_scores(path)):
        new = []
        for number, cell, value in chunk:
            result.lines += 1
            if cell not in stored:
                new.append(ImportedScore(table=table, run_id=cell[0], topic_id=cell[1], metric=cell[2], value=value))
            elif stored[cell] == value:
                result.unchanged += 1
            else:
                raise ImportFailure(
                    f"table {name!r} holds {stored[cell]!r} for run {cell[0]}, topic {cell[1]}, metric {cell[2]}; "
                    "use --replace to change it",
                    path=path,
                    line=number,
                    field="value",
                )
        ImportedScore.objects.bulk_create(new)
        result.created += len(new)
    if not result.lines:
        raise ImportFailure("no scores in the file", path=path)
    if result.created and not created and not replace:
        result.warnings.append(f"added {result.created} cells to the existing table {name!r}")
    return batch_finish(batch, result)
