"""An assessor judges a report sentence by sentence in Chromium: the cut marked, each cited document and the gold
answers asked, keys y / n, the page moving to the next sentence by itself, and the submit."""

import os

import pytest

from argue.judging import argue_work_give
from argue.models import AnswerAttestation, JudgedReport, SupportAttestation
from assessor.models import AssessorWork, LabelSource
from assessor.work.roles import Role
from nuggets.banks import Answer as GoldAnswer
from nuggets.banks import Question, bank_store
from reports.models import ReportRequest
from tests.builders import make_answer, make_batch, make_run, make_segment, make_topic, make_user, source_of
from tests.e2e.keys import press, submit

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_assessor_judges_a_report_by_keyboard(open_as, tmp_path):
    topic = make_topic("t1", "who led the team")
    ReportRequest.objects.create(topic=topic, title="The team", word_limit=12, imported_from=make_batch())
    d1 = make_segment("d1", "Ann led the team in May. It went well.")
    d2 = make_segment("d2", "Bob wrote the report.")
    d3 = make_segment("d3", "Nothing about the team.")
    make_answer(
        make_run("A"),
        topic,
        [("Ann led the team in May.", [d1, d3]), ("Bob wrote the report.", [d2]), ("June was cold.", [])],
    )
    bank = [
        Question("Who led the team?", "vital", "or", (GoldAnswer("Ann", ("d1",)), GoldAnswer("Bob", ("d2",)))),
        Question("When did it start?", "okay", "and", (GoldAnswer("May", ("d1",)), GoldAnswer("June", ("d3",)))),
    ]
    batch = make_batch()
    bank_store(topic_id="t1", name="gold", questions=bank, source=source_of("nuggets", "gold"), imported_from=batch)
    assessor = make_user(Role.ASSESSOR)
    work = argue_work_give(topic=topic, assessor=assessor, by=make_user(Role.ORGANIZER))
    page = open_as(assessor, f"/argue/work/{work.pk}/")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_url("**/sentence/1/")
    page.wait_for_function("window.judgePage !== undefined")
    expect(page.locator("h1.ws-title")).to_have_text("Topic t1 · sentence 1 of 2")
    expect(page.locator("#cut-mark")).to_be_visible()
    expect(page.locator("#report-sentence-2 s")).to_have_text("June was cold.")
    # Two cited documents, then Ann, May and June (the answers of d1 and d3).
    expect(page.locator("#rows li.jrow")).to_have_count(5)
    expect(page.locator("#rows li.jrow.selected")).to_have_count(1)
    page.screenshot(path=str(os.environ.get("SCREENSHOT_DIR", tmp_path)) + "/argue-sentence.png", full_page=False)
    press(page, "y", "n", "y", "y", "n")
    page.wait_for_url("**/sentence/2/")
    page.wait_for_function("window.judgePage !== undefined && document.querySelectorAll('#rows li.jrow').length == 2")
    press(page, "n", "y")
    expect(page.locator("#all-done")).to_be_visible()
    submit(page)
    supports = dict(SupportAttestation.objects.filter(work=work).values_list("citation__segment_id", "label"))
    assert supports == {"d1": "yes", "d3": "no", "d2": "no"}
    answers = AnswerAttestation.objects.filter(work=work).order_by(
        "sentence__index", "question__position", "answer_index"
    )
    assert [(a.sentence.index, a.question.text, a.answer_index, a.label) for a in answers] == [
        (0, "Who led the team?", 0, "yes"),
        (0, "When did it start?", 0, "yes"),
        (0, "When did it start?", 1, "no"),
        (1, "Who led the team?", 1, "yes"),
    ]
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED and work.active_seconds > 0
    assert JudgedReport.objects.get(work=work).kept == 2
    assert LabelSource.objects.get(pk=work.source_id).kind == LabelSource.Kind.PERSON
