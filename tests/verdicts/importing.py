"""Verdicts from a JSONL file: {"run_id": ..., "topic_id": ..., "verdict": "yes" | "no"} per line, into a named source.

The import runs through the one pipeline (assessor.importing.pipeline): a bad line names the
file, the line and the field, and nothing is written.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.importing.base import ImportFailure, ImportResult, read_lines
from assessor.importing.pipeline import Changes, RecordImport
from assessor.models import Answer
from assessor.sources import import_source_claim
from tests.verdicts.kinds import IMPORT_VERDICTS, LABEL_FAMILY, SCORE_FAMILY
from tests.verdicts.models import Verdict

FIELDS = ("run_id", "topic_id", "verdict")
Row = tuple[int, dict[str, Any]]  # (line number, record)


def verdicts_import(*, path: Path, name: str, replace: bool = False, user: User | None = None) -> ImportResult:
    """The registry's `Importer.function` (the upload page and `import_verdicts`)."""
    return VerdictsImport(path=path, name=name, replace=replace, user=user).run()


def _parsed(path: Path) -> Iterator[Row]:
    for number, line in read_lines(path):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFailure(f"not JSON ({exc.msg})", path=path, line=number) from None
        if not isinstance(row, dict):
            raise ImportFailure("expected a JSON object", path=path, line=number)
        for field in FIELDS:
            if not isinstance(row.get(field), str) or not row[field]:
                raise ImportFailure("missing, or not a string", path=path, line=number, field=field)
        if row["verdict"] not in ("yes", "no"):
            raise ImportFailure(f"must be yes or no, not {row['verdict']!r}", path=path, line=number, field="verdict")
        yield number, row


class VerdictsImport(RecordImport[Row, int, Verdict, ImportResult]):
    """One verdict a line, keyed by its answer; the whole file resolves at once."""

    kind = IMPORT_VERDICTS
    chunk_size = None

    def __init__(self, *, name: str, **common: Any) -> None:
        super().__init__(**common)
        self.name = name

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "replace": self.replace}

    def start(self) -> None:
        if not self.name:
            raise ImportFailure("a source name is required", path=self.path, field="name")

    def parse(self) -> Iterator[Row]:
        return _parsed(self.path)

    def chunk_prepare(self, chunk: list[Row]) -> None:
        self.source_id = import_source_claim(
            writes=self.writes, family=LABEL_FAMILY, name=self.name, user=self.user, path=self.path, option="name"
        )
        answers = Answer.objects.filter(run__run_id__in={row["run_id"] for _, row in chunk})
        self.answers = {(run, topic): pk for pk, run, topic in answers.values_list("pk", "run__run_id", "topic_id")}
        self.stored = {verdict.answer_id: verdict for verdict in Verdict.objects.filter(source_id=self.source_id)}
        self.topics = {row["topic_id"] for _, row in chunk}
        self.seen: dict[int, int] = {}

    def resolve(self, line: Row) -> int:
        number, row = line
        answer_id = self.answers.get((row["run_id"], row["topic_id"]))
        if answer_id is None:
            raise ImportFailure(
                f"no answer of run {row['run_id']!r} to topic {row['topic_id']!r}", path=self.path, line=number,
                field="run_id",
            )  # fmt: skip
        if answer_id in self.seen:
            raise ImportFailure(
                f"answer repeated (first on line {self.seen[answer_id]})", path=self.path, line=number, field="run_id"
            )
        self.seen[answer_id] = number
        return answer_id

    def same(self, stored: Verdict, line: Row) -> bool:
        return stored.label == line[1]["verdict"]

    def replaceable(self, stored: Verdict) -> bool:
        return stored.imported_from_id is not None

    def conflict(self, stored: Verdict, line: Row) -> ImportFailure:
        return ImportFailure(
            f"{self.name!r} holds {stored.label!r} for this answer; import with replace to change it",
            path=self.path,
            line=line[0],
            field="verdict",
        )

    def write(self, changes: Changes[int, Row, Verdict]) -> None:
        for stored, (_, row) in changes.changed.values():
            stored.label, stored.imported_from = row["verdict"], self.batch
        self.writes.update(changes.changed_rows(), ["label", "imported_from"])
        self.writes.create(
            Verdict(answer_id=answer_id, source_id=self.source_id, imported_from=self.batch, label=row["verdict"])
            for answer_id, (_, row) in changes.new.items()
        )
        # The source's kept scores are refreshed in the topics the file named (ScoreRefresh.TOUCHED).
        self.writes.scores_touch(family=SCORE_FAMILY, columns=(self.name,), topics=self.topics)
