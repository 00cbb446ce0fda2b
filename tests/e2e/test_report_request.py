"""A report request on its topic page, as an organizer sees it after importing the kiddie collection."""

import os

import pytest

from assessor.work.roles import Role
from reports.importing import reports_import, requests_import
from tests.builders import make_user
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_topic_page_opens_on_the_request_and_lists_the_reports(open_as, tmp_path):
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    page = open_as(make_user(Role.ORGANIZER), "/collection/topics/bee/")
    panel = page.locator("section.report-request")
    expect(panel).to_be_in_viewport()
    expect(panel.locator("dd").first).to_have_text("bee honey making nectar hive sting")
    expect(panel).to_contain_text("Problem statement")
    expect(panel).to_contain_text("Length limit")
    # The four runs' reports are the topic's answers, each with its sentences joined.
    expect(page.locator("#answers")).to_be_attached()
    expect(page.get_by_text("Bees visit flowers and drink sweet nectar", exact=False).first).to_be_attached()
    page.screenshot(path=str(os.environ.get("SCREENSHOT_DIR", tmp_path)) + "/report-request.png", full_page=False)
