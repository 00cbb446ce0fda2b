"""The example app's kind of human work in Chromium: an organizer gives it, the assessor judges, reloads, submits.

The app (tests/verdicts) reaches the pages through the registry alone: its organizer's page, the assessor's
queue and its own judging page.
"""

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from tests.builders import make_user
from tests.verdicts.collection import make_verdict_collection
from tests.verdicts.models import Verdict

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_assessor_judges_answers_given_through_the_apps_page(open_as):
    make_verdict_collection()
    organizer = make_user(Role.ORGANIZER, username="boss")
    ann = make_user(Role.ASSESSOR, username="ann")

    page = open_as(organizer, reverse("verdicts:organize"))
    page.get_by_role("checkbox", name="t1").check()
    page.get_by_label("Assessor").select_option(label="ann")
    page.get_by_role("button", name="Give").click()
    expect(page.locator(".messages li.success")).to_have_text("Verdicts given to ann.")
    work = AssessorWork.objects.get(assessor=ann)

    queue = open_as(ann, reverse("home"))
    row = queue.locator(f'tr[data-work="{work.pk}"]')
    expect(row.locator("td").nth(2)).to_have_text("Answer verdicts")
    expect(row.locator("td").nth(4)).to_have_text("0 / 3 answers")
    row.get_by_role("link", name="Start").click()
    expect(queue.get_by_role("heading", name="Does each answer answer the question?")).to_be_visible()

    expect(queue.locator("#verdicts li")).to_have_count(3)
    chosen = ["yes", "no", "yes"]
    for number, label in enumerate(chosen, start=1):
        item = queue.locator(f'#verdicts li[data-number="{number}"]')
        button = item.get_by_role("button", name=label.capitalize())
        button.scroll_into_view_if_needed()
        expect(button).to_be_in_viewport(ratio=1)
        button.click()
        expect(item).to_have_attribute("data-verdict", label)
    queue.reload()
    for number, label in enumerate(chosen, start=1):
        expect(queue.locator(f'#verdicts li[data-number="{number}"]')).to_have_attribute("data-verdict", label)
    pressed = queue.locator('#verdicts li[data-number="2"]').get_by_role("button", name="No")
    expect(pressed).to_have_attribute("aria-pressed", "true")

    submit = queue.get_by_role("button", name="Submit")
    submit.scroll_into_view_if_needed()
    expect(submit).to_be_in_viewport(ratio=1)
    submit.click()
    expect(queue.locator(".messages")).to_contain_text("Submitted.")
    expect(queue.get_by_role("button", name="Yes")).to_have_count(0)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    assert sorted(Verdict.objects.filter(work=work).values_list("label", flat=True)) == sorted(chosen)
