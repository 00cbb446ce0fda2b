"""Imports of report requests and reports: each file atomic, every error named by file, line and field."""

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.importing.runs import CHUNK_ANSWERS, AnswerLine, AnswerLinesStore
from assessor.importing.base import ImportFailure, ImportResult, Writes, chunked, in_batches
from assessor.importing.pipeline import Changes, RecordImport
from assessor.models import Answer, Segment, Topic
from assessor.models.keys import published_id
from reports.kinds import IMPORT_REPORTS, IMPORT_REQUESTS
from reports.layout import DocumentLine, ReportLine, RequestLine, report_length, reports_parse, requests_parse
from reports.models import ReportDocument, ReportLayout, ReportRequest

REQUEST_FIELDS = ("title", "background", "problem_statement", "limit", "word_limit", "collection_ids")


# --- requests ---------------------------------------------------------------------------------------------


def requests_import(*, path: Path, replace: bool = False, user: User | None = None) -> ImportResult:
    """Topics with their requests; a topic already stored (a TREC topic, say) gains the request if its query is the title."""
    return RequestsImport(path=path, replace=replace, user=user).run()


def _request_values(line: RequestLine) -> dict:
    return {
        "title": line.title,
        "background": line.background,
        "problem_statement": line.problem_statement,
        "limit": line.limit,
        "word_limit": line.word_limit,
        "collection_ids": list(line.collection_ids),
    }


def _request_differing(stored: ReportRequest, line: RequestLine) -> str | None:
    values = _request_values(line)
    return next((name for name in REQUEST_FIELDS if getattr(stored, name) != values[name]), None)


class RequestsImport(RecordImport[RequestLine, str, ReportRequest, ImportResult]):
    """One request a line, keyed by its id: the request and its topic, whose query is the request's title."""

    kind = IMPORT_REQUESTS

    def parse(self) -> Iterator[RequestLine]:
        return requests_parse(self.path)

    def chunk_prepare(self, chunk: list[RequestLine]) -> None:
        ids = [line.key for line in chunk]
        self.topics = Topic.objects.in_bulk(ids)
        self.stored = ReportRequest.objects.in_bulk(ids)
        self.new_topics: list[Topic] = []
        self.changed_topics: list[Topic] = []

    def resolve(self, line: RequestLine) -> str:
        return line.key

    def compare(self, changes: Changes[str, RequestLine, ReportRequest], key: str, line: RequestLine) -> None:
        topic = self.topics.get(key)
        if topic is None:
            self.new_topics.append(Topic(id=key, query=line.title, imported_from=self.batch))
        elif topic.query != line.title:
            if not self.replace:
                raise ImportFailure(
                    f"topic {line.request_id} is stored with the query {topic.query!r}; a request's title is its "
                    "topic's query: use --replace to change it",
                    path=self.path,
                    line=line.line,
                    field="title",
                )
            topic.query, topic.imported_from = line.title, self.batch
            self.changed_topics.append(topic)
        request = self.existing(key)
        if request is None:
            changes.new[key] = line
        elif topic is not None and topic not in self.changed_topics:
            super().compare(changes, key, line)  # the request alone decides
        elif self.replace or self.same(request, line):
            changes.changed[key] = (request, line)  # its topic is new or changed: so is it
        else:
            raise self.conflict(request, line)

    def same(self, stored: ReportRequest, line: RequestLine) -> bool:
        return _request_differing(stored, line) is None

    def conflict(self, stored: ReportRequest, line: RequestLine) -> ImportFailure:
        differing = str(_request_differing(stored, line))
        return ImportFailure(
            f"request {line.request_id} is stored with another {differing}; use --replace to change it",
            path=self.path,
            line=line.line,
            field=differing,
        )

    def write(self, changes: Changes[str, RequestLine, ReportRequest]) -> None:
        for request, line in changes.changed.values():
            for name, value in _request_values(line).items():
                setattr(request, name, value)
            request.imported_from = self.batch
        self.writes.create(self.new_topics)
        self.writes.update(self.changed_topics, ["query", "imported_from"])
        self.writes.create(
            ReportRequest(topic_id=key, imported_from=self.batch, **_request_values(line))
            for key, line in changes.new.items()
        )
        self.writes.update(changes.changed_rows(), [*REQUEST_FIELDS, "imported_from"])


# --- reports ----------------------------------------------------------------------------------------------


def reports_import(*, path: Path, replace: bool = False, user: User | None = None) -> ImportResult:
    """Reports as runs' answers (sentences, citations, references), with the file's layout and cited documents."""
    return ReportsImport(path=path, replace=replace, user=user).run()


def _topics_known(chunk: list[ReportLine], *, path: Path) -> dict[str, ReportRequest | None]:
    """Each report's topic (by stored key), which must be stored in the campaign in effect; its request where it
    has one (for the length rule)."""
    ids = {report.answer.topic_id for report in chunk}
    known = set(Topic.objects.filter(id__in=ids).values_list("id", flat=True))
    for report in chunk:
        if report.answer.topic_id not in known:
            raise ImportFailure(
                f"unknown topic {published_id(report.answer.topic_id)} (import the requests first)",
                path=path,
                line=report.answer.line,
                field="metadata.topic_id",
            )
    requests = ReportRequest.objects.in_bulk(ids)
    return {topic_id: requests.get(topic_id) for topic_id in ids}


def _length_warnings(report: ReportLine, request: ReportRequest | None, *, path: Path) -> list[str]:
    """An empty report, or one over its request's limit (cut there when judged), is imported with a warning."""
    topic = published_id(report.answer.topic_id)
    where = f"{path}, line {report.answer.line}: the report of run {report.answer.run_id} for topic {topic}"
    if not report.answer.sentences:
        return [f"{where} is empty"]
    limit = request.length_limit if request is not None else None
    if limit is None:
        return []
    allowed, unit = limit
    length = report_length([sentence.text for sentence in report.answer.sentences], unit)
    if length <= allowed:
        return []
    return [f"{where} has {length:,} {unit}, over the request's {allowed:,}; it is cut there when judged"]


def _warnings_of_line(warnings: dict[int, list[str]], line: AnswerLine) -> list[str]:
    return warnings[line.line]


def _field_in_report(failure: ImportFailure, sentences_key: str) -> ImportFailure:
    """A failure the answers' store names in the TREC run's fields, named in the report's."""
    renamed = {"run_id": "metadata.run_id", "topic_id": "metadata.topic_id"}
    field = renamed.get(failure.field) or re.sub(r"^answer(?=\[|$)", sentences_key, failure.field)
    return ImportFailure(failure.message, path=failure.path, line=failure.line, field=field)


def _segments_fill(writes: Writes, documents: list[DocumentLine]) -> int:
    """Cited documents the collection lacks, or has without text, take the first text a report gives.

    Returns how many stored documents have another text than a report's (they keep theirs: each report keeps
    its own in `ReportDocument`).
    """
    by_docid: dict[str, DocumentLine] = {}
    for document in documents:
        by_docid.setdefault(document.docid, document)
    stored: dict[str, Segment] = {}
    for ids in in_batches(list(by_docid)):
        stored.update(Segment.objects.in_bulk(ids))
    new: list[Segment] = []
    filled: list[Segment] = []
    for docid, document in by_docid.items():
        segment = stored.get(docid)
        if segment is None:
            new.append(
                Segment(
                    docid=docid, text=document.text, title=document.title, url=document.url, imported_from=writes.batch
                )
            )
        elif not segment.text and document.text:
            segment.text, segment.title, segment.url = document.text, document.title, document.url
            segment.imported_from = writes.batch
            filled.append(segment)
    # ignore_conflicts: another import may add the same docid at the same time.
    writes.create(new, ignore_conflicts=True)
    writes.update(filled, ["text", "title", "url", "imported_from"])
    return sum(
        1
        for document in documents
        if document.text
        and (segment := stored.get(document.docid)) is not None
        and segment.text
        and segment.text != document.text
    )


# Enough documents named in one warning to find them; the rest are counted.
UNFOUND_SHOWN = 10


def _texts_unfound(chunk: list[ReportLine]) -> dict[int, tuple[str, str, list[str]]]:
    """By line, each report's run, topic and the documents (cited or listed) the collection holds no text for."""
    wanted = {docid for report in chunk for docid in report.answer.references}
    found: set[str] = set()
    for ids in in_batches(sorted(wanted)):
        found.update(Segment.objects.filter(pk__in=ids).exclude(text="").values_list("pk", flat=True))
    return {
        report.answer.line: (report.answer.run_id, report.answer.topic_id, missing)
        for report in chunk
        if (missing := [docid for docid in report.answer.references if docid not in found])
    }


def _unfound_warnings(unfound: dict[int, tuple[str, str, list[str]]], given: set[str], *, path: Path) -> list[str]:
    """A report citing documents neither the file (any line's `documents`) nor the collection gives a text is
    imported (a run's documents may come later, as segments), with a warning naming them."""
    warnings = []
    for line, (run_id, topic_id, docids) in sorted(unfound.items()):
        missing = [docid for docid in docids if docid not in given]
        if not missing:
            continue
        shown = ", ".join(missing[:UNFOUND_SHOWN])
        if len(missing) > UNFOUND_SHOWN:
            shown += f" and {len(missing) - UNFOUND_SHOWN} more"
        warnings.append(
            f"{path}, line {line}: the report of run {run_id} for topic {published_id(topic_id)} cites {len(missing)} documents "
            f"found neither in the file nor in the collection: {shown}; they are kept as ids without text until "
            "their segments are imported"
        )
    return warnings


def _layout_values(report: ReportLine) -> dict[str, Any]:
    return {
        "team_id": report.team_id,
        "shape": report.shape,
        "sentences_key": report.sentences_key,
        "references_given": report.references_given,
        "confidences": list(report.confidences),
        "metadata": report.metadata,
    }


def _documents_values(documents) -> list[tuple[str, str, str, str]]:
    return sorted((document.docid, document.text, document.title, document.url) for document in documents)


def _layout_differing(layout: ReportLayout | None, documents: list[ReportDocument], report: ReportLine) -> str | None:
    """The field of the file a stored report's layout or documents disagree with; None if they agree."""
    if layout is None:
        return "metadata"
    values = _layout_values(report)
    differing = next((name for name in values if getattr(layout, name) != values[name]), None)
    if differing is not None:
        return {"shape": "citations", "confidences": "citations", "references_given": "references"}.get(
            differing, "metadata"
        )
    documents_stored = [(d.segment_id, d.text, d.title, d.url) for d in documents]
    return None if sorted(documents_stored) == _documents_values(report.documents) else "documents"


def _layouts_store(
    writes: Writes, stored: list[tuple[Answer, ReportLine]], result: ImportResult, *, replace: bool, path: Path
) -> None:
    """Each report's layout and own documents: made for a new or rewritten report, checked for a stored one.

    A report whose sentences and citations are stored as the file has them, but whose layout or documents
    differ (another team, other confidences, other document texts), is another report: refused without
    `replace`, replaced with it. One stored without a layout (from a TREC RAG run file) gains it.
    """
    ids = [answer.pk for answer, _ in stored]
    layouts = {layout.answer_id: layout for layout in ReportLayout.objects.filter(answer_id__in=ids)}
    documents: dict[int, list[ReportDocument]] = defaultdict(list)
    for document in ReportDocument.objects.filter(answer_id__in=ids):
        documents[document.answer_id].append(document)
    rewrite: list[tuple[Answer, ReportLine]] = []
    for answer, report in stored:
        layout = layouts.get(answer.pk)
        if answer.imported_from_id == writes.batch.pk:
            rewrite.append((answer, report))
            continue
        differing = _layout_differing(layout, documents[answer.pk], report)
        if differing is None:
            continue
        if layout is not None and not replace:
            raise ImportFailure(
                f"the stored report of run {report.answer.run_id} for topic {published_id(report.answer.topic_id)} "
                f"has another "
                f"{differing}; use --replace to change it",
                path=path,
                line=report.answer.line,
                field=differing,
            )
        rewrite.append((answer, report))
        result.unchanged -= 1
        if layout is None:
            result.created += 1
        else:
            result.replaced += 1
    rewritten = {answer.pk for answer, _ in rewrite}
    writes.delete(ReportLayout, [layouts[pk].pk for pk in rewritten if pk in layouts])
    writes.delete(ReportDocument, [document.pk for pk in rewritten for document in documents[pk]])
    writes.create(
        ReportLayout(answer_id=answer.pk, imported_from=writes.batch, **_layout_values(report))
        for answer, report in rewrite
    )
    writes.create(
        ReportDocument(
            answer_id=answer.pk, segment_id=document.docid, text=document.text, title=document.title, url=document.url
        )
        for answer, report in rewrite
        for document in report.documents
    )


class ReportsImport(RecordImport[ReportLine, tuple[int, str], Answer, ImportResult]):
    """Reports, one a line: stored as runs' answers by the one rule for answers, then their layouts and documents."""

    kind = IMPORT_REPORTS

    def parse(self) -> Iterator[ReportLine]:
        return reports_parse(self.path)

    def chunks(self) -> Iterable[list[ReportLine]]:
        return chunked(self.parse(), CHUNK_ANSWERS)

    def start(self) -> None:
        self.store = AnswerLinesStore(self.writes, result=self.result, replace=self.replace, path=self.path)
        self.given: set[str] = set()  # the documents the file gives a text for
        self.unfound: dict[int, tuple[str, str, list[str]]] = {}  # by line: documents the collection held no text for

    def chunk_import(self, chunk: list[ReportLine]) -> None:
        path, result = self.path, self.result
        requests = _topics_known(chunk, path=path)
        self.given.update(document.docid for report in chunk for document in report.documents if document.text)
        # Before the documents are filled and placeholders made: what the collection held before this file.
        self.unfound.update(_texts_unfound(chunk))
        warnings = {
            report.answer.line: _length_warnings(report, requests[report.answer.topic_id], path=path)
            for report in chunk
        }
        # Before the answers: their citations name these documents, whose placeholders the store would make.
        differing = _segments_fill(self.writes, [document for report in chunk for document in report.documents])
        if differing:
            result.warnings.append(
                f"{path}: {differing} cited documents have another text in the collection; each report keeps the "
                "text it gave, and the collection keeps its own"
            )
        self.store.warnings = partial(_warnings_of_line, warnings)
        keys = {report.answer.line: report.sentences_key for report in chunk}
        try:
            answers = self.store.chunk_store([report.answer for report in chunk])
        except ImportFailure as failure:
            raise _field_in_report(failure, keys.get(failure.line or 0, "responses")) from None
        reports = [(answer, report) for (answer, _), report in zip(answers, chunk, strict=True)]
        _layouts_store(self.writes, reports, result, replace=self.replace, path=path)

    def finish(self) -> None:
        self.result.warnings += _unfound_warnings(self.unfound, self.given, path=self.path)
