"""A campaign's collection at TREC 2024 RAG scale, written in bulk for bench_campaigns.

Each campaign gets the same topic ids and run ids (as the same files imported into two campaigns give them): its
topics, its qrels source with a grade per segment, its runs answering every topic with sentences citing their
references, and done jobs. The segments are the shared corpus, written once. Rows go in with `bulk_create` a
run at a time, so that memory stays flat; the timed pages read the rows, not how they came in (the importers
are timed by bench_collection).
"""

import random
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from assessor.collection import kinds as collection_kinds
from assessor.models import (
    Answer,
    AnswerReference,
    Campaign,
    Citation,
    Job,
    LabelSource,
    Qrel,
    QrelSource,
    Run,
    Segment,
    Sentence,
    Topic,
)
from assessor.models.keys import topic_keys
from assessor.models.scope import campaign_scope
from assessor.sources import source_claim
from assignment import kinds as assignment_kinds
from bench.collection_data import WORDS

SEGMENTS_PER_TOPIC = 20
SENTENCE_WORDS = 20
BATCH = 5000


@dataclass(frozen=True)
class CampaignShape:
    topics: int = 301
    runs: int = 146
    sentences: int = 10  # an answer's sentences, each citing 0-3 of its references
    jobs: int = 30


def topic_ids(count: int) -> list[str]:
    return [f"2024-{900001 + n}" for n in range(count)]


def run_ids(count: int) -> list[str]:
    return [f"bench_run_{n:03d}" for n in range(1, count + 1)]


def docid(topic_id: str, index: int) -> str:
    return f"msmarco_v2.1_doc_bench_{topic_id}#{index}_0"


def corpus_ensure(shape: CampaignShape, *, seed: int = 0) -> int:
    """The segments every campaign's topics cite (one corpus, keyed by document id); the number written."""
    rng = random.Random(seed)
    segments = (
        Segment(docid=docid(topic_id, index), text=" ".join(rng.choices(WORDS, k=100)))
        for topic_id in topic_ids(shape.topics)
        for index in range(SEGMENTS_PER_TOPIC)
    )
    return len(Segment.objects.bulk_create(segments, batch_size=BATCH, ignore_conflicts=True))


def campaign_collection_build(campaign: Campaign, shape: CampaignShape, *, seed: int = 0) -> dict[str, int]:
    """Fill `campaign` (its topics, qrels, runs with their answers, and jobs); the rows written by kind."""
    rng = random.Random(seed)
    counts = {"topics": 0, "qrels": 0, "runs": 0, "answers": 0, "sentences": 0, "citations": 0, "jobs": 0}
    with campaign_scope(campaign):
        keys = topic_keys(topic_ids(shape.topics))
        with transaction.atomic():
            Topic.objects.bulk_create(
                Topic(id=key, campaign=campaign, query=f"what is {' '.join(rng.choices(WORDS, k=5))}?")
                for key in keys.values()
            )
            counts["topics"] = len(keys)
            counts["qrels"] = _qrels_write(keys, rng)
            counts["jobs"] = _jobs_write(shape.jobs)
        for run_id in run_ids(shape.runs):
            with transaction.atomic():
                run = Run.objects.create(run_id=run_id)
                written = _answers_write(run, keys, shape.sentences, rng)
            counts["runs"] += 1
            for kind, count in written.items():
                counts[kind] += count
    return counts


def _qrels_write(keys: dict[str, str], rng: random.Random) -> int:
    source = QrelSource.objects.create(
        name="nist",
        source=source_claim(family=collection_kinds.QRELS_FAMILY, name="nist", kind=LabelSource.Kind.FILE),
    )
    qrels = [
        Qrel(source=source, topic_id=key, segment_id=docid(topic_id, index), grade=rng.choice((0, 0, 0, 1, 2, 3)))
        for topic_id, key in keys.items()
        for index in range(SEGMENTS_PER_TOPIC)
    ]
    return len(Qrel.objects.bulk_create(qrels, batch_size=BATCH))


def _jobs_write(count: int) -> int:
    """Done jobs of the LLM's nugget assignment, one output each, as a campaign's jobs list holds them."""
    now = timezone.now()
    jobs = [
        Job(
            kind=assignment_kinds.AUTO_ASSIGN,
            output_family=assignment_kinds.LABEL_FAMILY,
            output_name=f"bench-llm-{n}",
            model="bench-model",
            status=Job.Status.DONE,
            total_items=100,
            done_items=100,
            started_at=now,
            finished_at=now,
        )
        for n in range(count)
    ]
    return len(Job.objects.bulk_create(jobs))


def _answers_write(run: Run, keys: dict[str, str], sentences: int, rng: random.Random) -> dict[str, int]:
    """The run's answer to every topic: its references (the topic's segments), sentences and their citations."""
    texts = {key: [_sentence(rng) for _ in range(sentences)] for key in keys.values()}
    answers = Answer.objects.bulk_create(
        (
            Answer(run=run, topic_id=key, text=" ".join(texts[key]), words=SENTENCE_WORDS * sentences)
            for key in keys.values()
        ),
        batch_size=BATCH,
    )
    topic_of = {key: topic_id for topic_id, key in keys.items()}
    references = [
        AnswerReference(answer=answer, rank=rank, segment_id=docid(topic_of[answer.topic_id], rank))
        for answer in answers
        for rank in range(SEGMENTS_PER_TOPIC)
    ]
    AnswerReference.objects.bulk_create(references, batch_size=BATCH)
    rows = Sentence.objects.bulk_create(
        (
            Sentence(answer=answer, index=index, text=text)
            for answer in answers
            for index, text in enumerate(texts[answer.topic_id])
        ),
        batch_size=BATCH,
    )
    citations = []
    for sentence in rows:
        topic_id = topic_of[sentence.answer.topic_id]
        for position, rank in enumerate(rng.sample(range(SEGMENTS_PER_TOPIC), k=rng.choice((0, 1, 1, 2, 2, 3)))):
            citations.append(
                Citation(sentence=sentence, position=position, segment_id=docid(topic_id, rank), reference_rank=rank)
            )
    Citation.objects.bulk_create(citations, batch_size=BATCH)
    return {"answers": len(answers), "sentences": len(rows), "citations": len(citations)}


def _sentence(rng: random.Random) -> str:
    text = " ".join(rng.choices(WORDS, k=SENTENCE_WORDS))
    return text[0].upper() + text[1:] + "."
