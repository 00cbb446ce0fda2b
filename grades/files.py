"""Grade files in the reference's layout (PrefNugget's `nugget-grades.jsonl`, its `NuggetGradeData`), both ways.

One JSON object a line: `run_id`, `query_id`, `nugget_id` (the AutoJudge question id, the md5 of the question's
text, or the question itself), `question`, `passage`, `grade` 0-5, `reasoning`, `confidence`, and for graded
documents `doc_id` (and `paragraph_idx`). A file's grades go into a file's grade source on a named bank: each
line's question must be one of the bank's questions of its topic. Lines of one report and question are
graded documents: the question's grade is the highest, as the reference aggregates them.
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
    Writes,
    import_file,
    integer_checked,
    json_id,
    optional_float,
    read_jsonl,
)
from assessor.models import Answer
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
    topic_id: str
    question: str  # nugget_id, else question
    grade: int
    confidence: float | None
    reasoning: str
    document: str


def _id(record: dict[str, Any], key: str, limit: int, *, path: Path, line: int) -> str:
    if record.get(key) is None:
        raise ImportFailure("missing", path=path, line=line, field=key)
    return json_id(record[key], limit, path=path, line=line, field=key, whole_numbers=key == "query_id")


def _grade_line(record: dict[str, Any], *, path: Path, line: int) -> GradeLine:
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
        run_id=_id(record, "run_id", MAX_ID_CHARS, path=path, line=line),
        topic_id=_id(record, "query_id", MAX_TOPIC_ID_CHARS, path=path, line=line),
        question=named.strip(),
        grade=grade,
        confidence=confidence,
        reasoning=reasoning,
        document=document or "",
    )


def grades_parse(path: Path) -> Iterator[GradeLine]:
    for line, record in read_jsonl(path):
        yield _grade_line(record, path=path, line=line)


def grades_import(*, path: Path, name: str, bank: str, replace: bool = False, user: User | None = None) -> ImportResult:
    """The registry's `Importer.function` (the upload page and `import_grades`)."""
    path = Path(path)
    return import_file(
        lambda writes: _prepare(writes, path=path, name=name, bank=bank, replace=replace, user=user),
        kind=IMPORT_GRADES,
        path=path,
        options={"name": name, "bank": bank, "replace": replace},
        user=user,
    )


def _prepare(writes: Writes, *, path: Path, name: str, bank: str, replace: bool, user: User | None) -> ImportResult:
    if not name:
        raise ImportFailure("a grade source name is required", path=path, field="name")
    if not bank:
        raise ImportFailure("the bank the grades are on is required", path=path, field="bank")
    lines = list(grades_parse(path))
    topics = sorted({line.topic_id for line in lines})
    banks = bank_questions(bank, topics)
    questions = {topic: {key: q.pk for q in asked for key in (q.question_id, q.text)} for topic, asked in banks.items()}
    answers = {
        (run_id, topic_id): pk
        for pk, run_id, topic_id in Answer.objects.filter(topic_id__in=topics).values_list(
            "pk", "run__run_id", "topic_id"
        )
    }
    runs = {run_id for run_id, _ in answers}
    aliases = run_aliases()
    source_id = import_source_claim(writes=writes, family=GRADES_FAMILY, name=name, user=user, path=path, option="name")
    result = ImportResult(path=str(path))
    best: dict[tuple[int, int], tuple[GradeLine, str]] = {}  # (answer, question) -> its highest line, its topic
    for line in lines:
        result.lines += 1
        if line.topic_id not in questions:
            raise ImportFailure(
                f"topic {line.topic_id!r} has no submitted bank {bank!r}", path=path, line=line.line, field="query_id"
            )
        try:
            run = run_match(line.run_id, runs, aliases)
        except AmbiguousRun as exc:
            raise ImportFailure(str(exc), path=path, line=line.line, field="run_id") from None
        answer = answers.get((run, line.topic_id)) if run is not None else None
        if answer is None:
            raise ImportFailure(
                f"no report of run {line.run_id!r} for topic {line.topic_id!r}",
                path=path,
                line=line.line,
                field="run_id",
            )
        nugget = questions[line.topic_id].get(line.question)
        if nugget is None:
            raise ImportFailure(
                f"not a question of the bank {bank!r} of topic {line.topic_id!r}",
                path=path,
                line=line.line,
                field="nugget_id",
            )
        kept = best.get((answer, nugget))
        if kept is not None and not (line.document and kept[0].document):
            raise ImportFailure(
                f"this report's question is graded on line {kept[0].line} already", path=path, line=line.line,
                field="nugget_id",
            )  # fmt: skip
        if kept is None or line.grade > kept[0].grade:
            best[(answer, nugget)] = (line, line.topic_id)
        else:
            result.unchanged += 1
    stored = {(g.answer_id, g.nugget_id): g for g in GradeLabel.objects.filter(source_id=source_id)}
    new, changed = [], []
    for (answer, nugget), (line, topic_id) in best.items():
        existing = stored.get((answer, nugget))
        if existing is None:
            new.append(
                GradeLabel(
                    source_id=source_id,
                    topic_id=topic_id,
                    answer_id=answer,
                    nugget_id=nugget,
                    label=line.grade,
                    confidence=line.confidence,
                    reasoning=line.reasoning,
                    document=line.document,
                    imported_from=writes.batch,
                )
            )
        elif existing.label == line.grade:
            result.unchanged += 1
        elif replace and existing.imported_from_id is not None:
            existing.label, existing.imported_from = line.grade, writes.batch
            changed.append(existing)
        else:
            raise ImportFailure(
                f"{name!r} holds another grade for this report's question; import with replace to change it",
                path=path,
                line=line.line,
                field="grade",
            )
    writes.update(changed, ["label", "imported_from"])
    writes.create(new)
    writes.scores_touch(family=SCORE_FAMILY, columns=(name,), topics=set(topics))
    result.created, result.replaced = len(new), len(changed)
    return result


def grade_lines(*, name: str) -> Iterator[str]:
    """A grade source's counted grades in the reference's layout, by topic, run and the bank's order."""
    rows = list(
        grades_counted(name)
        .order_by("topic_id", "answer__run__run_id", "nugget__position")
        .values_list(
            "answer_id", "answer__run__run_id", "topic_id", "nugget__text", "answer__text", "label", "reasoning", "confidence",
            "document",
        )
    )  # fmt: skip
    if not rows:
        raise LookupError(f"no counted grades under {name!r}")
    documents: dict[int, dict[str, str]] = {}  # a graded document's text, the passage its grade was given on
    for answer, run_id, topic_id, question, passage, grade, reasoning, confidence, document in rows:
        if document:
            if answer not in documents:
                documents[answer] = dict(cited_documents(answer))
            passage = documents[answer].get(document, "")
        record = {
            "run_id": run_id,
            "query_id": topic_id,
            "nugget_id": question_id(question),
            "question": question,
            "passage": passage,
            "doc_id": document or None,
            "paragraph_idx": None,
            "grade": grade,
            "reasoning": reasoning,
            "confidence": confidence,
        }
        yield json.dumps(record) + "\n"
