"""People's grades: giving the work (with its bank), the report pages, saving one grade, submitting, progress.

An assessor grades every report of a topic 0-5 on every question of the bank the organizer chose when giving
the work (`AssessorWork.nugget_set_name`), one report a page, in an order shuffled once per assessor and topic.
The pages name a report by its position and a token (assessor.work.judging.answer_token), never by run or
answer id, and show no grade but this work's own: no LLM's, no other person's. Saves go through the judging
core (assessor.work.judging): the work locked and checked open at the page's version, replays and changes
made in another tab handled, the active time credited to the grade.
"""

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count

from assessor.models import Answer, AssessorWork, Sentence, Topic
from assessor.work.judging import (
    JudgeError,
    Replayed,
    answer_at,
    answer_token,
    label_write,
    locked_open_work,
    position_choose,
    shuffled,
)
from assessor.work.kit import WorkProgress, labels_counted_by_work, progress_rows
from assessor.work.services import WorkError, person_source_claim, work_give, work_submit_mark
from grades.kinds import GRADE_WORK, GRADES_FAMILY
from grades.models import GRADES, GradeLabel
from nuggets.banks import QUESTIONS, Question, bank_questions, bank_sets
from nuggets.models import Nugget, NuggetSet
from nuggets.selectors import nugget_sets_counted_q

PEOPLE_SOURCE = "people"  # the source people's grades go into unless the organizer names another


def topic_bank_names(topic_id: str) -> list[str]:
    """The names of the topic's counted question banks."""
    banks = NuggetSet.objects.filter(topic_id=topic_id, form=QUESTIONS).filter(nugget_sets_counted_q())
    return sorted(set(banks.values_list("name", flat=True)))


def grade_work_give(
    *, topic: Topic, assessor: User, kind: str = GRADE_WORK, by: User | None, name: str = "", bank: str = ""
) -> AssessorWork:
    """The registry's `WorkPage.give`: the topic's grading on `bank` (the topic's only bank when not named),
    into a people's source."""
    if not bank:
        names = topic_bank_names(topic.pk)
        if len(names) != 1:
            raise WorkError(f"Topic {topic.pk} has {len(names) or 'no'} question banks: name the bank to grade on.")
        bank = names[0]
    if not bank_sets(bank, [topic.pk]).exists():
        raise WorkError(f"Topic {topic.pk} has no submitted question bank {bank!r}.")
    source = person_source_claim(family=GRADES_FAMILY, name=name or PEOPLE_SOURCE, by=by)
    return work_give(topic=topic, assessor=assessor, kind=kind, by=by, source=source, nugget_set_name=bank)


def report_order(work: AssessorWork) -> list[int]:
    """The topic's reports (answer ids) in the order this assessor sees them."""
    ids = list(Answer.objects.filter(topic_id=work.topic_id).order_by().values_list("pk", flat=True))
    return shuffled(ids, assessor_id=work.assessor_id, topic_id=work.topic_id)


def work_questions(work: AssessorWork) -> list[Question]:
    """The questions of the work's bank on its topic, in the bank's order ([] while the bank is not counted)."""
    return bank_questions(work.nugget_set_name, [work.topic_id]).get(work.topic_id, [])


def _given(work: AssessorWork, questions: Sequence[Question]) -> dict[tuple[int, int | None], int]:
    """(answer, question) -> the grade this work's source holds, for the bank's questions."""
    if work.source_id is None:
        return {}
    rows = GradeLabel.objects.filter(
        source_id=work.source_id, topic_id=work.topic_id, nugget_id__in=[q.pk for q in questions]
    )
    return {(answer, nugget): label for answer, nugget, label in rows.values_list("answer_id", "nugget_id", "label")}


@dataclass(frozen=True)
class Row:
    number: int
    question: Question
    current: str  # the stored grade as the page posts it, "" for none


@dataclass(frozen=True)
class ReportPage:
    number: int  # 1-based position of the report in the assessor's order
    total_answers: int  # the frame's name for the number of pages: here, reports
    answers_done: int  # reports with every question graded
    labels_done: int
    labels_total: int
    next_incomplete: int | None
    frozen: bool
    token: str
    sentences: list[str]
    rows: list[Row]
    waiting: str = ""
    postedit: bool = False

    @property
    def answer_complete(self) -> bool:
        return all(row.current for row in self.rows)

    @property
    def focus(self) -> str:
        """The row selected when the page opens: the first question without a grade."""
        return next((str(row.question.pk) for row in self.rows if not row.current), "")


def _sentences(answer_id: int) -> list[str]:
    """A report's sentences; one known by its text only is shown as that text, the text the LLM grades."""
    sentences = list(Sentence.objects.filter(answer_id=answer_id).order_by("index").values_list("text", flat=True))
    if sentences:
        return sentences
    text = Answer.objects.values_list("text", flat=True).get(pk=answer_id)
    return [text] if text.strip() else []


def report_page_load(*, work: AssessorWork, number: int | None = None) -> ReportPage | None:
    """The page of report `number` (or of the first with a question left); None if there is none."""
    order = report_order(work)
    questions = work_questions(work)
    given = _given(work, questions)
    done = [sum(1 for q in questions if (answer, q.pk) in given) for answer in order]
    position = position_choose(done_counts=done, needed=[len(questions)] * len(order), number=number)
    if position is None:
        return None
    answer = order[position.number - 1]
    rows = [
        Row(index, question, str(given[(answer, question.pk)]) if (answer, question.pk) in given else "")
        for index, question in enumerate(questions, start=1)
    ]
    return ReportPage(
        number=position.number,
        total_answers=len(order),
        answers_done=sum(1 for count in done if questions and count == len(questions)),
        labels_done=sum(done),
        labels_total=len(order) * len(questions),
        next_incomplete=position.next_incomplete,
        frozen=work.status == AssessorWork.Status.SUBMITTED,
        token=answer_token(answer),
        sentences=_sentences(answer),
        rows=rows,
        waiting="" if questions else f"waiting for the question bank {work.nugget_set_name!r} to be submitted",
    )


def _grade_value(label: str) -> int:
    if label not in {str(grade) for grade in GRADES}:
        raise JudgeError("A grade is a whole number from 0 to 5.")
    return int(label)


@transaction.atomic
def grade_save(
    *,
    work_id: int,
    user: User,
    number: int,
    question: int,
    label: str,
    previous: str,
    expected_version: int | None,
    token: str | None,
    op_id: str = "",
) -> GradeLabel | Replayed:
    value = _grade_value(label)
    work = locked_open_work(work_id=work_id, user=user, kinds=[GRADE_WORK], expected_version=expected_version)
    source_id = work.source_id
    if source_id is None:  # every grading work is given with its source
        raise JudgeError("This work has no label source: ask an organizer to give it again.")
    answer = answer_at(order=report_order(work), number=number, token=token)
    if question not in {q.pk for q in work_questions(work)}:
        raise JudgeError("That question is not in this topic's bank (it may have changed): reload the page.")
    existing = GradeLabel.objects.select_for_update().filter(source_id=source_id, answer_id=answer, nugget_id=question)
    return label_write(
        work=work,
        existing=existing.first(),
        empty=None,
        value=value,
        previous=int(previous) if previous in {str(grade) for grade in GRADES} else None,
        conflict=lambda current: "This question's grade was changed in another tab: reload.",
        create=lambda seconds: GradeLabel.objects.create(
            source_id=source_id,
            topic_id=work.topic_id,
            answer_id=answer,
            nugget_id=question,
            label=value,
            work=work,
            created_by=user,
            seconds_spent=seconds,
        ),
        item=f"{number}:{question}",
        op_id=op_id,
    )


@transaction.atomic
def grade_submit(*, work_id: int, user: User, expected_version: int | None) -> None:
    work = locked_open_work(work_id=work_id, user=user, kinds=[GRADE_WORK], expected_version=expected_version)
    questions = work_questions(work)
    if not questions:
        raise WorkError(f"The question bank {work.nugget_set_name!r} of this topic is not submitted.")
    missing = len(report_order(work)) * len(questions) - len(_given(work, questions))
    if missing:
        raise WorkError(f"{missing} grade(s) are still to be given.")
    work_submit_mark(work=work, user=user)


def grade_progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    """The registry's `WorkPage.progress`: grades given of reports x questions, per work (three queries)."""
    topics = {work.topic_id for work in works}
    reports = Counter(Answer.objects.filter(topic_id__in=topics).values_list("topic_id", flat=True))
    sizes = {
        (topic, name): n
        for topic, name, n in Nugget.objects.filter(nugget_set__in=bank_sets_of(works))
        .values("nugget_set__topic_id", "nugget_set__name")
        .annotate(n=Count("pk"))
        .values_list("nugget_set__topic_id", "nugget_set__name", "n")
    }
    done = labels_counted_by_work(GradeLabel, works)
    return {
        work.pk: (done.get(work.pk, 0), reports[work.topic_id] * sizes.get((work.topic_id, work.nugget_set_name), 0))
        for work in works
    }


def bank_sets_of(works: Sequence[AssessorWork]):
    """The counted banks the works grade on."""
    names = {work.nugget_set_name for work in works}
    topics = {work.topic_id for work in works}
    return NuggetSet.objects.filter(form=QUESTIONS, topic_id__in=topics, name__in=names).filter(nugget_sets_counted_q())


def organizer_progress() -> list[WorkProgress]:
    return progress_rows(kinds=[GRADE_WORK], progress=grade_progress, models=[GradeLabel])


@dataclass
class ReportDetail:
    number: int
    run: str  # the organizer may see runs
    grades: str  # the grades in the bank's order, "—" for none
    seconds: float
    time_label: str = ""


def work_detail(work: AssessorWork) -> list[ReportDetail]:
    """One work's reports in the assessor's order, with the run (for the organizer), grades and time."""
    order = report_order(work)
    questions = work_questions(work)
    runs = dict(Answer.objects.filter(topic_id=work.topic_id).values_list("pk", "run__run_id"))
    stored: dict[tuple[int, int | None], int] = {}
    seconds: dict[int, float] = defaultdict(float)
    for answer, nugget, label, spent in GradeLabel.objects.filter(work=work).values_list(
        "answer_id", "nugget_id", "label", "seconds_spent"
    ):
        stored[(answer, nugget)] = label
        seconds[answer] += spent or 0.0
    rows = []
    for number, answer in enumerate(order, start=1):
        grades = " ".join(str(stored[(answer, q.pk)]) if (answer, q.pk) in stored else "—" for q in questions)
        rows.append(ReportDetail(number, runs[answer], grades, seconds[answer]))
    return rows
