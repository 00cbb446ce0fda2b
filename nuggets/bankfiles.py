"""Question banks in the AutoJudge v3 `NuggetBanks` layout: what `import_banks` reads and `export_banks` writes.

One bank a line (autojudge_base's `NuggetBank`):
`{"query_id", "title_query"?, "format_version": "v3", "nugget_bank": {QUESTION: {...}} or [{...}],
"claim_bank"?, "creator"?}`; each question `{"question", "question_id"?, "answers"?: {ANSWER: {...}} or
[{...}], "aggregator_type"?: "OR"|"AND", "importance"?}`; each answer `{"answer", "references"?: [DOC_ID
or {"doc_id", ...}]}`.

What is read, and how (docs/banks.md, "The v3 layout"):
- `question_id`, where given, is the md5 of the question's text; a bank keyed by text has the text as key.
- `aggregator_type` OR or AND is the question's rule; absent, null or "Default" leaves it blank (open-ended);
  NOT and SUM are refused (the judging knows only any-answer and all-answers).
- `importance` "vital" or "okay" (any case), or a number as ARGUE weighs it: 2 vital, 1 okay; absent or null
  is blank; anything else is refused.
- A question or answer repeated in a bank is refused (the tools merge them silently; a bank here holds
  each once). `sub_nuggets` are refused; a `claim_bank` with claims is refused: fact nuggets come in the
  nuggetizer layout (`import_nuggets`).
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.importing.answers import (
    JudgmentsImportResult,
    id_field,
    json_type,
    text_field,
)
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_NUGGET_CHARS,
    ImportFailure,
    chunked,
    id_checked,
    number_shown,
    read_jsonl,
)
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import Topic
from assessor.models.keys import published_id
from nuggets.banks import QUESTIONS, Answer, Question, bank_sets, question_id
from nuggets.exporting import nuggets_notes
from nuggets.importing import NuggetSetsImport
from nuggets.kinds import IMPORT_BANKS
from nuggets.models import GoldAnswer, Nugget, NuggetSet
from nuggets.selectors import nugget_sets_counted_q
from nuggets.workspace import MAX_ANSWER_DOCUMENTS, MAX_ANSWERS

FORMAT_VERSION = "v3"
CHUNK_TOPICS = 500
MAX_ANSWER_CHARS = 2_000
RULES = {"OR": Nugget.AnswerRule.OR, "AND": Nugget.AnswerRule.AND}
BLANK_RULES = (None, "Default")
# ARGUE weighs a vital question 2 and an okay one 1: a numeric importance is read as that weight.
IMPORTANCE_WEIGHTS = {2: Nugget.Importance.VITAL, 1: Nugget.Importance.OKAY}


@dataclass(frozen=True)
class TopicBank:
    line: int
    topic_id: str
    questions: tuple[Question, ...]


# --- Reading ------------------------------------------------------------------


def _entries(raw: Any, *, key_field: str, where: str, path: Path, line: int) -> list[tuple[str, str | None, Any]]:
    """(field path, key or None, entry) of a dict keyed by text or of a list."""
    if isinstance(raw, dict):
        return [(f"{where}[{json.dumps(key, ensure_ascii=False)}]", key, entry) for key, entry in raw.items()]
    if isinstance(raw, list):
        return [(f"{where}[{index}]", None, entry) for index, entry in enumerate(raw)]
    raise ImportFailure(
        f"expected an object keyed by {key_field} or a list, got {json_type(raw)}", path=path, line=line, field=where
    )


def _importance(raw: Any, *, where: str, path: Path, line: int) -> str:
    if raw is None:
        return ""
    if isinstance(raw, str) and raw.strip().lower() in Nugget.Importance.values:
        return raw.strip().lower()
    # A weight is a JSON whole number, as every number in a file: not "2", 2.0 or true.
    if isinstance(raw, int) and not isinstance(raw, bool) and raw in IMPORTANCE_WEIGHTS:
        return IMPORTANCE_WEIGHTS[raw]
    shown = repr(raw) if isinstance(raw, str) else number_shown(raw)
    raise ImportFailure(
        f"{shown} is not an importance (vital or okay, or the weight 2 or 1)", path=path, line=line, field=where
    )


def _rule(raw: Any, *, where: str, path: Path, line: int) -> str:
    if raw in BLANK_RULES:
        return ""
    if isinstance(raw, str) and raw.upper() in RULES:
        return RULES[raw.upper()]
    raise ImportFailure(
        f"{raw!r} is not an aggregator this app judges by: OR (any answer) or AND (all answers), "
        "or none for an open-ended question",
        path=path,
        line=line,
        field=where,
    )


def _references(raw: Any, *, where: str, path: Path, line: int) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ImportFailure(f"expected a list, got {json_type(raw)}", path=path, line=line, field=where)
    documents: list[str] = []
    for index, reference in enumerate(raw):
        place = f"{where}[{index}]"
        if isinstance(reference, dict):
            place += ".doc_id"
            reference = reference.get("doc_id")
        if not isinstance(reference, str):
            raise ImportFailure(
                f"expected a document id (a string, or an object with doc_id), got {json_type(reference)}",
                path=path,
                line=line,
                field=place,
            )
        doc_id = id_checked(reference, MAX_ID_CHARS, path=path, line=line, field=place)
        if doc_id not in documents:
            documents.append(doc_id)
    if len(documents) > MAX_ANSWER_DOCUMENTS:
        raise ImportFailure(
            f"{len(documents)} documents: an answer cites at most {MAX_ANSWER_DOCUMENTS} (the bank workspace's cap)",
            path=path,
            line=line,
            field=where,
        )
    return tuple(documents)


def _answer(raw: Any, key: str | None, *, where: str, path: Path, line: int) -> Answer:
    if not isinstance(raw, dict):
        raise ImportFailure(f"expected an object, got {json_type(raw)}", path=path, line=line, field=where)
    text = text_field(raw, "answer", limit=MAX_ANSWER_CHARS, path=path, line=line, where=where)
    if key is not None and key.strip() != text:
        raise ImportFailure(
            "the key is not the answer's text (a v3 bank keys answers by their text)",
            path=path,
            line=line,
            field=f"{where}.answer",
        )
    documents = _references(raw.get("references"), where=f"{where}.references", path=path, line=line)
    return Answer(text=text, documents=documents)


def _question(raw: Any, key: str | None, *, where: str, path: Path, line: int) -> Question:
    if not isinstance(raw, dict):
        raise ImportFailure(f"expected an object, got {json_type(raw)}", path=path, line=line, field=where)
    text = text_field(raw, "question", limit=MAX_NUGGET_CHARS, path=path, line=line, where=where)
    if key is not None and key.strip() != text:
        raise ImportFailure(
            "the key is not the question's text (a v3 bank keys questions by their text)",
            path=path,
            line=line,
            field=f"{where}.question",
        )
    given_id = raw.get("question_id")
    if given_id is not None and given_id != question_id(text):
        raise ImportFailure(
            f"{given_id!r} is not the md5 of the question's text ({question_id(text)})",
            path=path,
            line=line,
            field=f"{where}.question_id",
        )
    if raw.get("sub_nuggets"):
        raise ImportFailure(
            "sub-questions are not supported: give each as a question of the bank",
            path=path,
            line=line,
            field=f"{where}.sub_nuggets",
        )
    answers: list[Answer] = []
    raw_answers = raw.get("answers")
    if raw_answers is not None:
        for place, answer_key, entry in _entries(
            raw_answers, key_field="answer text", where=f"{where}.answers", path=path, line=line
        ):
            answer = _answer(entry, answer_key, where=place, path=path, line=line)
            if any(known.text == answer.text for known in answers):
                raise ImportFailure("this answer is repeated in the question", path=path, line=line, field=place)
            answers.append(answer)
        if len(answers) > MAX_ANSWERS:
            raise ImportFailure(
                f"{len(answers)} answers: a question holds at most {MAX_ANSWERS} (the bank workspace's cap)",
                path=path,
                line=line,
                field=f"{where}.answers",
            )
    return Question(
        text=text,
        importance=_importance(raw.get("importance"), where=f"{where}.importance", path=path, line=line),
        rule=_rule(raw.get("aggregator_type"), where=f"{where}.aggregator_type", path=path, line=line),
        answers=tuple(answers),
    )


def _bank(record: dict[str, Any], *, path: Path, line: int, topic_ids: FileTopicIds) -> TopicBank:
    """One line's bank, its topic as the stored key in the campaign in effect."""
    topic_id = id_field(record, ("query_id",), path=path, line=line)
    topic_id = topic_ids.key(topic_id, path=path, line=line, field="query_id")
    version = record.get("format_version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise ImportFailure(
            f"{version!r} is not the v3 layout this reads", path=path, line=line, field="format_version"
        )
    if record.get("claim_bank"):
        raise ImportFailure(
            "a bank of claims (fact nuggets) is not a question bank: import fact nuggets in the nuggetizer "
            "layout (import_nuggets)",
            path=path,
            line=line,
            field="claim_bank",
        )
    if "nugget_bank" not in record:
        raise ImportFailure("missing", path=path, line=line, field="nugget_bank")
    questions: list[Question] = []
    raw = record["nugget_bank"] if record["nugget_bank"] is not None else {}
    for place, key, entry in _entries(raw, key_field="question text", where="nugget_bank", path=path, line=line):
        question = _question(entry, key, where=place, path=path, line=line)
        if any(known.text == question.text for known in questions):
            raise ImportFailure("this question is repeated in the bank", path=path, line=line, field=place)
        questions.append(question)
    return TopicBank(line=line, topic_id=topic_id, questions=tuple(questions))


def _banks(path: Path) -> Iterator[TopicBank]:
    first_line: dict[str, int] = {}
    topic_ids = FileTopicIds()
    for number, record in read_jsonl(path):
        bank = _bank(record, path=path, line=number, topic_ids=topic_ids)
        first = first_line.setdefault(bank.topic_id, number)
        if first != number:
            raise ImportFailure(
                f"topic {published_id(bank.topic_id)} repeated (first on line {first}); a file has one bank a topic",
                path=path,
                line=number,
                field="query_id",
            )
        yield bank


# --- Importing ----------------------------------------------------------------


def banks_import(
    *,
    path: Path,
    name: str,
    kind: str = NuggetSet.Kind.AUTO,
    replace: bool = False,
    retire_labels: bool = False,
    user: User | None = None,
) -> JudgmentsImportResult:
    """Each line becomes the bank `name` of its topic (a nugget set of form questions), all or nothing."""
    kind, name = str(kind or NuggetSet.Kind.AUTO), str(name)
    return BanksImport(path=path, name=name, kind=kind, replace=replace, retire_labels=retire_labels, user=user).run()


def _stored_questions(set_ids: list[int]) -> dict[int, tuple[Question, ...]]:
    answers: dict[int, list[Answer]] = {}
    for nugget_id, text, documents in (
        GoldAnswer.objects.filter(nugget__nugget_set_id__in=set_ids)
        .order_by("nugget_id", "position")
        .values_list("nugget_id", "text", "documents")
    ):
        answers.setdefault(nugget_id, []).append(Answer(text=text, documents=tuple(documents)))
    questions: dict[int, list[Question]] = {set_id: [] for set_id in set_ids}
    for pk, set_id, text, importance, rule in (
        Nugget.objects.filter(nugget_set_id__in=set_ids)
        .order_by("nugget_set_id", "position", "id")
        .values_list("pk", "nugget_set_id", "text", "importance", "answer_rule")
    ):
        questions[set_id].append(
            Question(text=text, importance=importance, rule=rule, answers=tuple(answers.get(pk, ())))
        )
    return {set_id: tuple(rows) for set_id, rows in questions.items()}


class BanksImport(NuggetSetsImport[TopicBank]):
    """Question banks in the v3 layout, with their gold answers; a bank being post-edited is not replaced."""

    kind = IMPORT_BANKS
    form = QUESTIONS
    made_what = "banks"
    topic_field = "query_id"
    replaced_fields = ("kind", "imported_from", "created_by", "job", "status", "version")

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.set_kind, "replace": self.replace}

    def parse(self) -> Iterator[TopicBank]:
        return _banks(self.path)

    def contents_stored(self, set_ids: list[int]) -> dict[int, tuple[Question, ...]]:
        return _stored_questions(set_ids)

    def same(self, stored: NuggetSet, line: TopicBank) -> bool:
        return self.contents[stored.pk] == line.questions and stored.kind == self.set_kind

    def form_conflict(self, line: TopicBank) -> ImportFailure:
        return ImportFailure(
            f"topic {published_id(line.topic_id)} has fact nuggets named {self.name!r}: choose another --name for the bank",
            path=self.path,
            line=line.line,
            field="query_id",
        )

    def conflict(self, stored: NuggetSet, line: TopicBank) -> ImportFailure:
        return ImportFailure(
            f"the bank {self.name!r} of topic {published_id(line.topic_id)} is stored with other questions or as another "
            "kind; use --replace to change it (or --name for another bank)",
            path=self.path,
            line=line.line,
            field="nugget_bank",
        )

    def set_replace(self, nugget_set: NuggetSet, line: TopicBank) -> None:
        edited = list(nugget_set.edited_sets.order_by("name").values_list("name", flat=True))
        if edited:
            raise ImportFailure(
                f"the bank {self.name!r} of topic {published_id(line.topic_id)} is being post-edited ({', '.join(edited)}): "
                "import the new bank under another --name",
                path=self.path,
                line=line.line,
                field="nugget_bank",
            )
        nugget_set.status = NuggetSet.Status.SUBMITTED
        super().set_replace(nugget_set, line)

    def contents_create(self) -> None:
        rows = [(nugget_set, question) for nugget_set, bank in self.to_fill for question in bank.questions]
        made = self.writes.create(
            Nugget(
                nugget_set=nugget_set, position=position, text=question.text, importance=question.importance,
                answer_rule=question.rule, imported_from=self.batch, created_at=self.now,
            )
            for nugget_set, bank in self.to_fill
            for position, question in enumerate(bank.questions)
        )  # fmt: skip
        self.result.count_made("questions", len(made))
        answers = self.writes.create(
            GoldAnswer(nugget=nugget, position=position, text=answer.text, documents=list(answer.documents))
            for nugget, (_, question) in zip(made, rows, strict=True)
            for position, answer in enumerate(question.answers)
        )
        self.result.count_made("gold answers", len(answers))

    def contents_count(self, line: TopicBank) -> int:
        return len(line.questions)

    def long_warning(self, line: TopicBank, count: int) -> tuple[str, str]:
        return (
            "long banks",
            f"{self.path}, line {line.line}: topic {published_id(line.topic_id)} has {count} questions, "
            f"more than PrefNugget's {NuggetSet.MAX_NUGGETS}",
        )


# --- Writing ------------------------------------------------------------------


def bank_names_require(*, name: str) -> None:
    """Raise LookupError, naming the banks that exist, unless some topic has a bank of this name."""
    if not NuggetSet.objects.filter(name=name, form=QUESTIONS).exists():
        known = ", ".join(sorted(set(NuggetSet.objects.filter(form=QUESTIONS).values_list("name", flat=True))))
        raise LookupError(f"no question banks named {name!r}; banks: {known or 'none'}")


def _creator(nugget_set: NuggetSet) -> list[dict[str, Any]] | None:
    """The v3 `creator` of a bank: the person who made it, or the job's model; a file's bank names none."""
    if nugget_set.created_by is not None:
        return [{"is_human": True, "assessor_id": nugget_set.created_by.username}]
    if nugget_set.job_id is not None:
        model = nugget_set.job.model if nugget_set.job is not None else ""
        return [{"is_human": False, **({"llm_model": model} if model else {})}]
    return None


def bank_record(*, topic: Topic, questions: list[Question], creator: list[dict[str, Any]] | None) -> dict[str, Any]:
    """One line of the v3 layout: the bank keyed by question text, each answer keyed by its text."""
    bank: dict[str, Any] = {}
    for question in questions:
        entry: dict[str, Any] = {
            "question": question.text,
            "question_id": question.question_id,
            "query_id": topic.published_id,
        }
        if question.answers:
            entry["answers"] = {
                answer.text: {"answer": answer.text, "references": [{"doc_id": doc} for doc in answer.documents]}
                for answer in question.answers
            }
        if question.rule:
            entry["aggregator_type"] = question.rule.upper()
        if question.importance:
            entry["importance"] = question.importance
        bank[question.text] = entry
    record: dict[str, Any] = {
        "query_id": topic.published_id,
        "title_query": topic.query,
        "format_version": FORMAT_VERSION,
        "nugget_bank": bank,
    }
    if creator:
        record["creator"] = creator
    return record


def banks_lines(*, name: str) -> Iterator[str]:
    """The banks named `name` that count (submitted, not drafted by a running job), one topic a line by id."""
    bank_names_require(name=name)
    sets = list(
        bank_sets(name, counted=False)
        .filter(nugget_sets_counted_q())
        .select_related("topic", "created_by", "job")
        .order_by("topic_id")
    )
    if not sets:
        raise LookupError(
            f"the banks named {name!r} are all still open (being edited, or drafted by a running job): "
            "nothing final to export; include open work to export them as they stand"
        )
    for chunk in chunked(sets, CHUNK_TOPICS):
        stored = _stored_questions([s.pk for s in chunk])
        for nugget_set in chunk:
            record = bank_record(
                topic=nugget_set.topic, questions=list(stored[nugget_set.pk]), creator=_creator(nugget_set)
            )
            yield json.dumps(record, ensure_ascii=False) + "\n"


def banks_notes(*, name: str) -> list[str]:
    """What keeps the export of the banks named `name` from being final: its open banks, by topic."""
    return nuggets_notes(name=name)
