"""Score tables, in the layouts of assessor/collection/score_formats.py (autojudge-evaluate's names).

- `tsv`: what `export_scores` writes, `run_id topic_id metric value`; a header
  line (`run_id topic_id metric value`) is allowed.
- `tot`: `run measure topic value` (trec_eval -q rows with the run id in front).
- `ir_measures`: `run topic measure value`, or ir_measures' own per-query output of
  one run, `query measure value`, whose run is named by `run_id`.
- `trec_eval`: trec_eval's own `measure topic value` of one run, named by its
  `runid all NAME` row (wherever it stands: trec_eval prints it after the topics)
  or by `run_id`.
- `rag4reports`: `topic run measure value` (the Rag4Reports leaderboards).
- `jsonl`: one JSON object a line with `run_id`, `topic_id`, `measure` and `value`
  (autojudge-evaluate's `.eval.jsonl`; a number's text is read as a number too).
`run_id`, when given, names the run of every row (a file with another run id in it
is an error, not a new run).

A row whose topic is `all` is a run's mean; a table may hold only those. Fields
split on tabs, or on runs of spaces in a file with no tab. In any layout, a first line
whose last field is `value` names the columns (`run_id query_id measure value`, as the
AutoJudge tools' leaderboards may begin) and is skipped.
"""

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.score_formats import LAYOUTS
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    characters_check,
    id_checked,
    limited,
    option_id_checked,
    read_lines,
)
from assessor.importing.pipeline import Changes, RecordImport
from assessor.importing.topic_ids import FileTopicIds
from assessor.models.keys import published_id
from assessor.names import name_problem
from metaeval.kinds import IMPORT_SCORES
from metaeval.models import ImportedScore, ScoreTable

HEADER = ("run_id", "topic_id", "metric", "value")
METRIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.@-]*$")
MAX_METRIC_CHARS = 40  # ImportedScore.metric
Cell = tuple[str, str, str]


def _fields(line: str) -> list[str]:
    return [part.strip() for part in line.split("\t")] if "\t" in line else line.split()


def _trec_eval_run(path: Path, run_id: str | None) -> str | None:
    """The run a trec_eval file names in its `runid all NAME` row (one run a file), checked against `run_id`."""
    named: tuple[int, str] | None = None
    for number, line in read_lines(path):
        parts = _fields(line)
        if len(parts) != 3 or parts[0] != "runid":
            continue
        name = parts[2]
        if run_id is not None and name != run_id:
            raise ImportFailure(f"the file is run {name!r}, not {run_id!r}", path=path, line=number, field="runid")
        if named is not None and named[1] != name:
            raise ImportFailure(
                f"run {name!r} after run {named[1]!r} (line {named[0]}): a trec_eval file holds one run; "
                "import each run's file, or write them all in the tot layout",
                path=path,
                line=number,
                field="runid",
            )
        named = named or (number, name)
    return run_id if named is None else named[1]


def _row(parts: list[str], *, layout: str, run: str | None, path: Path, number: int) -> list[str]:
    """The row's [run_id, topic_id, metric, value] as `layout` orders its fields."""
    count = len(parts)
    if layout in ("tsv", "tot", "rag4reports") or (layout == "ir_measures" and count == 4):
        if count != 4:
            columns = {"tot": "run measure topic value", "rag4reports": "topic run measure value"}.get(
                layout, "run_id topic_id metric value"
            )
            hint = " (three: --format trec_eval or ir_measures)" if count == 3 else ""
            raise ImportFailure(f"expected 4 fields ({columns}), found {count}{hint}", path=path, line=number)
        if layout == "tot":
            return [parts[0], parts[2], parts[1], parts[3]]
        if layout == "rag4reports":
            return [parts[1], parts[0], parts[2], parts[3]]
        return parts
    if count != 3:
        expected = "measure topic value" if layout == "trec_eval" else "run topic measure value, or query measure value"
        hint = " (four: --format tot, run measure topic value)" if layout == "trec_eval" and count == 4 else ""
        raise ImportFailure(f"expected {expected}, found {count} fields{hint}", path=path, line=number)
    if run is None:
        raise ImportFailure(
            f"a {layout} row without a run id ({'measure topic value' if layout == 'trec_eval' else 'query measure value'}"
            "): name the run with --run-id",
            path=path,
            line=number,
        )
    if layout == "trec_eval":
        measure, topic, value = parts
    else:
        topic, measure, value = parts
    return [run, topic, measure, value]


JSONL_KEYS = ("run_id", "topic_id", "measure", "value")


def _jsonl_row(line: str, *, path: Path, number: int) -> list[str]:
    """A JSONL row's [run_id, topic_id, metric, value], each as text (a number's `repr`, read back exactly)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFailure(f"not JSON: {exc.msg}", path=path, line=number) from None
    if not isinstance(record, dict):
        raise ImportFailure("a row is a JSON object with run_id, topic_id, measure and value", path=path, line=number)
    characters_check(record, line, path=path, line=number)
    row = []
    for key in JSONL_KEYS:
        if key not in record:
            raise ImportFailure(f"no {key!r} in the row", path=path, line=number, field=key)
        value = record[key]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ImportFailure(f"{key} is text or a number, not {value!r}", path=path, line=number, field=key)
        row.append(repr(float(value)) if isinstance(value, float) else str(value))
    return row


def _cells(path: Path, *, layout: str, run_id: str | None) -> Iterator[tuple[int, list[str]]]:
    """(line number, [run_id, topic_id, metric, value]) of each data row, in the project's order."""
    if layout == "jsonl":
        for number, line in read_lines(path):
            row = _jsonl_row(line, path=path, number=number)
            if run_id is not None and row[0] != run_id:
                raise ImportFailure(f"run {row[0]!r} in a file imported as run {run_id!r}", path=path, line=number)
            yield number, row
        return
    run = _trec_eval_run(path, run_id) if layout == "trec_eval" else run_id
    first = True
    for number, line in read_lines(path):
        parts = _fields(line)
        if first and (tuple(part.lower() for part in parts) == HEADER or (parts and parts[-1].lower() == "value")):
            # A header: "value" is never a number, so the line can be nothing else.
            first = False
            continue
        first = False
        if layout == "trec_eval" and len(parts) == 3 and parts[0] == "runid":
            continue
        row = _row(parts, layout=layout, run=run, path=path, number=number)
        if run_id is not None and row[0] != run_id:
            raise ImportFailure(f"run {row[0]!r} in a file imported as run {run_id!r}", path=path, line=number)
        yield number, row


def _parse_scores(path: Path, *, layout: str = "tsv", run_id: str | None = None) -> Iterator[tuple[int, Cell, float]]:
    """Each row's (line, (run id, topic key, metric), value): a topic is kept under its stored key in the
    campaign in effect, as the scores computed here name it (a run's mean stays `all`)."""
    seen: dict[Cell, int] = {}
    topic_ids = FileTopicIds()
    for number, parts in _cells(path, layout=layout, run_id=run_id):
        run_id_, topic_id, metric, raw_value = parts
        run_id_ = run_id_ if run_id is None else run_id
        for name, text, limit in (("run_id", run_id_, MAX_ID_CHARS), ("topic_id", topic_id, MAX_TOPIC_ID_CHARS)):
            if text != "all":  # a run's mean over its topics
                id_checked(text, limit, path=path, line=number, field=name)
        shown_topic = topic_id
        if topic_id != "all":
            topic_id = topic_ids.key(topic_id, path=path, line=number, field="topic_id")
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
                f"run {run_id_}, topic {shown_topic}, metric {metric} repeated (first on line {seen[cell]})",
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
    return ScoresImport(path=path, name=name, replace=replace, user=user, layout=layout, run_id=run_id).run()


ScoreLine = tuple[int, Cell, float]  # (line number, cell, value)


class ScoresImport(RecordImport[ScoreLine, Cell, float, ImportResult]):
    """One value a cell (run, topic, metric) of a named table; under --replace the table becomes the file's."""

    kind = IMPORT_SCORES

    def __init__(self, *, name: str, layout: str, run_id: str | None, **common: Any) -> None:
        super().__init__(**common)
        self.name, self.layout, self.run_id = name, layout, run_id

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "replace": self.replace, "layout": self.layout, "run_id": self.run_id or ""}

    def check(self) -> None:
        if self.layout not in LAYOUTS:
            raise ImportFailure(f"unknown layout {self.layout!r}: {', '.join(LAYOUTS)}", path=self.path)
        if problem := name_problem(self.name):
            raise ImportFailure(f"the table's name: {problem}", path=self.path)
        if self.run_id is not None:
            option_id_checked(self.run_id, MAX_ID_CHARS, path=self.path, option="--run-id")

    def start(self) -> None:
        table = ScoreTable.objects.filter(name=self.name).first()
        self.table_created = table is None
        if table is None:
            self.table = self.writes.create_one(ScoreTable(name=self.name, imported_from=self.batch))
            return
        self.table = table
        if not self.replace:
            cells = table.scores.values_list("run_id", "topic_id", "metric", "value")
            self.stored = {(run_id, topic_id, metric): value for run_id, topic_id, metric, value in cells}
            return
        scores = list(table.scores.values_list("pk", flat=True))
        self.result.replaced = len(scores)
        self.writes.delete(ImportedScore, scores)
        table.imported_from = self.batch
        self.writes.update([table], ["imported_from"])

    def parse(self) -> Iterator[ScoreLine]:
        return _parse_scores(self.path, layout=self.layout, run_id=self.run_id)

    def resolve(self, line: ScoreLine) -> Cell:
        return line[1]

    def same(self, stored: float, line: ScoreLine) -> bool:
        return stored == line[2]

    def replaceable(self, stored: float) -> bool:
        return False  # under --replace the stored cells are gone: none is left to compare with

    def conflict(self, stored: float, line: ScoreLine) -> ImportFailure:
        number, (run_id, topic_id, metric), _ = line
        return ImportFailure(
            f"table {self.name!r} holds {stored!r} for run {run_id}, topic {published_id(topic_id)}, metric {metric}; "
            "use --replace to change it",
            path=self.path,
            line=number,
            field="value",
        )

    def write(self, changes: Changes[Cell, ScoreLine, float]) -> None:
        self.writes.create(
            ImportedScore(table=self.table, run_id=run_id, topic_id=topic_id, metric=metric, value=value)
            for (run_id, topic_id, metric), (_, _, value) in changes.new.items()
        )

    def finish(self) -> None:
        if not self.result.lines:
            raise ImportFailure("no scores in the file", path=self.path)
        if self.result.created and not self.table_created and not self.replace:
            self.result.warnings.append(f"added {self.result.created} cells to the existing table {self.name!r}")
