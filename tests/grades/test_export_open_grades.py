"""export_grades holds submitted grading only and names the open work it left out on standard error, as the
nugget and ARGUE-style exports do (tests/nuggets/test_export_open_lists.py, tests/argue/test_argue_export_open.py);
with --include-open it writes that work too, said to be provisional."""

import io
import json

import pytest
from django.core.management import call_command

from assessor.models import AssessorWork, Topic
from assessor.work.roles import Role
from grades.judging import grade_save, grade_submit, grade_work_give, report_order, work_questions
from tests.builders import make_user

pytestmark = pytest.mark.django_db


def grade_everything(work: AssessorWork) -> None:
    for number, _answer in enumerate(report_order(work), start=1):
        for question in work_questions(work):
            work.refresh_from_db()
            grade_save(work_id=work.pk, user=work.assessor, number=number, question=question.pk, label="3",
                       previous="", expected_version=work.version, token=None)  # fmt: skip


def exported(*options: str) -> tuple[set[str], str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_grades", "--name", "people", *options, stdout=out, stderr=err)
    return {json.loads(line)["query_id"] for line in out.getvalue().splitlines()}, err.getvalue()


def test_export_grades_names_the_open_grading_it_left_out(qbank):
    assessor = make_user(Role.ASSESSOR)
    works = {
        topic: grade_work_give(topic=Topic.objects.get(pk=topic), assessor=assessor, by=None)
        for topic in ("bee", "leaf")
    }
    for work in works.values():
        grade_everything(work)
    works["bee"].refresh_from_db()
    grade_submit(work_id=works["bee"].pk, user=assessor, expected_version=works["bee"].version)
    topics, warnings = exported()
    assert topics == {"bee"}
    assert warnings == "warning: Grades into 'people' is still open on 1 topic(s) (leaf): not counted.\n"
    topics, warnings = exported("--include-open")
    assert topics == {"bee", "leaf"}
    assert "(leaf): counted as provisional." in warnings
