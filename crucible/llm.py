"""Crucible by an LLM: a run's reports written from a question bank.

`crucible_job_create` retrieves each topic's documents (`retrieval.py`), splits them into chunks and
makes one job item per (topic, question); an item asks, for each chunk of its topic, the extraction and
its condensed sentence, with the answer's token log-probabilities (one call per pair, the answer cache
reused). The item that finishes the job assembles the reports (`text.report_sentences`, cut to each
request's limit) and stores them through the report importer, so that the run is stored as an imported
one; `CrucibleRun` keeps its provenance.

An endpoint that returns no log-probabilities cannot rank the extractions: its first answer without them
marks the job, every item then fails with that reason, and no run is made.
"""

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from assessor.importing.base import ImportFailure
from assessor.jobs.engine import ItemUnworkable, JobRequestInvalid, job_create, job_prompt, output_name_check
from assessor.jobs.llm.client import LLMAnswerFailed, LLMConfig, LLMSession, Scored
from assessor.jobs.llm.parsing import AnswerUnusable
from assessor.jobs.llm.prompts import prompt_messages
from assessor.jobs.selection import topics_select
from assessor.models import Job, JobItem, PromptTemplate, Run, RunAlias, Segment
from assessor.models.keys import published_id
from crucible.kinds import CRUCIBLE
from crucible.models import Chunk, CrucibleRun, Extraction, KnownConfidence, Variant
from crucible.prompts import EXTRACT
from crucible.retrieval import bm25_ranked, segments_all
from crucible.text import Candidate, chunks_split, confidence_of, is_no_answer, report_sentences
from nuggets.banks import Question, bank_questions
from reports.chat_layout import HEADER, field_name
from reports.importing import reports_import
from reports.layout import report_cut
from reports.models import ReportRequest
from reports.texts import request_texts

TEAM = "crucible"
PER_QUESTION = {"short": 1, "long": 5}
DOCUMENTS = 20  # documents retrieved per topic
CHUNKS = 40  # chunks read per topic, from the best document down
NO_LOGPROBS = (
    "the LLM endpoint returned no token log-probabilities, which Crucible ranks its extractions by: "
    "use an endpoint that returns them (logprobs=true)"
)


# --- the answer -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionAnswer:
    extracted_text: str
    condensed_sentence: str
    start: int  # the extracted text's span in the answer
    end: int


def _section(raw: str, name: str) -> tuple[str, int, int] | None:
    """A section's text (stripped) and its span in the answer; None when the answer has no such section."""
    headers = list(HEADER.finditer(raw))
    for index, header in enumerate(headers):
        if field_name(header.group(1)) == name:
            end = headers[index + 1].start() if index + 1 < len(headers) else len(raw)
            body = raw[header.end() : end]
            stripped = body.strip()
            start = header.end() + (body.find(stripped) if stripped else 0)
            return stripped, start, start + len(stripped)
    return None


def extraction_read(raw: str) -> ExtractionAnswer:
    """The answer's extracted text and condensed sentence; an answer without either section is asked again."""
    extracted = _section(raw, "extracted_text")
    condensed = _section(raw, "condensed_sentence")
    if extracted is None or condensed is None:
        missing = "extracted_text" if extracted is None else "condensed_sentence"
        raise AnswerUnusable(f"the answer has no [[ ## {missing} ## ]] section; answer in the sections asked for")
    text, start, end = extracted
    return ExtractionAnswer(text, condensed[0], start, end)


# --- creating the job -------------------------------------------------------------------------------------


def request_query(topic_id: str) -> str:
    request = request_texts([topic_id])[topic_id]
    return " ".join(part for part in (request.problem_statement, request.title, request.background) if part)


def topic_chunks(ranked: list[str], texts: dict[str, str], *, limit: int) -> list[tuple[str, str]]:
    """(docid, chunk) from the best document down, at most `limit`."""
    chunks: list[tuple[str, str]] = []
    for docid in ranked:
        for chunk in chunks_split(texts[docid]):
            if len(chunks) == limit:
                return chunks
            chunks.append((docid, chunk))
    return chunks


def crucible_plan(
    *, bank: str, topics: list[str] | None = None, documents: int = DOCUMENTS, chunks: int = CHUNKS
) -> tuple[dict[str, list[Question]], dict[str, list[tuple[str, str]]]]:
    """The bank's questions and the chunks (docid, text) a job of this selection would read, per topic."""
    if documents < 1 or chunks < 1:
        raise JobRequestInvalid("documents and chunks must be at least 1")
    topic_ids = [topic.id for topic in topics_select(topics)]
    banks = bank_questions(bank, topic_ids)
    if not banks:
        raise JobRequestInvalid(f"no counted question bank named {bank!r} on the topics chosen")
    collection = segments_all()
    texts = {document.docid: document.text for document in collection}
    ranked = bm25_ranked(collection, [request_query(topic_id) for topic_id in banks], k=documents)
    chunked = {
        topic_id: topic_chunks(found, texts, limit=chunks) for topic_id, found in zip(banks, ranked, strict=True)
    }
    return banks, chunked


def _request_check(*, name: str, variant: str, length: str) -> str:
    """Refuse a run name already taken, an unknown variant or length; the variant's stored value."""
    if Run.objects.filter(run_id=name).exists() or RunAlias.objects.filter(alias=name).exists():
        raise JobRequestInvalid(f"A run named {name!r} is stored already: choose another name.")
    output_name_check(kind=CRUCIBLE, name=name, taken=False, family="")
    if variant not in Variant.values:
        raise JobRequestInvalid(f"unknown variant {variant!r}: {' or '.join(Variant.values)}")
    if length not in PER_QUESTION:
        raise JobRequestInvalid(f"unknown report length {length!r}: short or long")
    return Variant(variant).value


def crucible_job_create(
    *,
    name: str,
    bank: str,
    topics: list[str] | None = None,
    variant: str = Variant.ABSTRACTIVE,
    length: str = "short",
    documents: int = DOCUMENTS,
    chunks: int = CHUNKS,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    variant = _request_check(name=name, variant=variant, length=length)
    banks, chunked = crucible_plan(bank=bank, topics=topics, documents=documents, chunks=chunks)
    items = [
        (f"{topic_id}/{position}", {"topic": topic_id, "question": position, "text": question.text})
        for topic_id, questions in banks.items()
        if chunked[topic_id]
        for position, question in enumerate(questions)
    ]
    params = {
        "bank": bank,
        "topics": list(banks),
        "variant": variant,
        "length": length,
        "per_question": PER_QUESTION[length],
        "documents": documents,
        "chunks": chunks,
        "queue": queue or "",
    }
    with transaction.atomic():
        job = job_create(
            kind=CRUCIBLE,
            output_name=name,
            params=params,
            items=items,
            prompts=[EXTRACT.name],
            user=user,
            config=config,
            endpoint=endpoint,
        )
        Chunk.objects.bulk_create(
            (
                Chunk(job=job, topic_id=topic_id, rank=rank, segment_id=docid, text=text)
                for topic_id, found in chunked.items()
                for rank, (docid, text) in enumerate(found)
            ),
            batch_size=1000,
        )
        CrucibleRun.objects.create(
            job=job, run_name=name, bank=bank, variant=variant, per_question=PER_QUESTION[length]
        )
    return job


# --- an item: one question against its topic's chunks -------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    chunk: int
    cache_key: str
    answer: ExtractionAnswer | None
    confidence: float | None
    error: str = ""


def _scored(
    llm: LLMSession, prompt: PromptTemplate, messages: list[dict[str, str]]
) -> tuple[Scored[ExtractionAnswer], float | None]:
    """The answer and its confidence: from the log-probabilities, or for a cached answer the confidence kept
    when it came (asked again when none was)."""
    scored = llm.ask_scored(prompt, messages, extraction_read)
    if scored.from_cache:
        known = KnownConfidence.objects.filter(cache_key=scored.cache_key).values_list("confidence", flat=True).first()
        if known is not None:
            return scored, known
        scored = llm.ask_scored(prompt, messages, extraction_read, cached=False)
    if scored.logprobs is None:
        if llm.job_id is not None:
            CrucibleRun.objects.filter(job_id=llm.job_id).update(error=NO_LOGPROBS)
        raise ItemUnworkable(NO_LOGPROBS)
    confidence = confidence_of(scored.logprobs, scored.text, scored.value.start, scored.value.end)
    if confidence is not None:
        KnownConfidence.objects.bulk_create(
            [KnownConfidence(cache_key=scored.cache_key, confidence=confidence)], ignore_conflicts=True
        )
    return scored, confidence


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> list[Reading]:
    if CrucibleRun.objects.filter(job=job, error=NO_LOGPROBS).exists():
        raise ItemUnworkable(NO_LOGPROBS)
    topic_id = item.payload["topic"]
    request = request_texts([topic_id])[topic_id]
    prompt = job_prompt(job, EXTRACT.name)
    readings = []
    for chunk_id, text in Chunk.objects.filter(job=job, topic_id=topic_id).values_list("pk", "text"):
        messages = prompt_messages(
            prompt,
            query_title=request.title,
            query_background=request.background,
            query_problem=request.problem_statement,
            nugget_text=item.payload["text"],
            source_document=text,
        )
        try:
            scored, confidence = _scored(llm, prompt, messages)
        except LLMAnswerFailed as failed:
            # One pair that could not be read is no candidate; the others still are.
            readings.append(Reading(chunk_id, "", None, None, f"{failed.reason}\n{failed.raw}"))
            continue
        readings.append(Reading(chunk_id, scored.cache_key, scored.value, confidence))
    return readings


def item_store(*, job: Job, item: JobItem, result: list[Reading]) -> None:
    Extraction.objects.bulk_create(
        Extraction(
            job=job,
            chunk_id=reading.chunk,
            question=item.payload["question"],
            extracted_text=reading.answer.extracted_text if reading.answer else "",
            condensed_sentence=reading.answer.condensed_sentence if reading.answer else "",
            confidence=reading.confidence,
            no_answer=reading.answer is not None and is_no_answer(reading.answer.extracted_text),
            cache_key=reading.cache_key,
            error=reading.error,
        )
        for reading in result
    )
    # The job's items finish one at a time past this lock: the one that finds no other unfinished makes the run.
    Job.objects.select_for_update().filter(pk=job.pk).first()
    if not JobItem.objects.filter(job=job).exclude(status=JobItem.Status.DONE).exists():
        crucible_run_make(job)


# --- the run ----------------------------------------------------------------------------------------------


def candidates_of(job: Job, variant: str) -> dict[str, list[Candidate]]:
    """Per topic, the extractions that answer (not empty, not "no answer", with a confidence)."""
    rows = (
        Extraction.objects.filter(job=job, no_answer=False, confidence__isnull=False, error="")
        .values_list(
            "chunk__topic_id",
            "question",
            "chunk__rank",
            "chunk__segment_id",
            "extracted_text",
            "condensed_sentence",
            "confidence",
        )
        .order_by("chunk__topic_id", "question", "chunk__rank")
    )
    found: dict[str, list[Candidate]] = {}
    for topic_id, question, rank, docid, extracted, condensed, confidence in rows:
        text = condensed if variant == Variant.ABSTRACTIVE else extracted
        text = re.sub(r"\s+", " ", text).strip()
        if text and not is_no_answer(text) and confidence is not None:
            found.setdefault(topic_id, []).append(Candidate(question, rank, docid, text, confidence))
    return found


def report_of(candidates: list[Candidate], *, k: int, request: ReportRequest | None) -> list[Candidate]:
    kept = report_sentences(candidates, k=k)
    limit = request.length_limit if request is not None else None
    if limit is None:
        return kept
    return kept[: report_cut([candidate.text for candidate in kept], *limit)]


def report_lines(job: Job, crucible: CrucibleRun) -> list[dict]:
    topics = job.params["topics"]
    candidates = candidates_of(job, crucible.variant)
    requests = ReportRequest.objects.in_bulk(topics)
    cited = {c.docid for found in candidates.values() for c in found}
    documents = {
        docid: {"id": docid, "text": text, "title": title}
        for docid, text, title in Segment.objects.filter(docid__in=cited).values_list("docid", "text", "title")
    }
    metadata: dict[str, object] = {
        "team_id": TEAM,
        "run_id": crucible.run_name,
        "bank": crucible.bank,
        "variant": crucible.variant,
        "per_question": crucible.per_question,
        "model": job.model,
        "endpoint": job.endpoint_name,
        "prompt": f"{EXTRACT.name} v{job.prompt_versions[EXTRACT.name]}",
        "job": job.pk,
    }
    lines = []
    for topic_id in topics:
        kept = report_of(candidates.get(topic_id, []), k=crucible.per_question, request=requests.get(topic_id))
        lines.append(
            {
                # The report file names the topic as its campaign's files do; the import maps it back to its key.
                "metadata": metadata | {"topic_id": published_id(topic_id)},
                "responses": [{"text": c.text, "citations": [c.docid]} for c in kept],
                "documents": {c.docid: documents[c.docid] for c in kept},
            }
        )
    return lines


def crucible_run_make(job: Job) -> CrucibleRun:
    """Write the job's reports as an AutoJudge report file and import it: the run, stored as any imported run."""
    crucible = CrucibleRun.objects.get(job=job)
    if (
        Run.objects.filter(run_id=crucible.run_name).exists()
        or RunAlias.objects.filter(alias=crucible.run_name).exists()
    ):
        # Stored meanwhile by someone else: never write into another's run.
        crucible.error = f"a run named {crucible.run_name!r} was stored while the job ran: the reports were not stored"
        crucible.save(update_fields=["error"])
        return crucible
    lines = report_lines(job, crucible)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{crucible.run_name}.crucible.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        try:
            result = reports_import(path=path, user=job.created_by)
        except ImportFailure as failure:
            crucible.error = f"the run could not be stored: {failure}"
            crucible.save(update_fields=["error"])
            return crucible
    crucible.run = Run.objects.get(run_id=crucible.run_name)
    crucible.made_from = result.batch
    crucible.error = ""
    crucible.save(update_fields=["run", "made_from", "error"])
    return crucible
