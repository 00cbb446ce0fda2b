"""Score tables, in two layouts.

- `tsv`: what `export_scores` writes, `run_id<TAB>topic_id<TAB>metric<TAB>value`;
  a header line (`run_id topic_id metric value`) is allowed.
- `trec_eval`: `run measure topic value` (trec_eval -q rows with the run id in
  front, as the TREC AutoJudge tools and ir_measures users write them), or
  trec_eval's own three columns `measure topic value`, whose run is named by its
  `runid all NAME` row or by `run_id`. `run_id`, when given, names the run of
  every row (a file with another run id in it is an error, not a new run).

A row whose topic is `all` is a run's mean; a table may hold only those. Fields
split on tabs, or on runs of spaces in a file with no tab.
"""

import math
import re
from collections.abc import Iterator
from pathlib import Path

from django.contrib.auth.models import User
from django.utils.text import slugify

from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    Writes,
    chunked,
    id_checked,
    import_file,
    limited,
    read_lines,
)
from metaeval.kinds import IMPORT_SCORES
from metaeval.models import ImportedScore, ScoreTable

HEADER = ("run_id", "topic_id", "metric", "value")
LAYOUTS = ("tsv", "trec_eval")
METRIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.@-]*$")
MAX_METRIC_CHARS = 40  # ImportedScore.metric
Cell = tuple[str, str, str]


def _fields(line: str) -> list[str]:
    return [part.strip() for part in line.split("\t")] if "\t" in line else line.split()


def _cells(path: Path, *, layout: str, run_id: str | None) -> Iterator[tuple[int, list[str]]]:
    """(line number, [run_id, topic_id, metric, value]) of each data row, in the project's order."""
    named_run = run_id
    first = True
    for number, line in read_lines(path):
        parts = _fields(line)
        if layout == "tsv":
            if len(parts) != 4:
                raise ImportFailure(
                    f"expected 4 fields (run_id topic_id metric value), found {len(parts)}", path=path, line=number
                )
            if first and tuple(part.lower() for part in parts) == HEADER:
                first = False
                continue
            first = False
            row = parts
        elif len(parts) == 4:
            row = [parts[0], parts[2], parts[1], parts[3]]
        elif len(parts) == 3:
            measure, topic, value = parts
            if measure == "runid":
                if run_id is not None and value != run_id:
                    raise ImportFailure(f"the file is run {value!r}, not {run_id!r}", path=path, line=number)
                named_run = value
                continue
            if named_run is None:
                raise ImportFailure(
                    "a trec_eval row without a run id (measure topic value): name the run with --run-id",
                    path=path,
                    line=number,
                )
            row = [named_run, topic, measure, value]
        else:
            raise ImportFailure(
                f"expected 4 fields (run measure topic value) or 3 (measure topic value), found {len(parts)}",
                path=path,
                line=number,
            )
        if run_id is not None and row[0] != run_id:
            raise ImportFailure(f"run {row[0]!r} in a file imported as run {run_id!r}", path=path, line=number)
        yield number, row


def _parse_scores(path: Path, *, layout: str = "tsv", run_id: str | None = None) -> Iterator[tuple[int, Cell, float]]:
    seen: dict[Cell, int] = {}
    for number, parts in _cells(path, layout=layout, run_id=run_id):
        run_id_, topic_id, metric, raw_value = parts
        run_id_ = run_id_ if run_id is None else run_id
        for name, text, limit in (("run_id", run_id_, MAX_ID_CHARS), ("topic_id", topic_id, MAX_TOPIC_ID_CHARS)):
            if text != "all":  # a run's mean over its topics
                id_checked(text, limit, path=path, line=number, field=name)
        if not METRIC_NAME.match(metric):
            raise ImportFailure(f"not a metric name: {metric!r}", path=path, line=number, field="metric")
        limited(metric, MAX_METRIC_CHARS, path=path, line=number, field="metric")
        try:
            value = float(raw_value)
        except ValueError:
            raise ImportFailure(f"not a number: {raw_value!r}", path=path, line=number, field="value") from None
        if not math.isfinite(value):
            raise ImportFailure(f"not a finite number: {raw_value!r}", path=path, line=number, field="value")
        cell = (run_id_, topic_id, metric)
        if cell in seen:
            raise ImportFailure(
                f"run {run_id_}, topic {topic_id}, metric {metric} repeated (first on line {seen[cell]})",
                path=path,
                line=number,
            )
        seen[cell] = number
        yield number, cell, value


def scores_import(
    *,
    path: Path,
    name: str,
    replace: bool = False,
    user: User | None = None,
    layout: str = "tsv",
    run_id: str | None = None,
) -> ImportResult:
    """Import a score table under `name` (compared as the source `scores:NAME`).

    Importing the same file again adds nothing; a cell stored with another value
    is an error unless `replace`, which makes the table exactly the file's rows.
    """
    path = Path(path)
    if layout not in LAYOUTS:
        raise ImportFailure(f"unknown layout {layout!r}: {', '.join(LAYOUTS)}", path=path)
    if not name or slugify(name) != name:
        raise ImportFailure(f"a table name must be a slug (letters, digits, - and _), not {name!r}", path=path)
    options = {"name": name, "replace": replace, "layout": layout, "run_id": run_id or ""}
    return import_file(
        lambda writes: _scores_prepare(writes, path=path, name=name, replace=replace, layout=layout, run_id=run_id),
        kind=IMPORT_SCORES,
        path=path,
        options=options,
        user=user,
    )


def _scores_prepare(
    writes: Writes, *, path: Path, name: str, replace: bool, layout: str, run_id: str | None
) -> ImportResult:
    batch = writes.batch
    result = ImportResult(path=str(path))
    table = ScoreTable.objects.filter(name=name).first()
    created = table is None
    if table is None:
        table = writes.create_one(ScoreTable(name=name, imported_from=batch))
    stored: dict[Cell, float] = {}
    if not created:
        if replace:
            scores = list(table.scores.values_list("pk", flat=True))
            result.replaced = len(scores)
            writes.delete(ImportedScore, scores)
            table.imported_from = batch
            writes.update([table], ["imported_from"])
        else:
            stored = {
                (run_id, topic_id, metric): value
                for run_id, topic_id, metric, value in table.scores.values_list("run_id", "topic_id", "metric", "value")
            }
    for chunk in chunked(_parse_scores(path, layout=layout, run_id=run_id)):
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
        writes.create(new)
        result.created += len(new)
    if not result.lines:
        raise ImportFailure("no scores in the file", path=path)
    if result.created and not created and not replace:
        result.warnings.append(f"added {result.created} cells to the existing table {name!r}")
    return result
