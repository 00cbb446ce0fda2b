"""An organizer opens one answer's page of every judge's labels from the run's page, at 1366x768: the answer's
first sentence and the first mark of a disagreement are in view without scrolling."""

import pytest
from django.test import Client
from django.urls import reverse

from assessor.work.roles import Role
from tests.builders import make_user
from tests.collection.answer_judges import FIRST_SENTENCE, judged_answer

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOT = "/tmp/answer_page.png"


def test_the_answer_page_opens_from_the_run_page_with_its_first_disagreement_in_view(browser, live_server):
    judged = judged_answer()
    client = Client()
    client.force_login(make_user(Role.ORGANIZER))
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 768})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    try:
        page = context.new_page()
        page.goto(live_server.url + reverse("collection:run", args=["team.a"]))
        page.get_by_role("link", name="labels by source").click()
        page.wait_for_url(f"**{reverse('collection:answer', args=[judged.answer.pk])}")
        first = page.locator("#sentence-0")
        expect(first).to_contain_text(FIRST_SENTENCE)
        expect(first).to_be_in_viewport()
        marker = page.locator(".differs-mark").first
        expect(marker).to_be_in_viewport()
        # The first link of the list of disagreements leads to its marked row.
        page.locator("a.disagreement-link").first.click()
        expect(page.locator("tr.differs").first).to_be_in_viewport()
        page.goto(live_server.url + reverse("collection:answer", args=[judged.answer.pk]))
        page.screenshot(path=SCREENSHOT, full_page=False)
    finally:
        context.close()
