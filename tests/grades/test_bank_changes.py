"""A bank post-edited after its reports were graded: the grades of reworded and removed questions are retired
(kept for the record, never scored), people's grading is reopened, and the scores follow the bank."""

import pytest

from assessor.jobs.engine import job_run_sync
from assessor.models import AssessorWork, Topic
from assessor.scoring.kept import scores_refresh_work
from assessor.work.roles import Role
from grades.judging import grade_save, grade_submit, grade_work_give, report_order, work_questions
from grades.llm import grades_job_create
from grades.models import GradeLabel, RetiredGradeLabel
from grades.scoring import grade_scores
from nuggets.dependents import Change, nugget_dependents, nugget_list_changed, nuggets_delete
from nuggets.kinds import NUGGETS_MANUAL
from nuggets.models import Nugget, NuggetSet
from tests.builders import make_user
from tests.grades.conftest import BANK, KIDDIE_REQUESTS

pytestmark = pytest.mark.django_db


def bank_of(topic_id: str) -> NuggetSet:
    return NuggetSet.objects.get(topic_id=topic_id, name="qbank")


def test_a_reworded_question_retires_its_grades_and_the_llm_is_named(llm_server, qbank):
    job_run_sync(grades_job_create(name="llm", bank="qbank", topics=["leaf"]).pk)
    first = Nugget.objects.get(nugget_set=bank_of("leaf"), position=0)
    described = nugget_dependents([first.pk])
    assert [(d.source, d.labels) for d in described] == [("grade source 'llm' (an LLM)", 4)]
    kept = {g.answer_id: g.label for g in GradeLabel.objects.filter(nugget=first)}
    Nugget.objects.filter(pk=first.pk).update(text="Why are some leaves red?")
    done = nugget_list_changed(
        bank_of("leaf"), {first.pk: Change.REWORDED}, by=None, before={first.pk: BANK["leaf"][0]}
    )
    assert "4 grade(s) of reworded questions retired" in done
    assert "the LLM grades 'llm' are stale on 1 question(s) until they are graded again" in done
    retired = RetiredGradeLabel.objects.all()
    assert {r.answer_id: r.label for r in retired} == kept
    assert {(r.nugget_text, r.reason) for r in retired} == {(BANK["leaf"][0], Change.REWORDED)}
    assert not GradeLabel.objects.filter(nugget=first).exists()
    # The bank still has 3 questions: each report's avggrade is the sum of its two other grades over 3.
    scores = grade_scores(name="llm")
    for run, row in ((r, g) for (r, t), g in scores.per_topic.items() if t == "leaf"):
        others = GradeLabel.objects.filter(source__name="llm", answer__run__run_id=run, topic_id="leaf")
        assert row["avggrade"] == pytest.approx(sum(g.label for g in others) / 3)


def test_a_removed_question_retires_its_grades_and_the_bank_shrinks(qbank):
    assessor = make_user(Role.ASSESSOR)
    work = grade_work_give(topic=Topic.objects.get(pk="bee"), assessor=assessor, by=None)
    for number, _answer in enumerate(report_order(work), start=1):
        for question in work_questions(work):
            work.refresh_from_db()
            grade = "4" if question.text == BANK["bee"][0] else "1"
            grade_save(work_id=work.pk, user=assessor, number=number, question=question.pk, label=grade, previous="",
                       expected_version=work.version, token=None)  # fmt: skip
    work.refresh_from_db()
    grade_submit(work_id=work.pk, user=assessor, expected_version=work.version)
    before = grade_scores(name="people").run_means["run1"]
    # Grades 4 and 1 of 2 questions on bee; the other four requests count 0 in the mean over five.
    assert (before["avggrade"], before["cover4"]) == (pytest.approx(5 / 2 / 5), pytest.approx(0.5 / 5))
    assert len(KIDDIE_REQUESTS) == 5
    # The bank's list reopened, a question removed, the list submitted again: the kept scores follow each step
    # (the list's work names the bank, and the grades on it are refreshed).
    list_work = AssessorWork(topic_id="bee", kind=NUGGETS_MANUAL, nugget_set_name="qbank")
    NuggetSet.objects.filter(pk=bank_of("bee").pk).update(status=NuggetSet.Status.OPEN)
    scores_refresh_work(list_work)
    with pytest.raises(LookupError):
        grade_scores(name="people")  # a bank being edited counts no grade
    second = Nugget.objects.get(nugget_set=bank_of("bee"), position=1)
    assert nuggets_delete([second.pk]) == 4
    NuggetSet.objects.filter(pk=bank_of("bee").pk).update(status=NuggetSet.Status.SUBMITTED)
    scores_refresh_work(list_work)
    assert set(RetiredGradeLabel.objects.values_list("reason", "label", "work_id")) == {(Change.REMOVED, 1, work.pk)}
    after = grade_scores(name="people").run_means["run1"]
    assert (after["avggrade"], after["cover4"]) == (4.0 / 5, 1.0 / 5)  # grade 4 of the one question left
    # A question added to the bank reopens the submitted grading for it.
    added = Nugget.objects.create(
        nugget_set=bank_of("bee"),
        position=2,
        text="Why do bees dance?",
        imported_from_id=bank_of("bee").imported_from_id,
    )
    done = nugget_list_changed(bank_of("bee"), {added.pk: Change.ADDED}, by=None)
    work.refresh_from_db()
    assert work.status != AssessorWork.Status.SUBMITTED and any("reopened for 1 question(s)" in line for line in done)
