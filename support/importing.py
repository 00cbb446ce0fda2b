"""Support judgment files: one answer a line, its sentences, their citations and support labels.

`{"topic_id", "run_id", "sentences": [{"sentenceID", "text",
   "citations": [{"citationID", "reference": docid, "support": "2"|"1"|"0"|"-1"}]}]}`

NIST's TREC 2024 RAG format (`final.citation_judgments_*.jsonl`), and the
variant seen in other exports: `sentenceId`/`citationId` keys, several
citations per sentence, "-1" for a citation that was not judged. Only the
first citation of a sentence counts in the metrics; the others are kept.

The answers, sentences and citations a file names are matched with stored
ones (from a run file, a nugget assignment file or another support file) or
made; docs/formats-judgments.md gives the rules.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import connection

from assessor.collection.importing.answers import (
    AnswerKey,
    JudgmentsImport,
    JudgmentsImportResult,
    id_field,
    json_type,
    maker_kind_check,
    same_modulo_whitespace,
    sentences_fit,
    slug_check,
    text_field,
    words_count,
)
from assessor.collection.importing.segments import segment_placeholders_create
from assessor.importing.base import (
    MAX_ANSWER_CHARS,
    MAX_ID_CHARS,
    MAX_STORED_INTEGER,
    ImportFailure,
    id_checked,
    in_batches,
    integer_checked,
    limited,
    read_jsonl,
    require,
)
from assessor.importing.staging import deletion_counts
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import Answer, Citation, Sentence
from assessor.models.keys import published_id
from assessor.sources import import_source_claim
from support.kinds import IMPORT_SUPPORT, LABEL_FAMILY
from support.models import SupportLabel

TOPIC_FIELDS = ("topic_id", "qid")
SUPPORT_VALUES = {"-1": -1, "0": 0, "1": 1, "2": 2}
SENTENCE_ID_KEYS = ("sentenceID", "sentenceId", "sentence_id")
CITATION_ID_KEYS = ("citationID", "citationId", "citation_id")
CHUNK_ANSWERS = 500
SCORE_FAMILY = "methods"  # the score family of the support methods (support.parts)
LABEL_COLUMNS = ("citation", "method", "method_kind", "source", "label", "imported_from", "created_at")


@dataclass(frozen=True)
class CitationLine:
    docid: str
    support: int | None  # None: the file gives no support value for it


@dataclass(frozen=True)
class SentenceLine:
    text: str | None  # None: the file lost the text (NaN or null in NIST's export)
    citations: tuple[CitationLine, ...]


@dataclass(frozen=True)
class JudgedAnswer:
    line: int
    topic_id: str
    run_id: str
    sentences: tuple[SentenceLine, ...]

    @property
    def text(self) -> str:
        return " ".join(sentence.text or "" for sentence in self.sentences)


# A label to write: the citation it is on (stored, or made now), the label, its line and its field.
PendingLabel = tuple[Citation | int, int, JudgedAnswer, str]


def _support_value(raw: Any, *, path: Path, line: int, where: str) -> int | None:
    if raw is None:
        return None
    key = str(raw) if isinstance(raw, int) and not isinstance(raw, bool) else raw
    if key not in SUPPORT_VALUES:
        raise ImportFailure(
            f'{raw!r} is not a support value ("2" full, "1" partial, "0" none, "-1" not judged)',
            path=path,
            line=line,
            field=where,
        )
    return SUPPORT_VALUES[key]


def _id_value(raw: dict[str, Any], keys: tuple[str, ...], *, path: Path, line: int, where: str) -> int | None:
    """A sentence or citation id, if the file gives one; only checked, since order defines position."""
    key = next((key for key in keys if key in raw), None)
    if key is None:
        return None
    # A JSON whole number, as every number in a file (not "3", which int() would read however long it is).
    return integer_checked(raw[key], 0, MAX_STORED_INTEGER, path=path, line=line, field=f"{where}.{key}")


def _parse_citation(raw: Any, where: str, *, path: Path, line: int) -> CitationLine:
    if not isinstance(raw, dict):
        raise ImportFailure(f"expected an object, got {json_type(raw)}", path=path, line=line, field=where)
    _id_value(raw, CITATION_ID_KEYS, path=path, line=line, where=where)
    docid = text_field(raw, "reference", limit=MAX_ID_CHARS, path=path, line=line, where=where, strip=False)
    id_checked(docid, MAX_ID_CHARS, path=path, line=line, field=f"{where}.reference")
    support = _support_value(raw.get("support"), path=path, line=line, where=f"{where}.support")
    return CitationLine(docid=docid, support=support)


def _parse_sentence(
    raw: Any, index: int, *, path: Path, line: int, previous_id: int | None
) -> tuple[SentenceLine, int | None]:
    where = f"sentences[{index}]"
    if not isinstance(raw, dict):
        raise ImportFailure(f"expected an object, got {json_type(raw)}", path=path, line=line, field=where)
    sentence_id = _id_value(raw, SENTENCE_ID_KEYS, path=path, line=line, where=where)
    if sentence_id is not None and previous_id is not None and sentence_id <= previous_id:
        raise ImportFailure(
            f"sentence ids must increase (this is {sentence_id}, the one before is {previous_id})",
            path=path,
            line=line,
            field=where,
        )
    if "text" not in raw:
        raise ImportFailure("missing", path=path, line=line, field=f"{where}.text")
    text = raw["text"]
    if isinstance(text, float) and text != text or text is None:
        text = None  # NIST's export holds NaN where a sentence's text was lost
    elif not isinstance(text, str):
        raise ImportFailure(f"expected a string, got {json_type(text)}", path=path, line=line, field=f"{where}.text")
    else:
        limited(text, MAX_ANSWER_CHARS, path=path, line=line, field=f"{where}.text")
    citations = raw.get("citations") or []
    if not isinstance(citations, list):
        raise ImportFailure(
            f"expected a list, got {json_type(citations)}", path=path, line=line, field=f"{where}.citations"
        )
    parsed = tuple(
        _parse_citation(citation, f"{where}.citations[{position}]", path=path, line=line)
        for position, citation in enumerate(citations)
    )
    return SentenceLine(text=text, citations=parsed), sentence_id


def _parse_answer(record: dict[str, Any], *, path: Path, line: int, topic_ids: FileTopicIds) -> JudgedAnswer:
    """One line's answer, its topic as the stored key in the campaign in effect."""
    topic_id = id_field(record, TOPIC_FIELDS, path=path, line=line)
    topic_id = topic_ids.record_key(record, TOPIC_FIELDS, topic_id, path=path, line=line)
    run_id = text_field(record, "run_id", limit=MAX_ID_CHARS, path=path, line=line, strip=False)
    id_checked(run_id, MAX_ID_CHARS, path=path, line=line, field="run_id")
    raw_sentences = require(record, "sentences", list, path=path, line=line)
    sentences = []
    previous_id = None
    for index, raw in enumerate(raw_sentences):
        sentence, sentence_id = _parse_sentence(raw, index, path=path, line=line, previous_id=previous_id)
        sentences.append(sentence)
        previous_id = sentence_id if sentence_id is not None else previous_id
    answer = JudgedAnswer(line=line, topic_id=topic_id, run_id=run_id, sentences=tuple(sentences))
    limited(answer.text, MAX_ANSWER_CHARS, path=path, line=line, field="sentences")
    return answer


def _parse_answers(path: Path) -> Iterator[JudgedAnswer]:
    topic_ids = FileTopicIds()
    for number, record in read_jsonl(path):
        yield _parse_answer(record, path=path, line=number, topic_ids=topic_ids)


@dataclass
class StoredSentence:
    id: int
    text: str
    # position -> (citation id, docid)
    citations: dict[int, tuple[int, str]] = field(default_factory=dict)


@dataclass
class Stored:
    """What a chunk's stored answers already hold: sentences, citations, this method's labels."""

    sentences: dict[int, list[StoredSentence]]  # answer id -> sentences by index
    labels: dict[int, tuple[int, int]]  # citation id -> (label id, label)


def _stored_parts(answer_ids: list[int], *, method: str) -> Stored:
    by_answer: dict[int, dict[int, StoredSentence]] = {answer_id: {} for answer_id in answer_ids}
    by_id: dict[int, StoredSentence] = {}
    labels: dict[int, tuple[int, int]] = {}
    for batch in in_batches(answer_ids):
        for answer_id, index, sentence_id, text in Sentence.objects.filter(answer_id__in=batch).values_list(
            "answer_id", "index", "id", "text"
        ):
            by_answer[answer_id][index] = by_id[sentence_id] = StoredSentence(id=sentence_id, text=text)
        for sentence_id, position, citation_id, docid in Citation.objects.filter(
            sentence__answer_id__in=batch
        ).values_list("sentence_id", "position", "id", "segment_id"):
            by_id[sentence_id].citations[position] = (citation_id, docid)
        # Filtered on the answers only, so that the database uses the citation index (see assignment.importing).
        for citation_id, label_id, label, label_method in SupportLabel.objects.filter(
            citation__sentence__answer_id__in=batch
        ).values_list("citation_id", "id", "label", "method"):
            if label_method == method:
                labels[citation_id] = (label_id, label)
    sentences = {answer_id: [indexed[index] for index in sorted(indexed)] for answer_id, indexed in by_answer.items()}
    return Stored(sentences=sentences, labels=labels)


def _sentences_difference(stored: list[StoredSentence], answer: JudgedAnswer) -> str | None:
    """The field where the file's sentences contradict the stored ones, or None."""
    if len(stored) != len(answer.sentences):
        return "sentences"
    for index, (old, new) in enumerate(zip(stored, answer.sentences, strict=False)):
        if new.text is not None and not same_modulo_whitespace(old.text, new.text):
            return f"sentences[{index}].text"
    return None


class SupportImport(JudgmentsImport[JudgedAnswer]):
    """A support file's answers: their sentences matched with the stored ones or made, then their citations' labels."""

    kind = IMPORT_SUPPORT
    chunk_size = CHUNK_ANSWERS

    def __init__(self, *, method: str, name: str, **common: Any) -> None:
        super().__init__(**common)
        self.method = method
        self.name = name

    def options(self) -> dict[str, Any]:
        return {"method": self.method, "name": self.name, "replace": self.replace}

    def check(self) -> None:
        _options_check(path=self.path, method=self.method, name=self.name)

    def start(self) -> None:
        super().start()
        self.source = import_source_claim(
            writes=self.writes, family=LABEL_FAMILY, name=self.name, user=self.user, path=self.path, option="--name"
        )

    def parse(self) -> Iterator[JudgedAnswer]:
        return _parse_answers(self.path)

    def chunk_import(self, chunk: list[JudgedAnswer]) -> None:
        keyed = self.answers_keyed(chunk, topic_field="topic_id")
        self.result.count_made(
            "placeholder segments",
            segment_placeholders_create(
                self.writes,
                (
                    citation.docid
                    for answer in chunk
                    for sentence in answer.sentences
                    for citation in sentence.citations
                ),
            ),
        )
        answers, made_answers = self.answers_made(keyed, text=lambda line: line.text)
        stored = _stored_parts([a.pk for key, a in answers.items() if key not in made_answers], method=self.name)
        for answer in made_answers.values():
            stored.sentences[answer.pk] = []
        new_keys = set(made_answers)
        self._sentences_store(keyed, answers, stored, new_keys)
        pending_labels = self._citations_store(keyed, answers, stored, new_keys)
        self.writes.scores_touch(family=SCORE_FAMILY, columns=(self.name,), topics=(line.topic_id for _, line in keyed))
        self._labels_write(pending_labels, stored.labels)

    def _sentences_store(
        self, keyed: list[tuple[AnswerKey, JudgedAnswer]], answers: dict[AnswerKey, Answer], stored: Stored,
        new_keys: set[AnswerKey],
    ) -> None:  # fmt: skip
        """Each answer's sentences: made where it has none, kept where they agree, replaced under --replace."""
        sentence_rows: list[Sentence] = []
        for key, line in keyed:
            answer = answers[key]
            old_sentences = stored.sentences[answer.pk]
            if not old_sentences:
                sentence_rows += self._sentences_new(answer, line, split_stored_text=key not in new_keys)
                continue
            where = _sentences_difference(old_sentences, line)
            if where is None:
                continue
            if not self.replace:
                raise ImportFailure(
                    f"the stored answer of run {line.run_id} for topic {published_id(line.topic_id)} has other sentences; "
                    "use --replace to change them",
                    path=self.path,
                    line=line.line,
                    field=where,
                )
            sentence_rows += self._sentences_replace(answer, line)
            # Other methods' labels on the old sentences go with them.
            self.writes.scores_touch_everywhere([line.topic_id])
            stored.sentences[answer.pk] = []
        made = self.writes.create(sentence_rows)
        self.result.count_made("sentences", len(made))
        for sentence in made:
            stored.sentences[sentence.answer_id].append(StoredSentence(id=sentence.pk, text=sentence.text))

    def _citations_store(
        self, keyed: list[tuple[AnswerKey, JudgedAnswer]], answers: dict[AnswerKey, Answer], stored: Stored,
        new_keys: set[AnswerKey],
    ) -> list[PendingLabel]:  # fmt: skip
        """Each sentence's citations matched with the stored ones or made; the labels they carry, to write."""
        citation_rows: list[Citation] = []
        cited_anew: set[str] = set()
        pending_labels: list[PendingLabel] = []
        for key, line in keyed:
            answer = answers[key]
            # In index order: stored ones were read sorted, new ones made in order.
            for index, (old, new) in enumerate(zip(stored.sentences[answer.pk], line.sentences, strict=False)):
                used: set[int] = set()
                for position, citation in enumerate(new.citations):
                    where = f"sentences[{index}].citations[{position}]"
                    target: Citation | int | None = self._citation_match(
                        old, citation, position, used, line=line, where=where
                    )
                    if target is None:
                        free = position if position not in old.citations else max(old.citations) + 1
                        target = Citation(sentence_id=old.id, position=free, segment_id=citation.docid)
                        old.citations[free] = (-1, citation.docid)  # taken, for the citations after it
                        citation_rows.append(target)
                        if key not in new_keys:
                            # A new citation in a stored answer may change what other methods' scores count there.
                            cited_anew.add(line.topic_id)
                    if citation.support is not None:
                        pending_labels.append((target, citation.support, line, f"{where}.support"))
        self.writes.create(citation_rows)
        self.result.count_made("citations", len(citation_rows))
        self.writes.scores_touch_everywhere(cited_anew)
        return pending_labels

    def _sentences_new(self, answer: Answer, line: JudgedAnswer, *, split_stored_text: bool) -> list[Sentence]:
        texts = [sentence.text for sentence in line.sentences]
        if split_stored_text:
            # An answer known by its text only (a nugget assignment file): the sentences split it,
            # and the text gives back those whose text NIST's export lost.
            fitted = sentences_fit(answer.text, texts)
            if fitted is None:
                self.result.warn(
                    "answer texts",
                    f"{self.path}, line {line.line}: the sentences differ from the stored text of the answer of run "
                    f"{line.run_id} for topic {published_id(line.topic_id)}; they are attached to it, its text is kept",
                )
            else:
                texts = list(fitted)
        for index, text in enumerate(texts):
            if text is None:
                self.result.warn(
                    "lost sentence texts",
                    f"{self.path}, line {line.line}: sentences[{index}].text is missing (NaN); stored as empty text",
                )
        return [Sentence(answer_id=answer.pk, index=index, text=text or "") for index, text in enumerate(texts)]

    def _sentences_replace(self, answer: Answer, line: JudgedAnswer) -> list[Sentence]:
        sentences = list(Sentence.objects.filter(answer_id=answer.pk).values_list("pk", flat=True))
        deleted = deletion_counts(Sentence, sentences)
        self.writes.delete(Sentence, sentences)
        labels = sum(
            number for model, number in deleted.items() if model not in ("assessor.Sentence", "assessor.Citation")
        )
        if labels:
            self.result.warn(
                "replaced sentences",
                f"{self.path}, line {line.line}: replacing the sentences of the answer of run {line.run_id} for topic "
                f"{published_id(line.topic_id)} deleted {labels} labels of their citations",
            )
        answer.text = line.text
        answer.words = words_count(line.text)
        answer.imported_from = self.batch
        self.writes.update([answer], ["text", "words", "imported_from"])
        self.result.replaced += 1
        return [Sentence(answer_id=answer.pk, index=index, text=s.text or "") for index, s in enumerate(line.sentences)]

    def _citation_match(
        self,
        sentence: StoredSentence,
        citation: CitationLine,
        position: int,
        used: set[int],
        *,
        line: JudgedAnswer,
        where: str,
    ) -> int | None:
        """The stored citation the file's citation is: same docid, at its position if possible."""
        at_position = sentence.citations.get(position)
        if at_position is not None and at_position[1] == citation.docid and at_position[0] not in used | {-1}:
            used.add(at_position[0])
            return at_position[0]
        for stored_position, (citation_id, docid) in sorted(sentence.citations.items()):
            if docid == citation.docid and citation_id not in used and citation_id != -1:
                used.add(citation_id)
                self.result.warn(
                    "citation order",
                    f"{self.path}, line {line.line}: {where} ({citation.docid}) is citation {stored_position} of the "
                    f"stored sentence, not {position}; its label is attached there"
                    + ("; the metrics judge a sentence's first citation" if position == 0 else ""),
                )
                return citation_id
        if at_position is not None:
            self.result.warn(
                "citation order",
                f"{self.path}, line {line.line}: {where} ({citation.docid}) is not among the stored sentence's "
                "citations; it is added after them",
            )
        return None

    def _labels_write(self, pending: list[PendingLabel], stored: dict[int, tuple[int, int]]) -> None:
        created_at = connection.ops.adapt_datetimefield_value(self.now)
        rows = []
        changed: list[tuple[int, int]] = []
        for target, label, line, where in pending:
            citation_id = target.pk if isinstance(target, Citation) else target
            old = stored.get(citation_id)
            if old is None:
                rows.append((citation_id, self.name, self.method, self.source, label, self.batch.pk, created_at))
                stored[citation_id] = (-1, label)  # a citation named twice in one file is caught below
            elif old[1] == label:
                if old[0] != -1:
                    self.result.unchanged += 1
            elif self.replace and old[0] != -1:
                changed.append((old[0], label))
            else:
                raise ImportFailure(
                    f"the method {self.name!r} has judged this citation {old[1]}, not {label}"
                    + ("; use --replace to change it" if old[0] != -1 else " (earlier in this file)"),
                    path=self.path,
                    line=line.line,
                    field=where,
                )
        self.writes.rows(SupportLabel, LABEL_COLUMNS, rows)
        self.labels_replaced(SupportLabel, changed)
        self.result.count_made("labels", len(rows))


def _options_check(*, path: Path, method: str, name: str) -> None:
    slug_check(name, option="--name", path=path)
    if method not in SupportLabel.MethodKind.values:
        raise ImportFailure(
            f"--method must be one of {', '.join(SupportLabel.MethodKind.values)}, not {method!r}", path=path
        )
    maker_kind_check(
        SupportLabel.objects.filter(method=name), kind_field="method_kind", kind=method,
        held=f"the support method {name!r}", option="--name", path=path,
    )  # fmt: skip


def support_import(
    *,
    path: Path,
    method: str,
    method_name: str | None = None,
    replace: bool = False,
    user: User | None = None,
) -> JudgmentsImportResult:
    method = str(method)
    name = str(method_name or method)
    return SupportImport(path=path, method=method, name=name, replace=replace, user=user).run()
