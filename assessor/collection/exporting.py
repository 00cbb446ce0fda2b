"""The collection's files, written in the formats its importers read.

A campaign's files: its runs and qrels sources (the campaign in effect), its topics
written as its files name them (`published_id`), so that an export imports back
into any campaign. Their download names carry the campaign (`campaign_file_name`).
"""

import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import F, Value
from django.db.models.functions import Replace

from assessor.collection.runs import campaign_runs
from assessor.models import Answer, AnswerReference, Campaign, Citation, Qrel, QrelSource, Sentence
from assessor.models.keys import published_id
from assessor.models.scope import campaign_in_effect, scoped_campaign
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


def campaign_file_name(file_name: str, campaign: Campaign | None = None) -> str:
    """A download's file name with its campaign's slug in front: `trec-2025.qrels.nist.txt`. A page is served in its
    campaign's scope; outside any (no page asked), the name is left as it is."""
    campaign = campaign or scoped_campaign()
    return f"{campaign.slug}.{file_name}" if campaign is not None else file_name


def qrel_sources_list() -> list[str]:
    """The names of the campaign's qrels sources."""
    return list(_campaign_sources().order_by("name").values_list("name", flat=True))


def _campaign_sources():
    return QrelSource.objects.unscoped().filter(campaign=campaign_in_effect())


def _by_published_topic(campaign: Campaign) -> list:
    """An order_by() of rows by their topic as published: a key's suffix would put topic "10" before "1"."""
    if not campaign.key_suffix:
        return [F("topic_id")]
    return [Replace(F("topic_id"), Value(campaign.key_suffix), Value(""))]


def qrels_lines(*, source: str) -> Iterator[str]:
    """TREC qrels `topic_id Q0 docid grade` of the campaign's source, by topic then docid, the topics as the
    campaign's files name them. Raises LookupError for an unknown source."""
    campaign = campaign_in_effect()
    qrel_source = _campaign_sources().filter(name=source).first()
    if qrel_source is None:
        known = ", ".join(qrel_sources_list()) or "none"
        raise LookupError(f"no qrels source named {source!r}; sources: {known}")
    qrels = Qrel.objects.filter(source=qrel_source)
    if not open_included():  # the grades of a job still running are provisional, like labels
        qrels = qrels.exclude(job_id__in=unfinished_job_ids())
    rows = (
        qrels.order_by(*_by_published_topic(campaign), "segment_id")
        .values_list("topic_id", "segment_id", "grade")
        .iterator(chunk_size=FETCH_CHUNK)
    )
    for topic_id, docid, grade in rows:
        yield f"{published_id(topic_id)} Q0 {docid} {grade}\n"


def run_ids_list() -> list[str]:
    """The ids of the campaign's runs."""
    return list(campaign_runs().order_by("run_id").values_list("run_id", flat=True))


def run_lines(*, run_id: str) -> Iterator[str]:
    """A run in the TREC RAG 2024 format, one answer a line by topic id. Raises LookupError for an unknown run.

    `{"run_id", "topic_id", "topic", "references", "response_length", "answer": [{"text", "citations"}]}`:
    citations are indexes into `references`. A citation stored without one
    (an answer known from a support file) has its segment added to the
    references. `response_length` is the answer's whitespace word count.
    """
    campaign = campaign_in_effect()
    run = campaign_runs(campaign).filter(run_id=run_id).first()
    if run is None:
        known = ", ".join(run_ids_list()) or "none"
        raise LookupError(f"no run named {run_id!r}; runs: {known}")
    answers = list(
        Answer.objects.filter(run=run)
        .order_by(*_by_published_topic(campaign))
        .values_list("id", "topic_id", "topic__query", "words")
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
                "topic_id": published_id(topic_id),
                "topic": query,
                "references": references[answer_id],
                "response_length": words,
                "answer": sentences[answer_id],
            }
            yield json.dumps(record, ensure_ascii=False) + "\n"
