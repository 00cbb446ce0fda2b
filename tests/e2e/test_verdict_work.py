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


def in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= size["height"] and box["x"] >= 0


def test_an_assessor_judges_answers_given_through_the_apps_page(open_as):
    make_verdict_collection()
    organizer = make_user(Role.ORGANIZER, username="boss")
    ann = make_user(Role.ASSESSOR, username="ann")

    page = open_as(organizer, reverse("verdicts:organize"))
    page.get_by_role("checkbox", name="t1").check()
    page.get_by_label("Assessor").select_option(label="ann")
    page.get_by_role("button", name="Give").click()
    assert page.locator(".messages li.success").inner_text() == "Verdicts given to ann."
    work = AssessorWork.objects.get(assessor=ann)

    queue = open_as(ann, reverse("home"))
    row = queue.locator(f'tr[data-work="{work.pk}"]')
    assert row.locator("td").nth(2).inner_text() == "Answer verdicts"
    assert row.locator("td").nth(4).inner_text() == "0 / 3 answers"
    row.get_by_role("link", name="Start").click()
    expect(queue.get_by_role("heading", name="Does each answer answer the question?")).to_be_visible()

    answers = queue.locator("#verdicts li")
    assert answers.count() == 3
    chosen = ["yes", "no", "yes"]
    for number, label in enumerate(chosen, start=1):
        item = queue.locator(f'#verdicts li[data-number="{number}"]')
        button = item.get_by_role("button", name=label.capitalize())
        button.scroll_into_view_if_needed()
        assert in_viewport(queue, button)
        button.click()
        assert queue.locator(f'#verdicts li[data-number="{number}"]').get_attribute("data-verdict") == label
    queue.reload()
    kept = [queue.locator(f'#verdicts li[data-number="{n}"]').get_attribute("data-verdict") for n in (1, 2, 3)]
    assert kept == chosen
    pressed = queue.locator('#verdicts li[data-number="2"]').get_by_role("button", name="No")
    assert pressed.get_attribute("aria-pressed") == "true"

    submit = queue.get_by_role("button", name="Submit")
    submit.scroll_into_view_if_needed()
    assert in_viewport(queue, submit)
    submit.click()
    assert "Submitted." in queue.locator(".messages").inner_text()
    assert not queue.get_by_role("button", name="Yes").count()
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    assert sorted(Verdict.objects.filter(work=work).values_list("label", flat=True)) == sorted(chosen)
