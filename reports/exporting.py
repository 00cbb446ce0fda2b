"""Report requests and reports written back in the AutoJudge layouts the importers read.

Those of the campaign in effect, each topic under its published id (the id its campaign's files gave it).
"""

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from assessor.models import Answer, AnswerReference, Citation, Run, Segment, Sentence
from assessor.models.keys import published_id
from reports.models import CitationShape, ReportDocument, ReportLayout, ReportRequest

ANSWERS_PER_CHUNK = 500


def requests_lines() -> Iterator[str]:
    """Every request, one a line by id, with the fields it has (a limit it does not set is left out)."""
    # By published id: a key's "@<slug>" would order "10@b" before "1@b".
    for request in sorted(ReportRequest.objects.all(), key=lambda request: published_id(request.topic_id)):
        record: dict[str, Any] = {
            "request_id": published_id(request.topic_id),
            "title": request.title,
            "background": request.background,
            "problem_statement": request.problem_statement,
        }
        if request.limit is not None:
            record["limit"] = request.limit
        if request.word_limit is not None:
            record["word_limit"] = request.word_limit
        if request.collection_ids:
            record["collection_ids"] = request.collection_ids
        yield json.dumps(record, ensure_ascii=False) + "\n"


def _citations(docids: list[str], layout: ReportLayout | None, index: int, references: list[str]) -> Any:
    """One sentence's citations in the report's shape."""
    shape = layout.shape if layout is not None else CitationShape.INDICES
    if shape == CitationShape.CONFIDENCES:
        assert layout is not None
        confidences = layout.confidences[index] if index < len(layout.confidences) else {}
        return {docid: confidences.get(docid, 0.0) for docid in docids}
    if shape == CitationShape.DOCIDS:
        return docids
    return [references.index(docid) for docid in docids]


def _documents(answer_ids: list[int], docids: set[str]) -> tuple[dict[int, dict[str, dict]], dict[str, dict]]:
    """The cited documents' texts: each report's own (as its file gave them), and the collection's."""
    own: dict[int, dict[str, dict]] = defaultdict(dict)
    for document in ReportDocument.objects.filter(answer_id__in=answer_ids).order_by("answer_id", "pk"):
        own[document.answer_id][document.segment_id] = _document(document.segment_id, document)
    collection = {
        segment.docid: _document(segment.docid, segment)
        for segment in Segment.objects.filter(docid__in=docids).exclude(text="").order_by("docid")
    }
    return own, collection


def _document(docid: str, source: Segment | ReportDocument) -> dict[str, str]:
    return {"id": docid, "text": source.text, "title": source.title, "url": source.url}


def reports_lines(*, run_ids: Sequence[str] = (), documents: bool = True) -> Iterator[str]:
    """The reports of these runs (all runs if none), by run then topic, in the layout each was imported in.

    An answer imported from a TREC RAG run has no layout: it is written with its references and citations by
    index, its run id as its team. With `documents`, each report carries the texts of the documents it cites that
    the collection has.
    """
    runs = Run.objects.order_by("run_id")
    if run_ids:
        runs = runs.filter(run_id__in=run_ids)
        missing = sorted(set(run_ids) - set(runs.values_list("run_id", flat=True)))
        if missing:
            raise LookupError(f"no run named {', '.join(missing)}")
    for run in runs:
        answers = sorted(
            Answer.objects.filter(run=run).values_list("id", "topic_id"), key=lambda row: published_id(row[1])
        )
        for start in range(0, len(answers), ANSWERS_PER_CHUNK):
            yield from _chunk_lines(run, answers[start : start + ANSWERS_PER_CHUNK], documents=documents)


def _chunk_lines(run: Run, answers: list[tuple[int, str]], *, documents: bool) -> Iterator[str]:
    ids = [answer_id for answer_id, _ in answers]
    layouts = {layout.answer_id: layout for layout in ReportLayout.objects.filter(answer_id__in=ids)}
    references: dict[int, list[str]] = defaultdict(list)
    for answer_id, docid in (
        AnswerReference.objects.filter(answer_id__in=ids)
        .order_by("answer_id", "rank")
        .values_list("answer_id", "segment_id")
    ):
        references[answer_id].append(docid)
    sentences: dict[int, list[tuple[str, list[str]]]] = defaultdict(list)
    by_id: dict[int, list[str]] = {}
    for sentence_id, answer_id, text in (
        Sentence.objects.filter(answer_id__in=ids).order_by("answer_id", "index").values_list("id", "answer_id", "text")
    ):
        cited: list[str] = []
        sentences[answer_id].append((text, cited))
        by_id[sentence_id] = cited
    for sentence_id, docid in (
        Citation.objects.filter(sentence_id__in=list(by_id))
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "segment_id")
    ):
        by_id[sentence_id].append(docid)
    own, collection = _documents(ids, {docid for cited in by_id.values() for docid in cited}) if documents else ({}, {})
    for answer_id, topic_id in answers:
        layout = layouts.get(answer_id)
        listed = references[answer_id]
        for _, cited in sentences[answer_id]:
            listed.extend(docid for docid in cited if docid not in listed)
        metadata = {
            "team_id": layout.team_id if layout else run.run_id,
            "run_id": run.run_id,
            "topic_id": published_id(topic_id),
        }
        if layout is not None:
            metadata.update({key: value for key, value in layout.metadata.items() if key not in metadata})
        record: dict[str, Any] = {
            "metadata": metadata,
            layout.sentences_key if layout else "responses": [
                {"text": text, "citations": _citations(cited, layout, index, listed)}
                for index, (text, cited) in enumerate(sentences[answer_id])
            ],
        }
        if layout is None or layout.references_given or layout.shape == CitationShape.INDICES:
            record["references"] = listed
        # The report's own texts, and where it gave none, the collection's of what it cites.
        cited_texts = dict(own.get(answer_id, {}))
        for _, cited in sentences[answer_id]:
            for docid in cited:
                if docid not in cited_texts and docid in collection:
                    cited_texts[docid] = collection[docid]
        if cited_texts:
            record["documents"] = cited_texts
        yield json.dumps(record, ensure_ascii=False) + "\n"
