"""An assessor compares the kiddie reports of a request in Chromium: both reports side by side, keys 1 / 2 / 0,
the page moving to the next pair by itself, and the submit."""

import os

import pytest

from assessor.models import AssessorWork, Topic
from assessor.work.roles import Role
from preferences.judging import pair_order, preference_work_give
from preferences.models import PreferenceLabel
from reports.importing import reports_import, requests_import
from tests.builders import make_user
from tests.e2e.keys import settled, submit
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
KEYS = ["1", "2", "0", "1", "2", "1"]  # one key a pair, in the assessor's order: four reports make six pairs


def test_an_assessor_compares_every_pair_by_keyboard(open_as, tmp_path):
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    assessor = make_user(Role.ASSESSOR)
    work = preference_work_give(topic=Topic.objects.get(pk="bee"), assessor=assessor, by=make_user(Role.ORGANIZER))
    page = open_as(assessor, f"/preferences/work/{work.pk}/")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_url("**/pair/1/")
    # The request, the choices and both reports' first lines are in view, the reports side by side.
    expect(page.locator("#request-text")).to_be_in_viewport()
    expect(page.locator("#rows li.jrow button.choice")).to_have_count(3)
    left, right = page.locator("#report-1"), page.locator("#report-2")
    expect(left.locator("li").first).to_be_in_viewport()
    expect(right.locator("li").first).to_be_in_viewport()
    left_box, right_box = left.bounding_box(), right.bounding_box()
    assert left_box["x"] + left_box["width"] <= right_box["x"] and abs(left_box["y"] - right_box["y"]) < 2
    page.screenshot(path=str(os.environ.get("SCREENSHOT_DIR", tmp_path)) + "/preference-pair.png", full_page=False)
    for number, key in enumerate(KEYS, start=1):
        page.wait_for_url(f"**/pair/{number}/")
        page.wait_for_function("window.judgePage !== undefined")
        expect(page.locator("h1.ws-title")).to_have_text(f"Topic bee · pair {number} of 6")
        with page.expect_request("**/label/"):
            page.keyboard.press(key)
        settled(page)
    expect(page.locator("#all-done")).to_be_visible()
    submit(page)
    # What was pressed is what is stored, pair by pair in the assessor's order, with the person's work on it.
    stored = {(row.first_id, row.second_id): row.label for row in PreferenceLabel.objects.filter(work=work)}
    assert [stored[pair] for pair in pair_order(work)] == [int(key) for key in KEYS]
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED and work.active_seconds > 0
