"""Runs in the TREC RAG 2024 format, one answer per line.

`{"run_id", "topic_id", "topic", "references": [docid, ...], "response_length",
  "answer": [{"text", "citations": [reference index, ...]}, ...]}`

The track's rules are checked: a known topic whose text equals the topics
file's, at most 20 references, citations that index into them, one answer per
topic and run. Answers over 400 words break a rule too, but runs that did are
real data to evaluate, so they are imported with a warning.

Topics are named as the campaign's files give them and stored under their keys
(assessor.models.keys); runs are matched among the campaign's own, so a run
"baseline" of each of two campaigns is two runs.
"""

import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.importing.segments import segment_placeholders_create
from assessor.collection.kinds import RUN
from assessor.collection.runs import AmbiguousRun, RunResolver
from assessor.importing.base import (
    MAX_ANSWER_CHARS,
    MAX_ID_CHARS,
    MAX_QUERY_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    Writes,
    chunked,
    id_checked,
    in_batches,
    limited,
    read_jsonl,
    require,
)
from assessor.importing.pipeline import RecordImport
from assessor.importing.staging import deletion_counts
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import (
    Answer,
    AnswerReference,
    Citation,
    ImportBatch,
    Run,
    Sentence,
    Topic,
)
from assessor.models.keys import published_id
from assessor.models.scope import campaign_in_effect

# An answer's limits are its campaign's rules (Campaign.answer_reference_cap, answer_word_limit: TREC 2024 RAG's
# 20 references and 400 words); a campaign without a rule has no such limit.
# A run file has one line per topic: a few hundred lines make a chunk's worth of rows.
CHUNK_ANSWERS = 500


@dataclass(frozen=True)
class SentenceLine:
    text: str
    citations: tuple[int, ...]


@dataclass(frozen=True)
class AnswerLine:
    line: int
    run_id: str
    topic_id: str  # the topic's stored key (assessor.models.keys)
    topic: str
    references: tuple[str, ...]
    sentences: tuple[SentenceLine, ...]

    @property
    def text(self) -> str:
        return " ".join(sentence.text for sentence in self.sentences)


@dataclass(frozen=True)
class StoredCitation:
    pk: int
    position: int
    docid: str
    rank: int | None


@dataclass
class StoredSentence:
    pk: int
    text: str
    citations: list[StoredCitation] = field(default_factory=list)


@dataclass(frozen=True)
class StoredAnswer:
    answer: Answer
    references: tuple[str, ...]
    sentences: tuple[StoredSentence, ...]

    def shape(self) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[int | None, ...]], ...]]:
        return self.references, tuple(
            (sentence.text, tuple(citation.rank for citation in sentence.citations)) for sentence in self.sentences
        )


def words_nfkc(text: str) -> int:
    """The track's length rule: whitespace words after NFKC normalization."""
    return len(unicodedata.normalize("NFKC", text).split())


def _same_modulo_whitespace(a: str, b: str) -> bool:
    return a.split() == b.split()


def _parse_sentence(raw: Any, index: int, references: int, *, path: Path, line: int) -> SentenceLine:
    where = f"answer[{index}]"
    if not isinstance(raw, dict):
        raise ImportFailure(f"expected an object, got {type(raw).__name__}", path=path, line=line, field=where)
    if "text" not in raw:
        raise ImportFailure("missing", path=path, line=line, field=f"{where}.text")
    if not isinstance(raw["text"], str):
        raise ImportFailure(
            f"expected str, got {type(raw['text']).__name__}", path=path, line=line, field=f"{where}.text"
        )
    citations = raw.get("citations", [])
    if not isinstance(citations, list):
        raise ImportFailure(
            f"expected a list, got {type(citations).__name__}", path=path, line=line, field=f"{where}.citations"
        )
    for position, citation in enumerate(citations):
        cited_at = f"{where}.citations[{position}]"
        if not isinstance(citation, int) or isinstance(citation, bool):
            raise ImportFailure(f"expected a reference index, got {citation!r}", path=path, line=line, field=cited_at)
        if not 0 <= citation < references:
            raise ImportFailure(
                f"citation {citation} is out of range: the answer has {references} references (0-{references - 1})"
                if references
                else f"citation {citation}, but the answer has no references",
                path=path,
                line=line,
                field=cited_at,
            )
    limited(raw["text"], MAX_ANSWER_CHARS, path=path, line=line, field=f"{where}.text")
    return SentenceLine(text=raw["text"], citations=tuple(citations))


def _parse_answer(record: dict[str, Any], *, path: Path, line: int, topic_ids: FileTopicIds) -> AnswerLine:
    run_id = require(record, "run_id", str, path=path, line=line)
    id_checked(run_id, MAX_ID_CHARS, path=path, line=line, field="run_id")
    topic_id = require(record, "topic_id", str, path=path, line=line)
    id_checked(topic_id, MAX_TOPIC_ID_CHARS, path=path, line=line, field="topic_id")
    topic_key = topic_ids.key(topic_id, path=path, line=line, field="topic_id")
    topic = limited(
        require(record, "topic", str, path=path, line=line), MAX_QUERY_CHARS, path=path, line=line, field="topic"
    )
    references = require(record, "references", list, path=path, line=line)
    cap = topic_ids.campaign.answer_reference_cap
    if cap is not None and len(references) > cap:
        raise ImportFailure(
            f"{len(references)} references, the campaign's rules allow at most {cap}",
            path=path,
            line=line,
            field="references",
        )
    for rank, docid in enumerate(references):
        if not isinstance(docid, str):
            raise ImportFailure(
                f"expected a segment id, got {docid!r}", path=path, line=line, field=f"references[{rank}]"
            )
        id_checked(docid, MAX_ID_CHARS, path=path, line=line, field=f"references[{rank}]")
    answer = require(record, "answer", list, path=path, line=line)
    sentences = tuple(
        _parse_sentence(raw, index, len(references), path=path, line=line) for index, raw in enumerate(answer)
    )
    limited(" ".join(sentence.text for sentence in sentences), MAX_ANSWER_CHARS, path=path, line=line, field="answer")
    return AnswerLine(
        line=line,
        run_id=run_id,
        topic_id=topic_key,
        topic=topic,
        references=tuple(references),
        sentences=sentences,
    )


def _parse_answers(path: Path) -> Iterator[AnswerLine]:
    topic_ids = FileTopicIds()
    for number, record in read_jsonl(path):
        yield _parse_answer(record, path=path, line=number, topic_ids=topic_ids)


def _topics_check(chunk: list[AnswerLine], *, path: Path) -> None:
    queries = dict(Topic.objects.filter(id__in={line.topic_id for line in chunk}).values_list("id", "query"))
    for line in chunk:
        query = queries.get(line.topic_id)
        if query is None:
            raise ImportFailure(
                f"unknown topic {published_id(line.topic_id)} (import the topics first)",
                path=path,
                line=line.line,
                field="topic_id",
            )
        if line.topic != query:
            raise ImportFailure(
                f"the topic text {line.topic!r} differs from topic {published_id(line.topic_id)}'s query {query!r}",
                path=path,
                line=line.line,
                field="topic",
            )


def _runs_resolve(chunk: list[AnswerLine], resolver: RunResolver, batch: ImportBatch, *, path: Path) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    for line in chunk:
        if line.run_id in runs:
            continue
        try:
            runs[line.run_id], _ = resolver.get_or_create(line.run_id, imported_from=batch)
        except AmbiguousRun as exc:
            raise ImportFailure(str(exc), path=path, line=line.line, field="run_id") from None
    return runs


def _stored_answers(keys: set[tuple[int, str]]) -> dict[tuple[int, str], StoredAnswer]:
    """The stored answers of (run pk, topic id) pairs, with their references, sentences and citations."""
    run_ids = {run_id for run_id, _ in keys}
    topic_ids = {topic_id for _, topic_id in keys}
    answers = {
        answer.pk: answer
        for answer in Answer.objects.filter(run_id__in=run_ids, topic_id__in=topic_ids)
        if (answer.run_id, answer.topic_id) in keys
    }
    references: dict[int, list[str]] = {pk: [] for pk in answers}
    sentences: dict[int, dict[int, StoredSentence]] = {pk: {} for pk in answers}
    by_pk: dict[int, StoredSentence] = {}
    for ids in in_batches(list(answers)):
        for answer_id, docid in (
            AnswerReference.objects.filter(answer_id__in=ids)
            .order_by("answer_id", "rank")
            .values_list("answer_id", "segment_id")
        ):
            references[answer_id].append(docid)
        for pk, answer_id, index, text in Sentence.objects.filter(answer_id__in=ids).values_list(
            "pk", "answer_id", "index", "text"
        ):
            sentences[answer_id][index] = by_pk[pk] = StoredSentence(pk=pk, text=text)
    # By sentence ids, not a join on answers: PostgreSQL plans the join as a scan of every citation.
    for ids in in_batches(list(by_pk)):
        for pk, sentence_id, position, docid, rank in (
            Citation.objects.filter(sentence_id__in=ids)
            .order_by("sentence_id", "position")
            .values_list("pk", "sentence_id", "position", "segment_id", "reference_rank")
        ):
            by_pk[sentence_id].citations.append(StoredCitation(pk=pk, position=position, docid=docid, rank=rank))
    return {
        (answer.run_id, answer.topic_id): StoredAnswer(
            answer=answer,
            references=tuple(references[pk]),
            sentences=tuple(sentence for _, sentence in sorted(sentences[pk].items())),
        )
        for pk, answer in answers.items()
    }


def _shape(line: AnswerLine) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[int | None, ...]], ...]]:
    return line.references, tuple((sentence.text, sentence.citations) for sentence in line.sentences)


def _difference(stored: StoredAnswer, line: AnswerLine) -> str:
    if stored.references != line.references:
        return "references"
    if len(stored.sentences) != len(line.sentences):
        return "answer"
    for index, (stored_sentence, sentence) in enumerate(zip(stored.sentences, line.sentences, strict=True)):
        if stored_sentence.text != sentence.text:
            return f"answer[{index}].text"
        if tuple(citation.rank for citation in stored_sentence.citations) != sentence.citations:
            return f"answer[{index}].citations"
    return "answer"


def _field_differing(stored: StoredAnswer, line: AnswerLine) -> str:
    if not stored.sentences and not stored.references:
        return "answer"
    if not stored.references:
        return _sentences_misfit(stored, line) or "answer"
    return _difference(stored, line)


def _citations_matched(stored: StoredSentence, sentence: SentenceLine, references: tuple[str, ...]):
    """For each of the run's citations of a sentence, the stored citation of the same segment, or None to make one.

    None as a whole when a stored citation cites a segment the run's sentence does not.
    """
    unused = list(stored.citations)
    matched: list[StoredCitation | None] = []
    for rank in sentence.citations:
        match = next((citation for citation in unused if citation.docid == references[rank]), None)
        if match is not None:
            unused.remove(match)
        matched.append(match)
    return None if unused else matched


def _sentences_misfit(stored: StoredAnswer, line: AnswerLine) -> str | None:
    """Where sentences stored without references (from a support file) disagree with the run; None if they fit.

    They fit when the texts agree modulo whitespace (or the stored one was lost)
    and every stored citation cites a segment the run's sentence cites: the run
    then adds the references and the other citations, and puts the stored
    citations (with their support labels) at the run's positions.
    """
    if len(stored.sentences) != len(line.sentences):
        return "answer"
    for index, (stored_sentence, sentence) in enumerate(zip(stored.sentences, line.sentences, strict=True)):
        if stored_sentence.text and not _same_modulo_whitespace(stored_sentence.text, sentence.text):
            return f"answer[{index}].text"
        if _citations_matched(stored_sentence, sentence, line.references) is None:
            return f"answer[{index}].citations"
    return None


def _parts_create(writes: Writes, answers: list[tuple[Answer, AnswerLine]]) -> None:
    """Write the references, sentences and citations of answers that have none stored.

    References and citations, most of a run's rows, go in as plain rows
    (rows_insert); sentences as objects, which get their keys.
    """
    writes.rows(
        AnswerReference,
        ["answer", "rank", "segment"],
        ((answer.pk, rank, docid) for answer, line in answers for rank, docid in enumerate(line.references)),
    )
    sentences = writes.create(
        Sentence(answer_id=answer.pk, index=index, text=sentence.text)
        for answer, line in answers
        for index, sentence in enumerate(line.sentences)
    )
    # bulk_create returns the objects in order, now with their primary keys.
    cited = ((sentence_line, line.references) for _, line in answers for sentence_line in line.sentences)
    writes.rows(
        Citation,
        ["sentence", "position", "segment", "reference_rank"],
        (
            (sentence.pk, position, references[rank], rank)
            for sentence, (sentence_line, references) in zip(sentences, cited, strict=True)
            for position, rank in enumerate(sentence_line.citations)
        ),
    )


# Moved citations park here first: positions are unique per sentence at every row update.
PARKED_POSITION = 10_000


def _parts_complete(
    writes: Writes, answers: list[tuple[StoredAnswer, AnswerLine]], result: ImportResult, *, path: Path
) -> None:
    """Complete fitting stored sentences: references, the run's citation order and ranks, its other citations, its texts."""
    writes.create(
        AnswerReference(answer_id=old.answer.pk, rank=rank, segment_id=docid)
        for old, line in answers
        for rank, docid in enumerate(line.references)
    )
    texts: list[Sentence] = []
    updated: list[Citation] = []
    added: list[Citation] = []
    for old, line in answers:
        for index, (stored, sentence) in enumerate(zip(old.sentences, line.sentences, strict=True)):
            if stored.text != sentence.text:
                texts.append(Sentence(pk=stored.pk, text=sentence.text))
            matched = _citations_matched(stored, sentence, line.references)
            for position, (citation, rank) in enumerate(zip(matched, sentence.citations, strict=True)):
                if citation is None:
                    added.append(
                        Citation(
                            sentence_id=stored.pk,
                            position=position,
                            segment_id=line.references[rank],
                            reference_rank=rank,
                        )
                    )
                    continue
                if citation.position == 0 and position != 0:
                    result.warnings.append(
                        f"{path}, line {line.line}: answer[{index}]: the stored first citation ({citation.docid}) is "
                        f"citation {position} of the run; its labels move with it, and the metrics judge the first"
                    )
                if (citation.position, citation.rank) != (position, rank):
                    updated.append(Citation(pk=citation.pk, position=position, reference_rank=rank))
    writes.update(texts, ["text"])
    writes.update(
        [Citation(pk=citation.pk, position=PARKED_POSITION + citation.position) for citation in updated], ["position"]
    )
    writes.update(updated, ["position", "reference_rank"])
    writes.create(added)


def _parts_delete(writes: Writes, answers: list[Answer], result: ImportResult) -> None:
    """Delete answers' sentences (and so their citations and support labels) and references."""
    ids = [answer.pk for answer in answers]
    for batch_ids in in_batches(ids):
        sentences = list(Sentence.objects.filter(answer_id__in=batch_ids).values_list("pk", flat=True))
        deleted = deletion_counts(Sentence, sentences)
        writes.delete(Sentence, sentences)
        writes.delete(
            AnswerReference, AnswerReference.objects.filter(answer_id__in=batch_ids).values_list("pk", flat=True)
        )
        labels = sum(
            count for label, count in deleted.items() if label not in ("assessor.Sentence", "assessor.Citation")
        )
        if labels:
            result.warnings.append(f"replacing {len(batch_ids)} answers deleted {labels} labels of their citations")


def _length_warnings(line: AnswerLine, *, path: Path, word_limit: int | None) -> list[str]:
    where = f"{path}, line {line.line}: the answer of run {line.run_id} for topic {published_id(line.topic_id)}"
    if not line.sentences:
        return [f"{where} is empty"]
    length = words_nfkc(line.text)
    if word_limit is not None and length > word_limit:
        return [f"{where} has {length} words, over the campaign's {word_limit}"]
    return []


def _answer_action(old: StoredAnswer | None, line: AnswerLine, *, run: Run, replace: bool, path: Path) -> str:
    """What to do with a line given the stored answer: new, unchanged, fill, complete or replace."""
    if old is None:
        return "new"
    if old.shape() == _shape(line) and old.answer.text == line.text:
        return "unchanged"
    if not old.sentences and not old.references and _same_modulo_whitespace(old.answer.text, line.text):
        # Known so far by its text only (a nugget file's answer_text): add its structure.
        return "fill"
    if old.sentences and not old.references and _sentences_misfit(old, line) is None:
        # Known by its sentences and their judged citations (a support file): complete them.
        return "complete"
    if replace:
        return "replace"
    differing = _field_differing(old, line)
    raise ImportFailure(
        f"the stored answer of run {run.run_id} for topic {published_id(line.topic_id)} has another "
        f"{'text' if differing == 'answer' else differing}; use --replace to change it",
        path=path,
        line=line.line,
        field=differing,
    )


def _keyed(chunk: list[AnswerLine], runs: dict[str, Run], seen: dict[tuple[int, str], int], *, path: Path):
    """(run pk, topic id) of each line; a second answer of a run for a topic is an error."""
    keyed: list[tuple[tuple[int, str], AnswerLine]] = []
    for line in chunk:
        key = (runs[line.run_id].pk, line.topic_id)
        if key in seen:
            raise ImportFailure(
                f"a second answer of run {line.run_id} for topic {published_id(line.topic_id)} "
                f"(first on line {seen[key]}); "
                "a run answers each topic once",
                path=path,
                line=line.line,
                field="topic_id",
            )
        seen[key] = line.line
        keyed.append((key, line))
    return keyed


def run_import(*, path: Path, replace: bool = False, user: User | None = None) -> ImportResult:
    return RunImport(path=path, replace=replace, user=user).run()


class RunImport(RecordImport[AnswerLine, tuple[int, str], StoredAnswer, ImportResult]):
    """A run's answers, one a line: each chunk's topics checked, then stored by the one rule for answers."""

    kind = RUN

    def parse(self) -> Iterator[AnswerLine]:
        return _parse_answers(self.path)

    def chunks(self) -> Iterable[list[AnswerLine]]:
        return chunked(self.parse(), CHUNK_ANSWERS)

    def start(self) -> None:
        self.store = AnswerLinesStore(self.writes, result=self.result, replace=self.replace, path=self.path)

    def chunk_import(self, chunk: list[AnswerLine]) -> None:
        _topics_check(chunk, path=self.path)
        self.store.chunk_store(chunk)


class AnswerLinesStore:
    """Stores parsed answers, chunk by chunk, into one import: new answers made, stored ones left, completed or replaced.

    Any file layout of answers with sentences and citations (a TREC RAG run, a report file) parses into
    `AnswerLine`s and is stored here, so that one rule decides what an answer already stored becomes.
    """

    def __init__(
        self,
        writes: Writes,
        *,
        result: ImportResult,
        replace: bool,
        path: Path,
        warnings: Callable[[AnswerLine], list[str]] | None = None,
    ) -> None:
        self.writes = writes
        self.result = result
        self.replace = replace
        self.path = path
        # What a line's length is warned of: the campaign's word limit unless the layout has its own rule.
        word_limit = campaign_in_effect().answer_word_limit
        self.warnings = warnings or (lambda line: _length_warnings(line, path=path, word_limit=word_limit))
        self.resolver = RunResolver(writes)
        # One entry per (run, topic): bounded by runs x topics, not by the size of the texts.
        self.seen: dict[tuple[int, str], int] = {}

    def chunk_store(self, chunk: list[AnswerLine]) -> list[tuple[Answer, AnswerLine]]:
        """Store a chunk of answers of known topics; returns each line's answer, in the chunk's order."""
        writes, result, path = self.writes, self.result, self.path
        batch = writes.batch
        runs = _runs_resolve(chunk, self.resolver, batch, path=path)
        keyed = _keyed(chunk, runs, self.seen, path=path)
        segment_placeholders_create(writes, (docid for line in chunk for docid in line.references))
        stored = _stored_answers({key for key, _ in keyed})

        new_lines: list[AnswerLine] = []
        todo: dict[str, list[tuple[StoredAnswer, AnswerLine]]] = {
            action: [] for action in ("unchanged", "fill", "complete", "replace")
        }
        for key, line in keyed:
            result.lines += 1
            result.warnings += self.warnings(line)
            old = stored.get(key)
            if old is None:
                new_lines.append(line)
            else:
                action = _answer_action(old, line, run=runs[line.run_id], replace=self.replace, path=path)
                todo[action].append((old, line))

        new = [
            (
                Answer(
                    run=runs[line.run_id],
                    topic_id=line.topic_id,
                    text=line.text,
                    words=len(line.text.split()),
                    imported_from=batch,
                ),
                line,
            )
            for line in new_lines
        ]
        writes.create([answer for answer, _ in new])
        filled = [(old.answer, line) for old, line in todo["fill"]]
        replaced = [(old.answer, line) for old, line in todo["replace"]]
        _parts_delete(writes, [answer for answer, _ in replaced], result)
        rewritten = filled + replaced + [(old.answer, line) for old, line in todo["complete"]]
        for answer, line in rewritten:
            answer.text = line.text
            answer.words = len(line.text.split())
        for answer, _ in replaced:
            answer.imported_from = batch
        writes.update([answer for answer, _ in rewritten], ["text", "words", "imported_from"])
        # Kept scores read the labels of these answers' sentences and citations: theirs alone may change.
        writes.scores_touch_answers(answer.pk for answer, _ in rewritten)
        _parts_create(writes, new + filled + replaced)
        _parts_complete(writes, todo["complete"], result, path=path)
        result.unchanged += len(todo["unchanged"])
        result.created += len(new) + len(filled) + len(todo["complete"])
        result.replaced += len(replaced)
        answers = {id(line): answer for answer, line in new + rewritten}
        answers.update({id(line): old.answer for old, line in todo["unchanged"]})
        return [(answers[id(line)], line) for line in chunk]
