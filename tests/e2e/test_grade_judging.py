"""An assessor grades the kiddie reports of a request on its bank's questions in Chromium: keys 0-5, the page
moving to the next report by itself, a reload that keeps the grades, and the submit."""

import os
import re

import pytest

from assessor.models import AssessorWork, Topic
from assessor.work.roles import Role
from grades.judging import grade_work_give, report_order
from grades.models import GradeLabel
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from reports.importing import reports_import, requests_import
from tests.builders import make_batch, make_user, source_of
from tests.e2e.keys import press, settled, submit
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
QUESTIONS = ["How do bees make honey?", "Do bees eat their own honey?"]
KEYS = [["5", "3"], ["0", "4"], ["2", "2"], ["1", "5"]]  # per report in the assessor's order, per question


def test_an_assessor_grades_every_report_by_keyboard(open_as, tmp_path):
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    batch = make_batch(kind=IMPORT_NUGGETS)
    bank_store(
        topic_id="bee",
        name="qbank",
        questions=[Question(text=text) for text in QUESTIONS],
        source=source_of("nuggets", "qbank", imported_from=batch),
        imported_from=batch,
    )
    assessor = make_user(Role.ASSESSOR)
    work = grade_work_give(topic=Topic.objects.get(pk="bee"), assessor=assessor, by=make_user(Role.ORGANIZER))
    page = open_as(assessor, f"/grades/work/{work.pk}/")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_url("**/report/1/")
    # The report, the questions with their six keys and the definitions are in view.
    expect(page.locator("#report-sentences li").first).to_be_in_viewport()
    expect(page.locator("#rows li.jrow")).to_have_count(2)
    expect(page.locator("#rows li.jrow").first.locator("button.choice")).to_have_count(6)
    expect(page.locator("#grade-definitions")).to_contain_text("The answer is mostly relevant and complete")
    page.screenshot(path=str(os.environ.get("SCREENSHOT_DIR", tmp_path)) + "/grade-report.png", full_page=False)
    for number, keys in enumerate(KEYS, start=1):
        page.wait_for_url(f"**/report/{number}/")
        page.wait_for_function("window.judgePage !== undefined")
        expect(page.locator("h1.ws-title")).to_have_text(f"Topic bee · report {number} of 4")
        press(page, keys[0])
        if number == 2:
            # A reload shows the grade kept and selects the question still to grade.
            page.reload()
            page.wait_for_function("window.judgePage !== undefined")
            first = page.locator("#rows li.jrow").first
            expect(first.locator("button.choice.on")).to_have_text(keys[0])
            expect(page.locator("#rows li.jrow").nth(1)).to_have_class(re.compile(r"\bselected\b"))
        with page.expect_request("**/label/"):
            page.keyboard.press(keys[1])
        settled(page)
    expect(page.locator("#all-done")).to_be_visible()
    submit(page)
    # What was pressed is what is stored, report by report in the assessor's order, with the person's work.
    stored = {(row.answer_id, row.nugget.text): row.label for row in GradeLabel.objects.filter(work=work)}
    assert [[stored[(answer, q)] for q in QUESTIONS] for answer in report_order(work)] == [
        [int(key) for key in keys] for keys in KEYS
    ]
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED and work.active_seconds > 0
