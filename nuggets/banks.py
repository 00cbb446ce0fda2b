"""Question banks: the report family's question nuggets, read and written in one place.

A bank is a topic's nugget set of form `questions` (`NuggetSet.Form.QUESTIONS`): each nugget is
a question, optionally with an importance and with gold answers (`GoldAnswer`, each with the
documents that support it, combined by the question's OR/AND rule). Banks of one name across
topics form one bank source, like a condition's nuggets. Jobs that make or use banks (PrefNugget,
the query-only bank, grading, ARGUE-style judging, Crucible) go through these functions, so the
lifecycle rule (which banks count) and the question's id are decided here and nowhere else.
"""

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction

from assessor.models import ImportBatch, Job, LabelSource
from nuggets.models import GoldAnswer, Nugget, NuggetSet
from nuggets.selectors import nugget_sets_counted_q

QUESTIONS = NuggetSet.Form.QUESTIONS


def question_id(text: str) -> str:
    """The AutoJudge tools' id of a question: the md5 of its text (UTF-8), in hex."""
    return hashlib.md5(text.encode()).hexdigest()


@dataclass(frozen=True)
class Answer:
    text: str
    documents: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    """A question of a bank as the jobs and scores read it."""

    text: str
    importance: str = ""  # vital, okay or blank
    rule: str = ""  # or, and, or blank (open-ended)
    answers: tuple[Answer, ...] = ()
    # The stored nugget (None for a question not yet stored).
    pk: int | None = field(default=None, compare=False)

    @property
    def question_id(self) -> str:
        return question_id(self.text)


def bank_sets(name: str, topic_ids: Iterable[str] | None = None, *, counted: bool = True):
    """The question sets of a bank name (those that count, unless `counted=False`)."""
    sets = NuggetSet.objects.filter(name=name, form=QUESTIONS)
    if topic_ids is not None:
        sets = sets.filter(topic_id__in=list(topic_ids))
    if counted:
        sets = sets.filter(nugget_sets_counted_q())
    return sets


def bank_questions(
    name: str, topic_ids: Iterable[str] | None = None, *, counted: bool = True
) -> dict[str, list[Question]]:
    """Per topic, the questions of the bank `name` in their order (three queries).

    By default only counted banks: submitted ones, not made by a job still running
    (`nuggets.selectors.nugget_sets_counted_q`); a topic without a counted bank is absent.
    """
    sets = dict(bank_sets(name, topic_ids, counted=counted).values_list("pk", "topic_id"))
    nuggets = list(
        Nugget.objects.filter(nugget_set_id__in=list(sets))
        .order_by("nugget_set_id", "position", "id")
        .values_list("pk", "nugget_set_id", "text", "importance", "answer_rule")
    )
    answers: dict[int, list[Answer]] = {}
    for nugget_id, text, documents in (
        GoldAnswer.objects.filter(nugget_id__in=[row[0] for row in nuggets])
        .order_by("nugget_id", "position")
        .values_list("nugget_id", "text", "documents")
    ):
        answers.setdefault(nugget_id, []).append(Answer(text=text, documents=tuple(documents)))
    banks: dict[str, list[Question]] = {topic_id: [] for topic_id in sets.values()}
    for pk, set_id, text, importance, rule in nuggets:
        banks[sets[set_id]].append(
            Question(text=text, importance=importance, rule=rule, answers=tuple(answers.get(pk, ())), pk=pk)
        )
    return dict(sorted(banks.items()))


def bank_names(*, counted: bool = True) -> list[str]:
    """Every name some topic's question bank has: by default, of a bank that counts (submitted, not made by a
    job still running), so that the jobs' and pages' choices offer no bank still being written."""
    sets = NuggetSet.objects.filter(form=QUESTIONS)
    if counted:
        sets = sets.filter(nugget_sets_counted_q())
    return sorted(set(sets.values_list("name", flat=True)))


@transaction.atomic
def bank_store(
    *,
    topic_id: str,
    name: str,
    questions: Sequence[Question],
    source: LabelSource,
    kind: str = NuggetSet.Kind.AUTO,
    job: Job | None = None,
    imported_from: ImportBatch | None = None,
    created_by: User | None = None,
    status: str = NuggetSet.Status.SUBMITTED,
) -> NuggetSet:
    """A new bank of one topic with its questions and gold answers, made by exactly one maker."""
    maker = {"job": job, "imported_from": imported_from, "created_by": created_by}
    nugget_set = NuggetSet.objects.create(
        topic_id=topic_id, kind=kind, name=name, source=source, form=QUESTIONS, status=status, **maker
    )
    nuggets = Nugget.objects.bulk_create(
        Nugget(
            nugget_set=nugget_set,
            position=position,
            text=question.text,
            importance=question.importance,
            answer_rule=question.rule,
            **maker,
        )
        for position, question in enumerate(questions)
    )
    GoldAnswer.objects.bulk_create(
        GoldAnswer(nugget=nugget, position=position, text=answer.text, documents=list(answer.documents))
        for nugget, question in zip(nuggets, questions, strict=True)
        for position, answer in enumerate(question.answers)
    )
    return nugget_set
