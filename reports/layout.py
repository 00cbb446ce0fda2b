"""The AutoJudge files of the report family, read line by line with the track's checks.

Requests: `{"request_id", "title", "background", "problem_statement", "limit",
"word_limit", "collection_ids"}`, one a line (`topic_id` and `narrative_id`,
where given, must repeat the request id).

Reports: `{"metadata": {"team_id", "run_id", "topic_id"}, "responses": [{"text",
"citations"}], "references": [docid, ...], "documents": {docid: {"text", "title",
"url"}}}`, one a line. A sentence cites in one of three shapes, one shape per
report: a list of document ids, a map of document id to confidence (the
citations' order is by descending confidence, ties in the file's order), or
indices into `references`. `answer` may stand for `responses` (the RAG track's
key), `narrative_id` or `request_id` for `topic_id`.

Each report parses into the collection's `AnswerLine`: its references are the
`references` list where the file gives one, else the cited documents in the
order first cited, and each citation is an index into them.

A topic id read here (a request's id, a report's topic) is mapped to its topic's
stored key in the campaign in effect (`FileTopicIds`); an id holding "@" is
refused with its file, line and field.
"""

import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assessor.collection.importing.runs import AnswerLine, SentenceLine
from assessor.importing.base import (
    MAX_ANSWER_CHARS,
    MAX_ID_CHARS,
    MAX_QUERY_CHARS,
    MAX_SEGMENT_CHARS,
    MAX_STORED_INTEGER,
    MAX_TITLE_CHARS,
    MAX_TOPIC_ID_CHARS,
    MAX_URL_CHARS,
    ImportFailure,
    finite_check,
    float_checked,
    id_checked,
    integer_checked,
    json_id,
    limited,
    optional_str,
    read_jsonl,
    require,
)
from assessor.importing.topic_ids import FileTopicIds
from reports.models import CitationShape, LengthUnit

# A request's background and problem statement are a few paragraphs; this leaves ten times the room.
MAX_REQUEST_FIELD_CHARS = 20_000
# The reference checks no number; a report citing more documents than this is not a report.
MAX_REFERENCES = 1_000
MAX_COLLECTION_IDS = 20


@dataclass(frozen=True)
class RequestLine:
    line: int
    request_id: str  # as the file gives it (the campaign's published id)
    key: str  # the request's topic's stored key in the campaign in effect (assessor.models.keys)
    title: str
    background: str
    problem_statement: str
    limit: int | None
    word_limit: int | None
    collection_ids: tuple[str, ...]


@dataclass(frozen=True)
class DocumentLine:
    docid: str
    text: str
    title: str
    url: str


@dataclass(frozen=True)
class ReportLine:
    answer: AnswerLine
    team_id: str
    shape: str
    sentences_key: str
    confidences: tuple[dict[str, float], ...]
    metadata: dict[str, Any]
    references_given: bool
    documents: tuple[DocumentLine, ...] = field(default=())


def report_length(texts: Sequence[str], unit: str) -> int:
    """A report's length as the track's validator counts it: its sentences joined by one space, then characters
    after NFKC normalization, or whitespace words (as written: NFKC does not change where words split)."""
    joined = " ".join(texts)
    return len(unicodedata.normalize("NFKC", joined)) if unit == LengthUnit.CHARACTERS else len(joined.split())


def report_cut(texts: Sequence[str], limit: int, unit: str) -> int:
    """How many sentences, from the first, a report keeps when cut to `limit` at a sentence boundary.

    The kept sentences are the longest run from the first whose length fits; a first sentence longer than the
    limit leaves nothing.
    """
    kept = 0
    while kept < len(texts) and report_length(texts[: kept + 1], unit) <= limit:
        kept += 1
    return kept


# --- requests ---------------------------------------------------------------------------------------------


def _optional_text(record: dict[str, Any], key: str, limit: int, *, path: Path, line: int, field: str = "") -> str:
    """An optional text field, stripped of the whitespace around it."""
    return optional_str(record, key, limit, path=path, line=line, field=field).strip()


def _optional_limit(record: dict[str, Any], key: str, *, path: Path, line: int) -> int | None:
    value = record.get(key)
    return None if value is None else integer_checked(value, 1, MAX_STORED_INTEGER, path=path, line=line, field=key)


def _collection_ids(record: dict[str, Any], *, path: Path, line: int) -> tuple[str, ...]:
    value = record.get("collection_ids")
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_COLLECTION_IDS:
        raise ImportFailure(
            f"expected a list of at most {MAX_COLLECTION_IDS} ids", path=path, line=line, field="collection_ids"
        )
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ImportFailure(f"expected str, got {item!r}", path=path, line=line, field=f"collection_ids[{index}]")
        id_checked(item, MAX_ID_CHARS, path=path, line=line, field=f"collection_ids[{index}]")
    return tuple(value)


def _mirrors_checked(record: dict[str, Any], request_id: str, names: tuple[str, ...], *, path: Path, line: int) -> None:
    """The id's other names, where given, name the same topic."""
    for name in names:
        given = record.get(name)
        if given is not None and str(given) != request_id:
            raise ImportFailure(
                f"{given!r} differs from the request id {request_id!r}", path=path, line=line, field=name
            )


def _parse_request(record: dict[str, Any], ids: FileTopicIds, *, path: Path, line: int) -> RequestLine:
    request_id = json_id(
        require(record, "request_id", (str, int), path=path, line=line),
        MAX_TOPIC_ID_CHARS,
        path=path,
        line=line,
        field="request_id",
        whole_numbers=True,
    )
    _mirrors_checked(record, request_id, ("topic_id", "narrative_id"), path=path, line=line)
    key = ids.key(request_id, path=path, line=line, field="request_id")
    title = require(record, "title", str, path=path, line=line).strip()
    if not title:
        raise ImportFailure("empty", path=path, line=line, field="title")
    return RequestLine(
        line=line,
        request_id=request_id,
        key=key,
        title=limited(title, MAX_QUERY_CHARS, path=path, line=line, field="title"),
        background=_optional_text(record, "background", MAX_REQUEST_FIELD_CHARS, path=path, line=line),
        problem_statement=_optional_text(record, "problem_statement", MAX_REQUEST_FIELD_CHARS, path=path, line=line),
        limit=_optional_limit(record, "limit", path=path, line=line),
        word_limit=_optional_limit(record, "word_limit", path=path, line=line),
        collection_ids=_collection_ids(record, path=path, line=line),
    )


def requests_parse(path: Path) -> Iterator[RequestLine]:
    seen: dict[str, int] = {}
    ids = FileTopicIds()
    for number, record in read_jsonl(path):
        request = _parse_request(record, ids, path=path, line=number)
        if request.request_id in seen:
            raise ImportFailure(
                f"request repeated (first on line {seen[request.request_id]})",
                path=path,
                line=number,
                field="request_id",
            )
        seen[request.request_id] = number
        yield request


# --- reports ----------------------------------------------------------------------------------------------


def _topic_id(metadata: dict[str, Any], ids: FileTopicIds, *, path: Path, line: int) -> str:
    """The stored key of `topic_id`, or of the track's other names for it; every name given must agree."""
    names = ("topic_id", "narrative_id", "request_id")
    given = {name: metadata[name] for name in names if metadata.get(name) is not None}
    if not given:
        raise ImportFailure("missing", path=path, line=line, field="metadata.topic_id")
    for name, value in given.items():
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ImportFailure(
                f"expected str, got {type(value).__name__}", path=path, line=line, field=f"metadata.{name}"
            )
    first_name, first = next(iter(given.items()))
    for name, value in given.items():
        if str(value) != str(first):
            raise ImportFailure(
                f"{value!r} differs from metadata.{first_name} {first!r}",
                path=path,
                line=line,
                field=f"metadata.{name}",
            )
    field = f"metadata.{first_name}"
    topic_id = json_id(first, MAX_TOPIC_ID_CHARS, path=path, line=line, field=field, whole_numbers=True)
    return ids.key(topic_id, path=path, line=line, field=field)


def _metadata_id(metadata: dict[str, Any], key: str, *, path: Path, line: int) -> str:
    value = metadata.get(key)
    if value is None:
        raise ImportFailure("missing", path=path, line=line, field=f"metadata.{key}")
    if not isinstance(value, str):
        raise ImportFailure(f"expected str, got {type(value).__name__}", path=path, line=line, field=f"metadata.{key}")
    return id_checked(value, MAX_ID_CHARS, path=path, line=line, field=f"metadata.{key}")


def _sentences_key(record: dict[str, Any], *, path: Path, line: int) -> str:
    given = [key for key in ("responses", "answer") if record.get(key) is not None]
    if not given:
        raise ImportFailure(
            "missing (a report's sentences are in responses, or answer)", path=path, line=line, field="responses"
        )
    if len(given) == 2 and record["responses"] != record["answer"]:
        raise ImportFailure(
            "responses and answer differ: give the sentences once", path=path, line=line, field="answer"
        )
    if not isinstance(record[given[0]], list):
        raise ImportFailure(
            f"expected a list, got {type(record[given[0]]).__name__}", path=path, line=line, field=given[0]
        )
    return given[0]


def _citation_shape(citations: Any) -> str | None:
    """The shape of one sentence's citations; None when it has none (any shape fits)."""
    if citations is None or citations == [] or citations == {}:
        return None
    if isinstance(citations, dict):
        return CitationShape.CONFIDENCES
    if isinstance(citations, list) and all(isinstance(c, int) and not isinstance(c, bool) for c in citations):
        return CitationShape.INDICES
    if isinstance(citations, list) and all(isinstance(c, str) for c in citations):
        return CitationShape.DOCIDS
    return "unknown"


def _shape_of_report(sentences: list[Any], key: str, *, path: Path, line: int) -> str:
    shapes: dict[str, int] = {}
    for index, raw in enumerate(sentences):
        if not isinstance(raw, dict):
            raise ImportFailure(
                f"expected an object, got {type(raw).__name__}", path=path, line=line, field=f"{key}[{index}]"
            )
        shape = _citation_shape(raw.get("citations"))
        if shape == "unknown":
            raise ImportFailure(
                "expected a list of document ids, a map of document id to confidence, or a list of reference indices",
                path=path,
                line=line,
                field=f"{key}[{index}].citations",
            )
        if shape is not None:
            shapes.setdefault(shape, index)
    if len(shapes) > 1:
        (first, at), (second, index) = sorted(shapes.items(), key=lambda item: item[1])[:2]
        raise ImportFailure(
            f"cites as {CitationShape(second).label}, but {key}[{at}] cites as {CitationShape(first).label}: "
            "a report cites in one shape",
            path=path,
            line=line,
            field=f"{key}[{index}].citations",
        )
    return next(iter(shapes), CitationShape.DOCIDS)


def _docid(value: str, *, path: Path, line: int, field: str) -> str:
    return id_checked(value, MAX_ID_CHARS, path=path, line=line, field=field)


def _references(record: dict[str, Any], *, path: Path, line: int) -> list[str] | None:
    value = record.get("references")
    if value is None:
        return None
    if not isinstance(value, list):
        raise ImportFailure(f"expected a list, got {type(value).__name__}", path=path, line=line, field="references")
    if len(value) > MAX_REFERENCES:
        raise ImportFailure(
            f"{len(value):,} references, over the limit of {MAX_REFERENCES:,}", path=path, line=line, field="references"
        )
    docids: list[str] = []
    for rank, docid in enumerate(value):
        if not isinstance(docid, str):
            raise ImportFailure(
                f"expected a document id, got {docid!r}", path=path, line=line, field=f"references[{rank}]"
            )
        docid = _docid(docid, path=path, line=line, field=f"references[{rank}]")
        if docid in docids:
            raise ImportFailure(
                f"{docid} is listed twice (first as references[{docids.index(docid)}])",
                path=path,
                line=line,
                field=f"references[{rank}]",
            )
        docids.append(docid)
    return docids


def _cited(raw: dict[str, Any], shape: str, references: list[str] | None, where: str, *, path: Path, line: int):
    """A sentence's cited document ids in priority order, and their confidences (confidences shape only)."""
    citations = raw.get("citations") or []
    confidences: dict[str, float] = {}
    if shape == CitationShape.INDICES:
        count = len(references or [])
        for position, index in enumerate(citations):
            if not 0 <= index < count:
                raise ImportFailure(
                    f"citation {index} is out of range: the report has {count} references"
                    if count
                    else f"citation {index}, but the report has no references",
                    path=path,
                    line=line,
                    field=f"{where}.citations[{position}]",
                )
        docids = [(references or [])[index] for index in citations]
    elif shape == CitationShape.CONFIDENCES:
        for docid, confidence in dict(citations).items():
            docid = _docid(docid, path=path, line=line, field=f"{where}.citations")
            confidences[docid] = float_checked(confidence, path=path, line=line, field=f"{where}.citations.{docid}")
        # sorted() is stable: equal confidences keep the file's order.
        docids = sorted(confidences, key=lambda docid: -confidences[docid])
    else:
        docids = [
            _docid(docid, path=path, line=line, field=f"{where}.citations[{position}]")
            for position, docid in enumerate(citations)
        ]
    for position, docid in enumerate(docids):
        if docid in docids[:position]:
            raise ImportFailure(f"{docid} is cited twice", path=path, line=line, field=f"{where}.citations")
    return docids, confidences


def _documents(record: dict[str, Any], *, path: Path, line: int) -> tuple[DocumentLine, ...]:
    value = record.get("documents")
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ImportFailure(f"expected a map, got {type(value).__name__}", path=path, line=line, field="documents")
    documents = []
    for key, document in value.items():
        where = f"documents.{key}"
        docid = _docid(key, path=path, line=line, field="documents")
        if not isinstance(document, dict):
            raise ImportFailure(f"expected an object, got {type(document).__name__}", path=path, line=line, field=where)
        if document.get("id") is not None and str(document["id"]) != key:
            raise ImportFailure(
                f"id {document['id']!r} differs from its key", path=path, line=line, field=f"{where}.id"
            )
        documents.append(
            DocumentLine(
                docid=docid,
                text=_optional_text(document, "text", MAX_SEGMENT_CHARS, path=path, line=line, field=f"{where}.text"),
                title=_optional_text(document, "title", MAX_TITLE_CHARS, path=path, line=line, field=f"{where}.title"),
                url=_optional_text(document, "url", MAX_URL_CHARS, path=path, line=line, field=f"{where}.url"),
            )
        )
    return tuple(documents)


def _sentences(
    raw_sentences: list[Any], key: str, shape: str, references: list[str] | None, *, path: Path, line: int
) -> tuple[list[str], list[SentenceLine], list[dict[str, float]]]:
    """A report's sentences, their citations as ranks into its references (the listed ones, else in order of
    citation), and their citations' confidences."""
    order: list[str] = list(references or [])
    sentences: list[SentenceLine] = []
    confidences: list[dict[str, float]] = []
    for index, raw in enumerate(raw_sentences):
        where = f"{key}[{index}]"
        text = raw.get("text")
        if not isinstance(text, str):
            raise ImportFailure(
                "missing" if text is None else f"expected str, got {type(text).__name__}",
                path=path,
                line=line,
                field=f"{where}.text",
            )
        if not text.strip():
            raise ImportFailure("empty: a sentence has text", path=path, line=line, field=f"{where}.text")
        limited(text, MAX_ANSWER_CHARS, path=path, line=line, field=f"{where}.text")
        docids, sentence_confidences = _cited(raw, shape, references, where, path=path, line=line)
        for docid in docids:
            if docid not in order:
                if references is not None:
                    raise ImportFailure(
                        f"{docid} is cited but not listed in references",
                        path=path,
                        line=line,
                        field=f"{where}.citations",
                    )
                order.append(docid)
        sentences.append(SentenceLine(text=text, citations=tuple(order.index(docid) for docid in docids)))
        confidences.append(sentence_confidences)
    return order, sentences, confidences


def _parse_report(record: dict[str, Any], ids: FileTopicIds, *, path: Path, line: int) -> ReportLine:
    """A report as the answers' store takes it: its `answer.topic_id` is the topic's stored key."""
    metadata = require(record, "metadata", dict, path=path, line=line)
    run_id = _metadata_id(metadata, "run_id", path=path, line=line)
    team_id = _metadata_id(metadata, "team_id", path=path, line=line)
    topic_id = _topic_id(metadata, ids, path=path, line=line)
    key = _sentences_key(record, path=path, line=line)
    raw_sentences: list[Any] = record[key]
    shape = _shape_of_report(raw_sentences, key, path=path, line=line)
    references = _references(record, path=path, line=line)
    if shape == CitationShape.INDICES and references is None:
        raise ImportFailure(
            "missing: the report cites by index into its references", path=path, line=line, field="references"
        )
    order, sentences, confidences = _sentences(raw_sentences, key, shape, references, path=path, line=line)
    answer = AnswerLine(
        line=line,
        run_id=run_id,
        topic_id=topic_id,
        topic="",
        references=tuple(order),
        sentences=tuple(sentences),
    )
    limited(answer.text, MAX_ANSWER_CHARS, path=path, line=line, field=key)
    known = {"team_id", "run_id", "topic_id", "narrative_id", "request_id"}
    kept = {name: value for name, value in metadata.items() if name not in known}
    finite_check(kept, path=path, line=line, field="metadata")
    return ReportLine(
        answer=answer,
        team_id=team_id,
        shape=shape,
        sentences_key=key,
        confidences=tuple(confidences) if shape == CitationShape.CONFIDENCES else (),
        metadata=kept,
        references_given=references is not None,
        documents=_documents(record, path=path, line=line),
    )


def reports_parse(path: Path) -> Iterator[ReportLine]:
    ids = FileTopicIds()
    for number, record in read_jsonl(path):
        yield _parse_report(record, ids, path=path, line=number)
