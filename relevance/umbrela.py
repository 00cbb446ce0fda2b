"""UMBRELA-style relevance grades (0-3) by an LLM for the pool of each topic.

The pool of a topic is every segment the chosen runs cite or list as
references for it. One job item is one (topic, segment) pair; the grades are
stored as a qrels source named by the job, each Qrel carrying the job.
"""

from functools import partial

from django.contrib.auth.models import User
from django.db import transaction

from assessor.collection import kinds as collection_kinds
from assessor.jobs.engine import ItemUnworkable, job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.parsing import parse_final_score, parse_single_label
from assessor.jobs.llm.prompts import prompt_messages, prompt_sha256
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import (
    AnswerReference,
    Citation,
    Job,
    JobItem,
    PromptTemplate,
    Qrel,
    QrelSource,
    Segment,
    Topic,
)
from relevance.kinds import UMBRELA
from relevance.prompts import UMBRELA_PROJECT

GRADES = ("0", "1", "2", "3")


def grade_parser(prompt: PromptTemplate):
    """How the version's answer gives the grade: UMBRELA's `##final score: N`, or the first version's bare grade."""
    if prompt.sha256 == prompt_sha256(UMBRELA_PROJECT):
        return lambda raw: int(parse_single_label(raw, allowed=GRADES))
    return partial(parse_final_score, allowed=range(4))


def topic_pools(*, topics: list[Topic], runs) -> dict[str, list[str]]:
    """topic id -> sorted docids the runs cite or reference for it."""
    pools: dict[str, set[str]] = {topic.id: set() for topic in topics}
    cited = Citation.objects.filter(sentence__answer__run__in=runs, sentence__answer__topic__in=topics).values_list(
        "sentence__answer__topic_id", "segment_id"
    )
    listed = AnswerReference.objects.filter(answer__run__in=runs, answer__topic__in=topics).values_list(
        "answer__topic_id", "segment_id"
    )
    for rows in (cited, listed):
        for topic_id, docid in rows.iterator(chunk_size=5000):
            pools[topic_id].add(docid)
    return {topic_id: sorted(docids) for topic_id, docids in pools.items() if docids}


def umbrela_job_create(
    *,
    name: str,
    runs: list[str] | None = None,
    topics: list[str] | None = None,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    output_name_check(
        kind=UMBRELA,
        name=name,
        taken=QrelSource.objects.filter(name=name).exists(),
        family=collection_kinds.QRELS_FAMILY,
    )
    topic_rows = topics_select(topics)
    run_rows = runs_select(runs)
    pools = topic_pools(topics=topic_rows, runs=run_rows)
    items = [
        (f"{topic_id}|{docid}", {"topic": topic_id, "segment": docid})
        for topic_id, docids in pools.items()
        for docid in docids
    ]
    params = {
        "runs": [run.run_id for run in run_rows] if runs else [],
        "topics": [topic.id for topic in topic_rows] if topics else [],
        "queue": queue or "",
    }
    with transaction.atomic():
        job = job_create(
            kind=UMBRELA,
            output_name=name,
            params=params,
            items=items,
            prompts=["umbrela"],
            user=user,
            config=config,
            endpoint=endpoint,
            family=collection_kinds.QRELS_FAMILY,
        )
        QrelSource.objects.create(name=name, job=job, source=job_source(job, collection_kinds.QRELS_FAMILY))
    return job


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> int:
    topic = Topic.objects.get(pk=item.payload["topic"])
    segment = Segment.objects.get(pk=item.payload["segment"])
    if not segment.text:
        raise ItemUnworkable(f"segment {segment.docid} has no text in the collection; import it to grade it")
    prompt = job_prompt(job, "umbrela")
    messages = prompt_messages(prompt, query=topic.query, passage=segment.text)
    return llm.ask(prompt, messages, grade_parser(prompt))


def item_store(*, job: Job, item: JobItem, result: int) -> None:
    Qrel.objects.create(
        source=QrelSource.objects.get(job=job),
        topic_id=item.payload["topic"],
        segment_id=item.payload["segment"],
        grade=result,
        job=job,
    )
