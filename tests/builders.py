"""Small builders for test objects: make_<thing>(**overrides)."""

from itertools import count

from django.contrib.auth.models import User

from assessor.models import Answer, Citation, ImportBatch, Qrel, QrelSource, Run, Segment, Sentence, Topic
from assessor.work.roles import Role, user_set_role

_serial = count(1)


def make_user(role: Role = Role.ASSESSOR, username: str | None = None, password: str = "pw-for-tests") -> User:
    user = User.objects.create_user(username=username or f"user{next(_serial)}", password=password)
    user_set_role(user, role)
    return user


def make_batch(**kw) -> ImportBatch:
    kw.setdefault("kind", ImportBatch.Kind.RUN)
    kw.setdefault("file_name", "test.jsonl")
    kw.setdefault("sha256", "0" * 64)
    return ImportBatch.objects.create(**kw)


def make_topic(topic_id: str | None = None, query: str = "what is a nugget") -> Topic:
    return Topic.objects.create(id=topic_id or f"2024-{next(_serial)}", query=query)


def make_segment(docid: str | None = None, text: str = "A segment of text.") -> Segment:
    return Segment.objects.create(docid=docid or f"msmarco_v2.1_doc_00_{next(_serial)}#0_0", text=text)


def make_qrel(topic: Topic, segment: Segment, grade: int = 2, source: str = "nist") -> Qrel:
    qrel_source, _ = QrelSource.objects.get_or_create(name=source)
    return Qrel.objects.create(source=qrel_source, topic=topic, segment=segment, grade=grade)


def make_run(run_id: str | None = None) -> Run:
    return Run.objects.create(run_id=run_id or f"run{next(_serial)}")


def make_answer(run: Run, topic: Topic, sentences: list[tuple[str, list[Segment]]] | None = None) -> Answer:
    """An answer from (sentence text, cited segments) pairs; the references are the distinct cited segments."""
    sentences = sentences if sentences is not None else [("An answer sentence.", [])]
    text = " ".join(sentence for sentence, _ in sentences)
    answer = Answer.objects.create(run=run, topic=topic, text=text, words=len(text.split()))
    references: list[str] = []
    for index, (sentence_text, cited) in enumerate(sentences):
        sentence = Sentence.objects.create(answer=answer, index=index, text=sentence_text)
        for position, segment in enumerate(cited):
            if segment.docid not in references:
                references.append(segment.docid)
                answer.references.create(rank=len(references) - 1, segment=segment)
            Citation.objects.create(
                sentence=sentence, position=position, segment=segment, reference_rank=references.index(segment.docid)
            )
    return answer
