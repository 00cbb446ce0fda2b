"""ARGUE-style judgments in from a file: the JSONL `export_argue` writes (argue.exporting), one judged report a line.

    {"run_id", "topic_id",
     "sentences": [{"index",
                    "citations": [{"docid", "supports": "yes"|"no"}],
                    "answers": [{"question_id", "answer_index", "agrees": "yes"|"no"}],
                    "needs_citation": "yes"|"no"|"", "first_instance": "yes"|"no"|"", "negative": "yes"|"no"|""}]}

A file's judgments go into a file's ARGUE-style source on a named bank, through the project's one import
pipeline (assessor.importing.pipeline): a bad line is refused by file, line and field, and nothing is written.
Each line's report must be stored (its run, or an alias, on its topic), its topic must have the bank, each
sentence must be one of the report's kept sentences (the request's limit cuts the rest), each citation one of
the sentence's (the n-th judgment of a document, its n-th citation of it), each question one of the bank's
(`question_id`: the md5 of its text, or the text) with that answer, and the uncited checks only of a sentence
citing nothing. A sentence or citation the file leaves out is not judged (scored as no). As `export_argue`
writes no options, the report is recorded as judged with every gold answer (`check_all`) where the file judges
an answer a citing sentence's documents would not have asked, and with negative assertions where it says
whether a sentence is one.
"""

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from argue.cut import sentences_kept
from argue.kinds import ARGUE_FAMILY, IMPORT_ARGUE, SCORE_FAMILY
from argue.metrics import answers_to_check, bank_as_scored
from argue.models import AnswerAttestation, JudgedReport, SentenceCheck, SupportAttestation, UncitedAttestation
from assessor.collection.runs import AmbiguousRun, run_aliases, run_match
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    integer_checked,
    json_id,
    read_jsonl,
    required_json_id,
)
from assessor.importing.pipeline import Changes, LabelsImport
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import Answer, Citation, Sentence
from assessor.models.keys import published_id
from assessor.sources import import_source_claim
from nuggets.banks import Question, bank_questions

CHECKS = (SentenceCheck.NEEDS_CITATION, SentenceCheck.FIRST_INSTANCE, SentenceCheck.NEGATIVE)
MAX_SENTENCE_INDEX = 100_000
MAX_ANSWER_INDEX = 10_000


@dataclass(frozen=True)
class SentenceLine:
    index: int
    citations: tuple[tuple[str, str], ...]  # (docid, yes/no)
    answers: tuple[tuple[str, int, str], ...]  # (question id or text, answer index, yes/no)
    uncited: tuple[tuple[str, str], ...]  # (SentenceCheck, yes/no), the checks given


@dataclass(frozen=True)
class ArgueLine:
    line: int
    run_id: str
    topic_id: str  # the topic's stored key (the file's topic_id in the campaign in effect)
    sentences: tuple[SentenceLine, ...]


# --- reading ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Place:
    path: Path
    line: int

    def failure(self, message: str, field: str) -> ImportFailure:
        return ImportFailure(message, path=self.path, line=self.line, field=field)


def _list(value: Any, place: _Place, field: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise place.failure("expected a list", field)
    return value


def _object(value: Any, place: _Place, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise place.failure("expected an object", field)
    return value


def _yes_no(value: Any, place: _Place, field: str, *, blank: bool = False) -> str:
    if value in ("yes", "no") or (blank and value in ("", None)):
        return value or ""
    allowed = '"yes", "no" or ""' if blank else '"yes" or "no"'
    raise place.failure(f"expected {allowed}, got {value!r}", field)


def _sentence_line(record: Any, place: _Place, at: str) -> SentenceLine:
    record = _object(record, place, at)
    index = integer_checked(
        record.get("index"), 0, MAX_SENTENCE_INDEX, path=place.path, line=place.line, field=f"{at}.index"
    )
    citations = []
    for number, citation in enumerate(_list(record.get("citations"), place, f"{at}.citations")):
        here = f"{at}.citations[{number}]"
        citation = _object(citation, place, here)
        docid = json_id(citation.get("docid"), MAX_ID_CHARS, path=place.path, line=place.line, field=f"{here}.docid")
        citations.append((docid, _yes_no(citation.get("supports"), place, f"{here}.supports")))
    answers = []
    for number, answer in enumerate(_list(record.get("answers"), place, f"{at}.answers")):
        here = f"{at}.answers[{number}]"
        answer = _object(answer, place, here)
        question = answer.get("question_id")
        if not isinstance(question, str) or not question.strip():
            raise place.failure("missing: the question's id (or text)", f"{here}.question_id")
        position = integer_checked(
            answer.get("answer_index"), 0, MAX_ANSWER_INDEX, path=place.path, line=place.line,
            field=f"{here}.answer_index",
        )  # fmt: skip
        answers.append((question.strip(), position, _yes_no(answer.get("agrees"), place, f"{here}.agrees")))
    uncited = tuple(
        (str(check), said)
        for check in CHECKS
        if (said := _yes_no(record.get(str(check)), place, f"{at}.{check}", blank=True))
    )
    return SentenceLine(index, tuple(citations), tuple(answers), uncited)


def argue_line(record: dict[str, Any], ids: FileTopicIds, *, path: Path, line: int) -> ArgueLine:
    place = _Place(path, line)
    sentences = tuple(
        _sentence_line(sentence, place, f"sentences[{number}]")
        for number, sentence in enumerate(_list(record.get("sentences"), place, "sentences"))
    )
    indices = [sentence.index for sentence in sentences]
    if len(set(indices)) != len(indices):
        repeated = next(index for index in indices if indices.count(index) > 1)
        raise place.failure(f"sentence {repeated} is judged twice", "sentences")
    return ArgueLine(
        line=line,
        run_id=required_json_id(record, "run_id", MAX_ID_CHARS, path=path, line=line),
        topic_id=ids.key(
            required_json_id(record, "topic_id", MAX_TOPIC_ID_CHARS, path=path, line=line, whole_numbers=True),
            path=path,
            line=line,
            field="topic_id",
        ),
        sentences=sentences,
    )


def argue_parse(path: Path) -> Iterator[ArgueLine]:
    """The file's judged reports, each `topic_id` as its topic's stored key in the campaign in effect."""
    ids = FileTopicIds()
    for line, record in read_jsonl(path):
        yield argue_line(record, ids, path=path, line=line)


# --- a report resolved --------------------------------------------------------------------------------------


@dataclass
class Resolved:
    """A line's judgments by stored ids: what the report's rows will hold."""

    kept: int
    questions: list[int]
    check_all: bool = False
    negatives: bool = False
    supports: dict[int, str] = field(default_factory=dict)  # citation id -> label
    agrees: dict[tuple[int, int, int], str] = field(default_factory=dict)  # (sentence, question, answer) -> label
    uncited: dict[tuple[int, str], str] = field(default_factory=dict)  # (sentence, check) -> label

    def same_as(self, other: "Resolved") -> bool:
        return (self.kept, self.check_all, self.negatives, self.supports, self.agrees, self.uncited) == (
            other.kept,
            other.check_all,
            other.negatives,
            other.supports,
            other.agrees,
            other.uncited,
        )


@dataclass(frozen=True)
class _Report:
    """A stored report as a line is resolved against it."""

    answer_id: int
    sentences: list[tuple[int, str]]  # (sentence id, text), in order
    cited: dict[int, list[tuple[int, str]]]  # sentence id -> (citation id, docid), in order


def _citations_resolved(sentence: SentenceLine, cited: list[tuple[int, str]], place: _Place, at: str) -> dict[int, str]:
    """The n-th judgment of a document in the line is of the sentence's n-th citation of it."""
    unused = list(cited)
    supports: dict[int, str] = {}
    for number, (docid, label) in enumerate(sentence.citations):
        match = next((one for one in unused if one[1] == docid), None)
        if match is None:
            raise place.failure(f"the sentence does not cite {docid!r} (again)", f"{at}.citations[{number}].docid")
        unused.remove(match)
        supports[match[0]] = label
    return supports


def _question_of(questions: list[Question], named: str) -> int | None:
    return next((index for index, q in enumerate(questions) if named in (q.question_id, q.text)), None)


def _answers_resolved(
    sentence: SentenceLine, sentence_id: int, questions: list[Question], place: _Place, at: str
) -> dict[tuple[int, int, int], str]:
    agrees: dict[tuple[int, int, int], str] = {}
    for number, (named, position, label) in enumerate(sentence.answers):
        here = f"{at}.answers[{number}]"
        index = _question_of(questions, named)
        if index is None:
            raise place.failure("not a question of the bank on this topic", f"{here}.question_id")
        question = questions[index]
        if position >= len(question.answers):
            raise place.failure(f"the question has {len(question.answers)} gold answer(s)", f"{here}.answer_index")
        key = (sentence_id, question.pk or 0, position)
        if key in agrees:
            raise place.failure("this gold answer is judged twice for the sentence", here)
        agrees[key] = label
    return agrees


def report_resolved(line: ArgueLine, report: _Report, questions: list[Question], *, place: _Place) -> Resolved:
    kept = sentences_kept(topic_id=line.topic_id, texts=[text for _, text in report.sentences])
    bank = bank_as_scored(questions)
    resolved = Resolved(kept=kept, questions=[q.pk for q in questions if q.pk is not None])
    for number, sentence in enumerate(line.sentences):
        at = f"sentences[{number}]"
        if sentence.index >= kept:
            raise place.failure(
                f"the report has {kept} sentence(s) kept by its request's limit (of {len(report.sentences)})",
                f"{at}.index",
            )
        sentence_id = report.sentences[sentence.index][0]
        cited = report.cited.get(sentence_id, [])
        if cited and sentence.uncited:
            raise place.failure("a sentence that cites documents is not asked this", f"{at}.{sentence.uncited[0][0]}")
        resolved.supports.update(_citations_resolved(sentence, cited, place, at))
        agrees = _answers_resolved(sentence, sentence_id, questions, place, at)
        resolved.agrees.update(agrees)
        gated = {(questions[q].pk, a) for q, a in answers_to_check([docid for _, docid in cited], bank)}
        resolved.check_all |= bool(cited) and any((q, a) not in gated for _, q, a in agrees)
        resolved.negatives |= any(check == SentenceCheck.NEGATIVE for check, _ in sentence.uncited)
        resolved.uncited.update(((sentence_id, check), said) for check, said in sentence.uncited)
    return resolved


# --- the import -------------------------------------------------------------------------------------------


def argue_import(*, path: Path, name: str, bank: str, replace: bool = False, user: User | None = None) -> ImportResult:
    """The registry's `Importer.function` (the upload page and `import_argue`)."""
    return ArgueImport(path=path, name=name, bank=bank, replace=replace, user=user).run()


class ArgueImport(LabelsImport[ArgueLine, int, JudgedReport, ImportResult]):
    """One judged report a line, keyed by the stored report; a report's judgments are compared and replaced whole."""

    kind = IMPORT_ARGUE

    def __init__(self, *, name: str, bank: str, **common: Any) -> None:
        super().__init__(**common)
        self.name, self.bank = name, bank
        self.topics: set[str] = set()

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "bank": self.bank, "replace": self.replace}

    def start(self) -> None:
        if not self.name:
            raise ImportFailure("an ARGUE-style source name is required", path=self.path, field="name")
        if not self.bank:
            raise ImportFailure("the bank the judgments are on is required", path=self.path, field="bank")
        self.source_id = import_source_claim(
            writes=self.writes, family=ARGUE_FAMILY, name=self.name, user=self.user, path=self.path, option="name"
        )
        self.aliases = run_aliases()

    def parse(self) -> Iterator[ArgueLine]:
        return argue_parse(self.path)

    def chunk_prepare(self, chunk: list[ArgueLine]) -> None:
        topics = sorted({line.topic_id for line in chunk})
        self.questions = bank_questions(self.bank, topics)
        answers = Answer.objects.filter(topic_id__in=topics)
        self.answers = {(run, topic): pk for pk, run, topic in answers.values_list("pk", "run__run_id", "topic_id")}
        self.runs = {run_id for run_id, _ in self.answers}
        self.reports = _reports(list(self.answers.values()))
        self.resolved: dict[int, Resolved] = {}
        self.stored = {
            report.answer_id: report
            for report in JudgedReport.objects.filter(source_id=self.source_id, answer_id__in=self.answers.values())
        }
        self.stored_judged = _stored_judgments(self.source_id, list(self.stored))

    def resolve(self, line: ArgueLine) -> int:
        place = _Place(self.path, line.line)
        if line.topic_id not in self.questions:
            raise place.failure(
                f"topic {published_id(line.topic_id)!r} has no submitted bank {self.bank!r}", "topic_id"
            )
        try:
            run = run_match(line.run_id, self.runs, self.aliases)
        except AmbiguousRun as exc:
            raise place.failure(str(exc), "run_id") from None
        answer = self.answers.get((run, line.topic_id)) if run is not None else None
        if answer is None:
            raise place.failure(f"no report of run {line.run_id!r} for topic {published_id(line.topic_id)!r}", "run_id")
        self.resolved[line.line] = report_resolved(
            line, self.reports[answer], self.questions[line.topic_id], place=place
        )
        self.topics.add(line.topic_id)
        return answer

    def same(self, stored: JudgedReport, line: ArgueLine) -> bool:
        judged = self.stored_judged[stored.answer_id]
        judged.kept, judged.check_all, judged.negatives = stored.kept, stored.check_all, stored.negatives
        return self.resolved[line.line].same_as(judged)

    def conflict(self, stored: JudgedReport, line: ArgueLine) -> ImportFailure:
        return ImportFailure(
            f"{self.name!r} holds other judgments of this report; import with replace to change them",
            path=self.path,
            line=line.line,
            field="sentences",
        )

    def repeated(self, first: ArgueLine, line: ArgueLine, *, first_new: bool) -> None:
        raise ImportFailure(f"this report is judged on line {first.line} already", path=self.path, line=line.line)

    def write(self, changes: Changes[int, ArgueLine, JudgedReport]) -> None:
        """A changed report keeps its row, its options updated; its judgments are replaced whole."""
        for model, rows in _judgment_rows(self.source_id, list(changes.changed)).items():
            self.writes.delete(model, rows)
        for stored, line in changes.changed.values():
            resolved = self.resolved[line.line]
            stored.kept, stored.check_all, stored.negatives = resolved.kept, resolved.check_all, resolved.negatives
            stored.questions, stored.imported_from = resolved.questions, self.batch
        self.writes.update(changes.changed_rows(), ["kept", "check_all", "negatives", "questions", "imported_from"])
        self.writes.create(
            JudgedReport(
                answer_id=answer_id, bank=self.bank, kept=self.resolved[line.line].kept,
                check_all=self.resolved[line.line].check_all, negatives=self.resolved[line.line].negatives,
                questions=self.resolved[line.line].questions, source_id=self.source_id, imported_from=self.batch,
            )
            for answer_id, line in changes.new.items()
        )  # fmt: skip
        lines = {**changes.new, **{key: line for key, (_, line) in changes.changed.items()}}
        for line in lines.values():
            self._judgments_write(self.resolved[line.line])
        self.writes.scores_touch(family=SCORE_FAMILY, columns=(self.name,), topics=set(self.topics))

    def _judgments_write(self, resolved: Resolved) -> None:
        made = {"source_id": self.source_id, "imported_from": self.batch}
        self.writes.create(
            SupportAttestation(citation_id=citation, label=label, **made)
            for citation, label in resolved.supports.items()
        )
        self.writes.create(
            AnswerAttestation(sentence_id=s, question_id=q, answer_index=a, label=label, **made)
            for (s, q, a), label in resolved.agrees.items()
        )
        self.writes.create(
            UncitedAttestation(sentence_id=s, asked=asked, label=label, **made)
            for (s, asked), label in resolved.uncited.items()
        )


def _reports(answer_ids: list[int]) -> dict[int, _Report]:
    sentences: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for pk, answer_id, text in (
        Sentence.objects.filter(answer_id__in=answer_ids)
        .order_by("answer_id", "index")
        .values_list("pk", "answer_id", "text")
    ):
        sentences[answer_id].append((pk, text))
    cited: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for sentence_id, pk, docid in (
        Citation.objects.filter(sentence__answer_id__in=answer_ids)
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "pk", "segment_id")
    ):
        cited[sentence_id].append((pk, docid))
    return {answer_id: _Report(answer_id, sentences[answer_id], cited) for answer_id in answer_ids}


def _stored_judgments(source_id: int, answer_ids: list[int]) -> dict[int, Resolved]:
    """The source's judgments of these reports, as a line resolves to them."""
    judged = {answer_id: Resolved(kept=0, questions=[]) for answer_id in answer_ids}
    for answer_id, citation, label in SupportAttestation.objects.filter(
        source_id=source_id, citation__sentence__answer_id__in=answer_ids
    ).values_list("citation__sentence__answer_id", "citation_id", "label"):
        judged[answer_id].supports[citation] = label
    for answer_id, s, q, a, label in AnswerAttestation.objects.filter(
        source_id=source_id, sentence__answer_id__in=answer_ids
    ).values_list("sentence__answer_id", "sentence_id", "question_id", "answer_index", "label"):
        judged[answer_id].agrees[(s, q, a)] = label
    for answer_id, s, asked, label in UncitedAttestation.objects.filter(
        source_id=source_id, sentence__answer_id__in=answer_ids
    ).values_list("sentence__answer_id", "sentence_id", "asked", "label"):
        judged[answer_id].uncited[(s, asked)] = label
    return judged


def _judgment_rows(source_id: int, answer_ids: list[int]) -> dict[type, list[int]]:
    """The primary keys of the source's judgments of these reports, by table."""
    return {
        SupportAttestation: list(
            SupportAttestation.objects.filter(
                source_id=source_id, citation__sentence__answer_id__in=answer_ids
            ).values_list("pk", flat=True)
        ),
        AnswerAttestation: list(
            AnswerAttestation.objects.filter(source_id=source_id, sentence__answer_id__in=answer_ids).values_list(
                "pk", flat=True
            )
        ),
        UncitedAttestation: list(
            UncitedAttestation.objects.filter(source_id=source_id, sentence__answer_id__in=answer_ids).values_list(
                "pk", flat=True
            )
        ),
    }
