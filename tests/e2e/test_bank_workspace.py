"""A question bank written in the workspace in a real Chromium: a question by the keyboard, a gold answer with
a document ticked, kept across a reload, changed, then submitted."""

import pytest
from django.urls import reverse

from assessor.work.roles import Role
from nuggets.banks import Answer, Question, bank_questions
from nuggets.giving import nugget_work_give
from nuggets.models import NuggetSet
from tests.builders import make_answer, make_run, make_segment, make_topic, make_user
from tests.scenarios import make_relevant_segments, nugget_set_of

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def settled(page) -> None:
    """Wait until every queued change is saved and the panel swapped in."""
    page.wait_for_function(
        "window.nuggetWorkspace && window.nuggetWorkspace.saves.queue.length === 0 && !window.nuggetWorkspace.saves.sending"
    )


def test_a_question_with_a_gold_answer_and_its_document_is_kept_and_submitted(open_as):
    topic = make_topic("t-sky", "why is the sky blue")
    make_relevant_segments(topic, [2])
    cited = make_segment("cited-doc", "Sunlight is scattered by the air, blue light most.")
    make_answer(make_run("run-a"), topic, [("Blue light scatters most.", [cited])])
    work = nugget_work_give(
        topic=topic, assessor=make_user(), condition="manual", by=make_user(Role.ORGANIZER), form="questions"
    )
    page = open_as(work.assessor, reverse("nuggets:work", args=[work.pk]))
    expect(page.locator("#new-nugget")).to_have_attribute("placeholder", "New question (n)")

    page.keyboard.press("n")
    page.keyboard.type("Why is the sky blue?")
    page.keyboard.press("Enter")
    settled(page)
    page.keyboard.press("Escape")
    expect(page.locator("#answer-form")).to_be_visible()
    expect(page.locator("#answer-documents")).to_contain_text("Sunlight is scattered by the air")

    page.keyboard.press("a")
    expect(page.locator("#new-answer")).to_be_focused()
    page.keyboard.type("Rayleigh scattering")
    page.locator("#answer-documents input[value='cited-doc']").check()
    page.locator("#new-answer").press("Enter")
    settled(page)
    expect(page.locator(".gold-answer")).to_contain_text("Rayleigh scattering")

    page.reload()
    expect(page.locator(".gold-answer")).to_contain_text("Rayleigh scattering")
    expect(page.locator(".gold-answer .answer-docs")).to_contain_text("cited-doc")
    expect(page.locator("button.rule-or.on")).to_be_visible()

    # Changed in the answer form: its text and documents are loaded there, then saved in place.
    page.locator(".answer-edit-open").click()
    expect(page.locator("#new-answer")).to_have_value("Rayleigh scattering")
    expect(page.locator("#answer-documents input[value='cited-doc']")).to_be_checked()
    page.locator("#new-answer").fill("Rayleigh scattering of sunlight")
    page.locator("#new-answer").press("Enter")
    settled(page)
    expect(page.locator(".gold-answer")).to_have_count(1)
    expect(page.locator(".gold-answer")).to_contain_text("Rayleigh scattering of sunlight")

    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator("#submit-confirm")).to_be_visible()
    page.get_by_role("button", name="Submit and freeze").click()
    page.wait_for_selector("#nugget-panel[data-frozen='1']")
    assert nugget_set_of(work).status == NuggetSet.Status.SUBMITTED
    assert bank_questions("bank") == {
        "t-sky": [
            Question(
                text="Why is the sky blue?",
                rule="or",
                answers=(Answer("Rayleigh scattering of sunlight", ("cited-doc",)),),
            )
        ]
    }
