"""Grade files in the reference's layout (PrefNugget's `nugget-grades.jsonl`, its `NuggetGradeData`), both ways.

One JSON object a line: `run_id`, `query_id`, `nugget_id` (the AutoJudge question id, the md5 of the question's
text, or the question itself), `question`, `passage`, `grade` 0-5, `reasoning`, `confidence`, and for graded
documents `doc_id` (and `paragraph_idx`). A report graded with its documents is written as its report's grade,
with `document_id` and `document_grade` beside it (keys the reference's reader and the import ignore). A file's
grades go into a file's grade source on a named bank: each line's question must be one of the bank's questions
of its topic. Lines of one report and question are graded documents: the question's grade is the highest, as
the reference aggregates them.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.runs import AmbiguousRun, run_aliases, run_match
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    integer_checked,
    json_id,
    optional_float,
    read_jsonl,
    required_json_id,
)
from assessor.importing.pipeline import Changes, LabelsImport
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import Answer
from assessor.models.keys import published_id
from assessor.sources import import_source_claim
from grades.kinds import GRADES_FAMILY, IMPORT_GRADES
from grades.llm import cited_documents
from grades.models import GradeLabel
from grades.scoring import SCORE_FAMILY, grades_counted
from nuggets.banks import bank_questions, question_id


@dataclass(frozen=True)
class GradeLine:
    line: int
    run_id: str
    topic_id: str  # the topic's stored key (the file's query_id in the campaign in effect)
    question: str  # nugget_id, else question
    grade: int
    confidence: float | None
    reasoning: str
    document: str


def _grade_line(record: dict[str, Any], ids: FileTopicIds, *, path: Path, line: int) -> GradeLine:
    grade = integer_checked(record.get("grade"), 0, 5, path=path, line=line, field="grade")
    confidence = optional_float(record, "confidence", path=path, line=line)
    reasoning = record.get("reasoning") or ""
    if not isinstance(reasoning, str):
        raise ImportFailure("must be a string", path=path, line=line, field="reasoning")
    # null, "" or nothing where the report, not a document, was graded (the reference writes null).
    document = record.get("doc_id")
    if document not in (None, ""):
        document = json_id(document, MAX_ID_CHARS, path=path, line=line, field="doc_id")
    named = record.get("nugget_id") or record.get("question")
    if not isinstance(named, str) or not named.strip():
        raise ImportFailure("missing: give nugget_id or question", path=path, line=line, field="nugget_id")
    return GradeLine(
        line=line,
        run_id=required_json_id(record, "run_id", MAX_ID_CHARS, path=path, line=line),
        topic_id=ids.key(
            required_json_id(record, "query_id", MAX_TOPIC_ID_CHARS, path=path, line=line, whole_numbers=True),
            path=path,
            line=line,
            field="query_id",
        ),
        question=named.strip(),
        grade=grade,
        confidence=confidence,
        reasoning=reasoning,
        document=document or "",
    )


def grades_parse(path: Path) -> Iterator[GradeLine]:
    """The file's grades, each `query_id` as its topic's stored key in the campaign in effect."""
    ids = FileTopicIds()
    for line, record in read_jsonl(path):
        yield _grade_line(record, ids, path=path, line=line)


def grades_import(*, path: Path, name: str, bank: str, replace: bool = False, user: User | None = None) -> ImportResult:
    """The registry's `Importer.function` (the upload page and `import_grades`)."""
    return GradesImport(path=path, name=name, bank=bank, replace=replace, user=user).run()


GradeKey = tuple[int, int]  # (answer id, question id)


class GradesImport(LabelsImport[GradeLine, GradeKey, GradeLabel, ImportResult]):
    """A grade per report and question of a bank: a report's graded documents give the question's highest grade."""

    kind = IMPORT_GRADES
    chunk_size = None

    def __init__(self, *, name: str, bank: str, **common: Any) -> None:
        super().__init__(**common)
        self.name, self.bank = name, bank

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "bank": self.bank, "replace": self.replace}

    def start(self) -> None:
        if not self.name:
            raise ImportFailure("a grade source name is required", path=self.path, field="name")
        if not self.bank:
            raise ImportFailure("the bank the grades are on is required", path=self.path, field="bank")

    def parse(self) -> Iterator[GradeLine]:
        return grades_parse(self.path)

    def chunk_prepare(self, chunk: list[GradeLine]) -> None:
        self.topics = sorted({line.topic_id for line in chunk})
        banks = bank_questions(self.bank, self.topics)
        self.questions = {
            topic: {key: q.pk for q in asked for key in (q.question_id, q.text)} for topic, asked in banks.items()
        }
        answers = Answer.objects.filter(topic_id__in=self.topics)
        self.answers = {(run, topic): pk for pk, run, topic in answers.values_list("pk", "run__run_id", "topic_id")}
        self.runs = {run_id for run_id, _ in self.answers}
        self.aliases = run_aliases()
        self.source_id = import_source_claim(
            writes=self.writes, family=GRADES_FAMILY, name=self.name, user=self.user, path=self.path, option="name"
        )
        self.stored = {(g.answer_id, g.nugget_id): g for g in GradeLabel.objects.filter(source_id=self.source_id)}

    def keyed(self, chunk: list[GradeLine]) -> Iterator[tuple[GradeKey, GradeLine]]:
        """Every line resolved first: a report's question keeps its highest graded document's line."""
        best: dict[GradeKey, GradeLine] = {}
        for line in chunk:
            self.result.lines += 1
            key = self.resolve(line)
            kept = best.get(key)
            if kept is not None and not (line.document and kept.document):
                raise ImportFailure(
                    f"this report's question is graded on line {kept.line} already", path=self.path, line=line.line,
                    field="nugget_id",
                )  # fmt: skip
            if kept is None or line.grade > kept.grade:
                best[key] = line
            else:
                self.result.unchanged += 1
        return iter(best.items())

    def resolve(self, line: GradeLine) -> GradeKey:
        if line.topic_id not in self.questions:
            raise ImportFailure(
                f"topic {published_id(line.topic_id)!r} has no submitted bank {self.bank!r}", path=self.path, line=line.line,
                field="query_id",
            )  # fmt: skip
        try:
            run = run_match(line.run_id, self.runs, self.aliases)
        except AmbiguousRun as exc:
            raise ImportFailure(str(exc), path=self.path, line=line.line, field="run_id") from None
        answer = self.answers.get((run, line.topic_id)) if run is not None else None
        if answer is None:
            raise ImportFailure(
                f"no report of run {line.run_id!r} for topic {published_id(line.topic_id)!r}", path=self.path, line=line.line,
                field="run_id",
            )  # fmt: skip
        nugget = self.questions[line.topic_id].get(line.question)
        if nugget is None:
            raise ImportFailure(
                f"not a question of the bank {self.bank!r} of topic {published_id(line.topic_id)!r}", path=self.path,
                line=line.line, field="nugget_id",
            )  # fmt: skip
        return answer, nugget

    def same(self, stored: GradeLabel, line: GradeLine) -> bool:
        return stored.label == line.grade

    def conflict(self, stored: GradeLabel, line: GradeLine) -> ImportFailure:
        return ImportFailure(
            f"{self.name!r} holds another grade for this report's question; import with replace to change it",
            path=self.path,
            line=line.line,
            field="grade",
        )

    def write(self, changes: Changes[GradeKey, GradeLine, GradeLabel]) -> None:
        for label, line in changes.changed.values():
            label.label, label.imported_from = line.grade, self.batch
        self.writes.update(changes.changed_rows(), ["label", "imported_from"])
        self.writes.create(
            GradeLabel(
                source_id=self.source_id, topic_id=line.topic_id, answer_id=answer, nugget_id=nugget,
                label=line.grade, confidence=line.confidence, reasoning=line.reasoning, document=line.document,
                imported_from=self.batch,
            )
            for (answer, nugget), line in changes.new.items()
        )  # fmt: skip
        self.writes.scores_touch(family=SCORE_FAMILY, columns=(self.name,), topics=set(self.topics))


def grade_lines(*, name: str) -> Iterator[str]:
    """A grade source's counted grades in the reference's layout, by topic, run and the bank's order."""
    rows = list(
        grades_counted(name)
        .order_by("topic_id", "answer__run__run_id", "nugget__position")
        .values_list(
            "answer_id", "answer__run__run_id", "topic_id", "nugget__text", "answer__text", "label", "reasoning", "confidence",
            "document", "document_grade",
        )
    )  # fmt: skip
    if not rows:
        raise LookupError(f"no counted grades under {name!r}")
    documents: dict[int, dict[str, str]] = {}  # a graded document's text, the passage its grade was given on
    for answer, run_id, topic_id, question, passage, grade, reasoning, confidence, document, document_grade in rows:
        combined = {}
        if document_grade is not None:  # the report's grade, its best document's beside it (keys the layout lacks)
            combined = {"document_id": document or None, "document_grade": document_grade}
            document = ""
        if document:
            if answer not in documents:
                documents[answer] = dict(cited_documents(answer))
            passage = documents[answer].get(document, "")
        record = {
            "run_id": run_id,
            "query_id": published_id(topic_id),
            "nugget_id": question_id(question),
            "question": question,
            "passage": passage,
            "doc_id": document or None,
            "paragraph_idx": None,
            "grade": grade,
            "reasoning": reasoning,
            "confidence": confidence,
            **combined,
        }
        yield json.dumps(record) + "\n"
