"""The topic picker as an organizer sees it: a filter over the topics with their state; without JavaScript, the list."""

import pytest
from django.test import Client
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from nuggets import kinds as nugget_kinds
from tests.builders import make_qrel, make_segment, make_topic, make_user

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def make_topics() -> None:
    bees = make_topic("2024-1", "why bees see ultraviolet")
    make_qrel(bees, make_segment(), grade=2)
    make_topic("2024-2", "how tides work")
    make_topic("2024-3", "what bees eat")
    AssessorWork.objects.create(
        topic=bees, assessor=make_user(Role.ASSESSOR, username="alice"), kind=nugget_kinds.NUGGETS_MANUAL
    )


def expect_shown_topics(page, topics: list[str]) -> None:
    """The list shows these topics, and only these (waiting for the filter to apply)."""
    expect(page.locator(".topic-list li:visible span.mono")).to_have_text(topics)


def test_the_filter_narrows_the_list_and_the_ticked_topics_are_given(open_as):
    make_topics()
    bob = make_user(Role.ASSESSOR, username="bob")
    page = open_as(make_user(Role.ORGANIZER), reverse("nuggets:organize"))
    expect_shown_topics(page, ["2024-1", "2024-2", "2024-3"])
    row = page.locator(".topic-list li").first
    expect(row).to_contain_text("nist: 1 relevant")
    expect(row).to_contain_text("ManualNuggets: alice, not started")
    page.get_by_label("Filter topics").fill("bees")
    expect_shown_topics(page, ["2024-1", "2024-3"])
    page.get_by_label("Filter topics").fill("bees eat")
    expect_shown_topics(page, ["2024-3"])
    page.get_by_label("Filter topics").fill("alice")
    expect_shown_topics(page, ["2024-1"])
    page.get_by_label("Filter topics").press("Enter")  # does not send the form
    page.get_by_label("Filter topics").fill("")
    page.get_by_role("checkbox", name="2024-2").check()
    page.get_by_role("checkbox", name="2024-3").check()
    expect(page.locator(".topic-count")).to_have_text("3 topics · 2 chosen")
    page.get_by_label("Assessor").select_option(label="bob")
    page.get_by_role("button", name="Give").click()
    expect(page.locator(".messages li.success")).to_have_text("Given to bob (ManualNuggets): 2024-2, 2024-3.")
    given = sorted(AssessorWork.objects.filter(assessor=bob).values_list("topic_id", flat=True))
    assert given == ["2024-2", "2024-3"]


def test_without_javascript_the_whole_list_shows_and_no_filter(browser, live_server):
    make_topics()
    client = Client()
    client.force_login(make_user(Role.ORGANIZER))
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    try:
        page = context.new_page()
        page.goto(live_server.url + reverse("nuggets:organize"))
        expect(page.locator(".topic-filter")).to_be_hidden()
        expect_shown_topics(page, ["2024-1", "2024-2", "2024-3"])
    finally:
        context.close()
