"""A generated ARGUE-style request set for the benchmarks: reports of N sentences citing two documents each, and a
gold bank of questions with two answers each, every answer supported by one document.

On a topic, documents D0..D(2Q-1) support the answers (question q: answers on D(2q) and D(2q+1)); sentence k of
the report of run r cites D((r + k) mod 2Q) and D((r + k + 7) mod 2Q), so each sentence is asked 2 citations and
2 gold answers: 4 calls a sentence. Reports carry no length limit.
"""

from dataclasses import dataclass

from django.db import transaction

from assessor.models import Answer, Citation, ImportBatch, LabelSource, Run, Segment, Sentence, Topic
from assessor.sources import source_claim
from nuggets import kinds as nugget_kinds
from nuggets.banks import Answer as GoldAnswer
from nuggets.banks import Question, bank_store
from reports.kinds import IMPORT_REQUESTS
from reports.models import ReportRequest

WORDS = "bees honey nectar hive flowers pollen wax queen workers stings summer winter colony dance".split()


@dataclass(frozen=True)
class ArgueSet:
    topics: list[str]
    runs: list[str]
    bank: str


def argue_set_build(*, tag: str, topics: int, runs: int, sentences: int, questions: int) -> ArgueSet:
    name = f"bench-{tag}"
    documents = 2 * questions
    with transaction.atomic():
        batch = ImportBatch.objects.create(kind=IMPORT_REQUESTS, file_name=f"{name}.jsonl", sha256="0" * 64)
        made = Run.objects.bulk_create(Run(run_id=f"{name}-r{r:02d}") for r in range(runs))
        bank_source = source_claim(
            family=nugget_kinds.LABEL_FAMILY, name=f"{name}-gold", kind=LabelSource.Kind.FILE, batch=batch
        )
        topic_ids = []
        for t in range(topics):
            title = f"{WORDS[t % len(WORDS)]} {WORDS[(t + 3) % len(WORDS)]} request {t}"
            topic = Topic.objects.create(id=f"{name}-t{t:03d}", query=title)
            ReportRequest.objects.create(topic=topic, title=title, imported_from=batch)
            segments = Segment.objects.bulk_create(
                Segment(
                    docid=f"{name}-t{t:03d}-d{d:02d}",
                    text=f"Document {d} of request {t}: {' '.join(WORDS[(d + k) % len(WORDS)] for k in range(60))}.",
                )
                for d in range(documents)
            )
            answers = Answer.objects.bulk_create(
                Answer(run=run, topic=topic, text=f"Report {r} on {title}.", words=5) for r, run in enumerate(made)
            )
            rows = Sentence.objects.bulk_create(
                Sentence(answer=answer, index=k, text=f"Report {r} sentence {k} on {WORDS[(t + r + k) % len(WORDS)]}.")
                for r, answer in enumerate(answers)
                for k in range(sentences)
            )
            Citation.objects.bulk_create(
                Citation(
                    sentence=sentence, position=position, segment=segments[(r + sentence.index + step) % documents]
                )
                for sentence, r in ((row, index // sentences) for index, row in enumerate(rows))
                for position, step in enumerate((0, 7))
            )
            bank = [
                Question(
                    f"Question {q} of request {t}?",
                    importance="vital" if q % 2 == 0 else "okay",
                    rule="or" if q % 3 else "and",
                    answers=(
                        GoldAnswer(f"{WORDS[q % len(WORDS)]}", (segments[2 * q].docid,)),
                        GoldAnswer(f"{WORDS[(q + 1) % len(WORDS)]}", (segments[2 * q + 1].docid,)),
                    ),
                )
                for q in range(questions)
            ]
            bank_store(topic_id=topic.id, name=f"{name}-gold", questions=bank, source=bank_source, imported_from=batch)
            topic_ids.append(topic.id)
    return ArgueSet(topics=topic_ids, runs=[run.run_id for run in made], bank=f"{name}-gold")
