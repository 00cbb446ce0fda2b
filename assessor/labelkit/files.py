"""An app's labels of answers in a file: JSONL, one line an answer (`run_id`, `topic_id`, and the label under the
app's noun: {"run_id": "r1", "topic_id": "t1", "verdict": "yes"}), read through the one import pipeline and written
back with who or what made each label."""

import json
from collections.abc import Iterator
from typing import Any

from assessor.importing.base import ImportFailure, read_jsonl, require
from assessor.importing.pipeline import Changes, LabelsImport
from assessor.labelkit.spec import AnswerLabels
from assessor.models import Answer
from assessor.scoring.lifecycle import labels_counted
from assessor.sources import import_source_claim

Line = tuple[int, dict[str, Any]]  # (line number, the line's record)


class AnswerLabelsImport(LabelsImport[Line, int, Any, Any]):
    """The registry's `Importer.function` of an `AnswerLabels`: a line a label, keyed by its answer."""

    chunk_size = None  # the whole file resolves at once

    def __init__(self, *, spec: AnswerLabels, name: str, **common: Any) -> None:
        super().__init__(**common)
        self.spec, self.name, self.kind = spec, name, spec.name

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "replace": self.replace}

    def parse(self) -> Iterator[Line]:
        noun = self.spec.noun
        for number, row in read_jsonl(self.path):
            for field in ("run_id", "topic_id", noun):
                require(row, field, str, path=self.path, line=number)
            if row[noun] not in self.spec.labels:
                must = f"must be {' or '.join(self.spec.labels)}"
                raise ImportFailure(must, path=self.path, line=number, field=noun)
            yield number, row

    def chunk_prepare(self, chunk: list[Line]) -> None:
        self.source_id = import_source_claim(
            writes=self.writes, family=self.spec.name, name=self.name, user=self.user, path=self.path, option="name"
        )
        answers = Answer.objects.filter(run__run_id__in={row["run_id"] for _, row in chunk})
        self.answers = {(run, topic): pk for pk, run, topic in answers.values_list("pk", "run__run_id", "topic_id")}
        self.stored = {
            label.answer_id: label for label in self.spec.model._default_manager.filter(source_id=self.source_id)
        }
        self.topics = {row["topic_id"] for _, row in chunk}

    def resolve(self, line: Line) -> int:
        if (answer_id := self.answers.get((line[1]["run_id"], line[1]["topic_id"]))) is None:
            raise ImportFailure("no answer of this run to this topic", path=self.path, line=line[0], field="run_id")
        return answer_id

    def repeated(self, first: Line, line: Line, *, first_new: bool) -> None:
        raise ImportFailure(f"answer repeated (first on line {first[0]})", path=self.path, line=line[0], field="run_id")

    def same(self, stored: Any, line: Line) -> bool:
        return bool(stored.label == line[1][self.spec.noun])

    def conflict(self, stored: Any, line: Line) -> ImportFailure:
        message = f"{self.name!r} holds {stored.label!r} for this answer; import with replace to change it"
        return ImportFailure(message, path=self.path, line=line[0], field=self.spec.noun)

    def write(self, changes: Changes[int, Line, Any]) -> None:
        noun, model = self.spec.noun, self.spec.model
        for stored, (_, row) in changes.changed.values():
            stored.label, stored.imported_from = row[noun], self.batch
        self.writes.update(changes.changed_rows(), ["label", "imported_from"])
        self.writes.create(
            model(answer_id=answer, source_id=self.source_id, imported_from=self.batch, label=line[1][noun])
            for answer, line in changes.new.items()
        )
        self.writes.scores_touch(family=self.spec.name, columns=(self.name,), topics=self.topics)  # TOUCHED


def label_lines(spec: AnswerLabels, *, name: str) -> Iterator[str]:
    """The counted labels of a source as the importer reads them, with who or what made each (`made_by`)."""
    labels = labels_counted(spec.model._default_manager.filter(source__family=spec.name, source__name=name))
    for label in labels.select_related("answer__run", "created_by").order_by("answer__run__run_id", "answer__topic_id"):
        row = {"run_id": label.answer.run.run_id, "topic_id": label.answer.topic_id, spec.noun: label.label}
        yield json.dumps({**row, "made_by": label.made_by}) + "\n"
