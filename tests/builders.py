"""Small builders for test objects: make_<thing>(**overrides).

The conftest.py files offer the common objects built from these as fixtures.
"""

from collections.abc import Sequence
from itertools import count
from pathlib import Path

from django.contrib.auth.models import User

from assessor.collection import kinds as collection_kinds
from assessor.models import (
    Answer,
    AssessorWork,
    Citation,
    ImportBatch,
    LabelSource,
    Qrel,
    QrelSource,
    Run,
    Segment,
    Sentence,
    Topic,
)
from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role, user_set_role
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from assignment.selectors import FAMILY as CONDITIONS
from nuggets import kinds as nugget_kinds
from nuggets.models import Nugget, NuggetSet
from support.models import SupportLabel
from support.selectors import FAMILY as METHODS

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"

_serial = count(1)


def make_user(role: Role = Role.ASSESSOR, username: str | None = None, password: str = "pw-for-tests") -> User:
    user = User.objects.create_user(username=username or f"user{next(_serial)}", password=password)
    user_set_role(user, role)
    return user


def make_batch(**kw) -> ImportBatch:
    kw.setdefault("kind", collection_kinds.RUN)
    kw.setdefault("file_name", "test.jsonl")
    kw.setdefault("sha256", "0" * 64)
    return ImportBatch.objects.create(**kw)


def source_of(family: str, name: str, kind: str = LabelSource.Kind.FILE, **fields) -> LabelSource:
    """The label source of a name (made as `kind` if new): what every label, nugget set and qrels source needs."""
    source, _ = LabelSource.objects.get_or_create(family=family, name=name, defaults={"kind": kind, **fields})
    return source


def make_topic(topic_id: str | None = None, query: str = "what is a nugget") -> Topic:
    return Topic.objects.create(id=topic_id or f"2024-{next(_serial)}", query=query)


def make_segment(docid: str | None = None, text: str = "A segment of text.") -> Segment:
    return Segment.objects.create(docid=docid or f"msmarco_v2.1_doc_00_{next(_serial)}#0_0", text=text)


def make_qrel(topic: Topic, segment: Segment, grade: int = 2, source: str = "nist") -> Qrel:
    qrel_source, _ = QrelSource.objects.get_or_create(name=source, defaults={"source": source_of("qrels", source)})
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


def make_nugget_set(
    topic: Topic,
    nuggets: Sequence[tuple[str, str]] = (("a fact", "vital"),),
    *,
    texts: Sequence[str] | None = None,
    importances: Sequence[str] | None = None,
    name: str = "auto_edit",
    kind: str = NuggetSet.Kind.AUTO_EDIT,
    batch: ImportBatch | None = None,
) -> NuggetSet:
    """A nugget set made by an imported file, its nuggets given one of three ways.

    `nuggets` as (text, importance) pairs; or `texts`, every nugget vital; or
    `importances`, the texts then being "nugget <position>".
    """
    if texts is not None:
        nuggets = [(text, "vital") for text in texts]
    elif importances is not None:
        nuggets = [(f"nugget {position}", importance) for position, importance in enumerate(importances)]
    batch = batch or make_batch(kind=nugget_kinds.IMPORT_NUGGETS)
    nugget_set = NuggetSet.objects.create(
        topic=topic, kind=kind, name=name, source=source_of("nuggets", name, imported_from=batch), imported_from=batch
    )
    for position, (text, importance) in enumerate(nuggets):
        Nugget.objects.create(
            nugget_set=nugget_set, position=position, text=text, importance=importance, imported_from=batch
        )
    # As the import of a file would: the topic's kept scores follow its nuggets.
    scores_refresh(topics=[topic.pk])
    return nugget_set


def nuggets_of(nugget_set: NuggetSet) -> list[Nugget]:
    return list(nugget_set.nuggets.order_by("position"))


def make_assignment_label(
    answer: Answer, nugget: Nugget, value: str, *, assigner: str = "manual", kind: str = "manual", refresh: bool = True
) -> AssignmentLabel:
    """A label made by an imported file; its answer's kept scores refreshed as the import would (unless the
    caller refreshes once for many)."""
    batch = make_batch(kind="assignments")
    label = AssignmentLabel.objects.create(
        answer=answer, nugget=nugget, assigner=assigner, assigner_kind=kind, label=value,
        source=source_of("assignment", assigner, imported_from=batch), imported_from=batch,
    )  # fmt: skip
    if refresh:
        scores_refresh(
            family=CONDITIONS, columns=(nugget.nugget_set.name, assigner), topics=[answer.topic_id], answers=[answer.pk]
        )
    return label


def make_support_label(
    answer: Answer,
    sentence_index: int,
    value: str | int,
    *,
    method: str = "scratch",
    kind: str = "scratch",
    refresh: bool = True,
) -> SupportLabel:
    """A label on the first citation of the answer's sentence."""
    citation = Citation.objects.get(sentence__answer=answer, sentence__index=sentence_index, position=0)
    batch = make_batch(kind="support")
    label = SupportLabel.objects.create(
        citation=citation, method=method, method_kind=kind, label=value,
        source=source_of("support", method, imported_from=batch), imported_from=batch,
    )
    if refresh:
        scores_refresh(family=METHODS, columns=(method,), topics=[answer.topic_id], answers=[answer.pk])
    return label


def make_collection(size: int) -> None:
    """`size` topics and runs, every run answering every topic, with qrels, nuggets and labels."""
    topics = [make_topic(f"2024-{size}{i}", query=f"query {i}") for i in range(size)]
    runs = [make_run(f"run{size}-{i}") for i in range(size)]
    assessor = make_user(Role.ASSESSOR, username=f"assessor{size}")
    for t, topic in enumerate(topics):
        segments = [make_segment(f"doc{size}_{t}_{k}#0_0", text=f"text {k}") for k in range(size)]
        for segment in segments:
            make_qrel(topic, segment, grade=2, source="nist")
            make_qrel(topic, segment, grade=1, source="umbrela")
        nugget_set = make_nugget_set(topic, nuggets=[(f"fact {k}", "vital" if k % 2 else "okay") for k in range(size)])
        nuggets = list(nugget_set.nuggets.all())
        AssessorWork.objects.create(topic=topic, assessor=assessor, kind=assignment_kinds.ASSIGN_MANUAL)
        for run in runs:
            answer = make_answer(run, topic, [(f"sentence {k}", [segments[k]]) for k in range(size)])
            for nugget in nuggets:
                make_assignment_label(answer, nugget, "support", refresh=False)
            for k in range(size):
                make_support_label(answer, k, SupportLabel.Label.FS, refresh=False)
    scores_refresh(discover=True)


def read_scores_tsv(text: str) -> dict[tuple[str, str, str], float]:
    """The table `export_scores` writes, by (run, topic, metric)."""
    lines = text.splitlines()
    assert lines[0] == "run_id\ttopic_id\tmetric\tvalue"
    table = {}
    for line in lines[1:]:
        run, topic, metric, value = line.split("\t")
        table[run, topic, metric] = float(value)
    return table
