"""The collection's files, written in the formats its importers read."""

import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from assessor.models import Answer, AnswerReference, Citation, Qrel, QrelSource, Run, Sentence
from assessor.scoring.lifecycle import open_included, unfinished_job_ids

FETCH_CHUNK = 20_000
# Answers per round of queries in a run export: bounded memory, short IN lists.
ANSWERS_PER_CHUNK = 500


# The fields of a label row that say who or what made it, for values_list().
PROVENANCE_FIELDS = (
    "created_by__username",
    "job_id",
    "imported_from__file_name",
    "created_at",
    "seconds_spent",
    "job__endpoint_name",
    "job__model",
)


def provenance_record(
    username: str | None,
    job_id: int | None,
    file_name: str | None,
    created_at: datetime,
    seconds: float | None,
    endpoint_name: str | None = None,
    model: str | None = None,
) -> dict:
    """A label's provenance as exported: `made_by` is `user:NAME`, `job:ID` or `file:NAME`.

    A job's label also names the endpoint and model that made it, so that two
    models' labels stay apart in a file that mixes them.
    """
    if username:
        made_by = f"user:{username}"
    elif job_id:
        made_by = f"job:{job_id}"
    else:
        made_by = f"file:{file_name}"
    record: dict = {"made_by": made_by, "at": created_at.isoformat()}
    if job_id and not username:
        record["endpoint"] = endpoint_name
        record["model"] = model
    if seconds is not None:
        record["seconds"] = seconds
    return record


def qrel_sources_list() -> list[str]:
    return list(QrelSource.objects.order_by("name").values_list("name", flat=True))


def qrels_lines(*, source: str) -> Iterator[str]:
    """TREC qrels `topic_id Q0 docid grade`, by topic then docid. Raises LookupError for an unknown source."""
    if not QrelSource.objects.filter(name=source).exists():
        known = ", ".join(qrel_sources_list()) or "none"
        raise LookupError(f"no qrels source named {source!r}; sources: {known}")
    qrels = Qrel.objects.filter(source__name=source)
    if not open_included():  # the grades of a job still running are provisional, like labels
        qrels = qrels.exclude(job_id__in=unfinished_job_ids())
    rows = (
        qrels.order_by("topic_id", "segment_id")
        .values_list("topic_id", "segment_id", "grade")
        .iterator(chunk_size=FETCH_CHUNK)
    )
    for topic_id, docid, grade in rows:
        yield f"{topic_id} Q0 {docid} {grade}\n"


def run_ids_list() -> list[str]:
    return list(Run.objects.order_by("run_id").values_list("run_id", flat=True))


def run_lines(*, run_id: str) -> Iterator[str]:
    """A run in the TREC RAG 2024 format, one answer a line by topic id. Raises LookupError for an unknown run.

    `{"run_id", "topic_id", "topic", "references", "response_length", "answer": [{"text", "citations"}]}`:
    citations are indexes into `references`. A citation stored without one
    (an answer known from a support file) has its segment added to the
    references. `response_length` is the answer's whitespace word count.
    """
    run = Run.objects.filter(run_id=run_id).first()
    if run is None:
        known = ", ".join(run_ids_list()) or "none"
        raise LookupError(f"no run named {run_id!r}; runs: {known}")
    answers = list(
        Answer.objects.filter(run=run).order_by("topic_id").values_list("id", "topic_id", "topic__query", "words")
    )
    for chunk_start in range(0, len(answers), ANSWERS_PER_CHUNK):
        chunk = answers[chunk_start : chunk_start + ANSWERS_PER_CHUNK]
        answer_ids = [answer_id for answer_id, *_ in chunk]
        references: dict[int, list[str]] = defaultdict(list)
        for answer_id, docid in (
            AnswerReference.objects.filter(answer_id__in=answer_ids)
            .order_by("answer_id", "rank")
            .values_list("answer_id", "segment_id")
        ):
            references[answer_id].append(docid)
        sentences: dict[int, list[dict]] = defaultdict(list)
        by_id: dict[int, tuple[int, dict]] = {}
        for sentence_id, answer_id, text in (
            Sentence.objects.filter(answer_id__in=answer_ids)
            .order_by("answer_id", "index")
            .values_list("id", "answer_id", "text")
        ):
            sentence: dict[str, Any] = {"text": text, "citations": []}
            sentences[answer_id].append(sentence)
            by_id[sentence_id] = (answer_id, sentence)
        for sentence_id, docid, rank in (
            Citation.objects.filter(sentence__answer_id__in=answer_ids)
            .order_by("sentence_id", "position")
            .values_list("sentence_id", "segment_id", "reference_rank")
        ):
            answer_id, sentence = by_id[sentence_id]
            listed = references[answer_id]
            if rank is None or rank >= len(listed) or listed[rank] != docid:
                if docid not in listed:
                    listed.append(docid)
                rank = listed.index(docid)
            sentence["citations"].append(rank)
        for answer_id, topic_id, query, words in chunk:
            record = {
                "run_id": run.run_id,
                "topic_id": topic_id,
                "topic": query,
                "references": references[answer_id],
                "response_length": words,
                "answer": sentences[answer_id],
            }
            yield json.dumps(record, ensure_ascii=False) + "\n"
