"""What an assessor reads while judging stays on the screen, at 1366x768 in Chromium: the preference page keeps
the request folded from pair to pair once folded, with both reports' first lines on the first screen; the
grading page keeps its six grades' scale in view down to the last question."""

import os
from pathlib import Path

import pytest

from assessor.models import Topic
from assessor.work.roles import Role
from grades.judging import grade_work_give
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from preferences.judging import preference_work_give
from reports.importing import reports_import, requests_import
from tests.builders import make_batch, make_user, source_of
from tests.e2e.keys import settled
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SCREEN = {"width": 1366, "height": 768}


def shots_dir(tmp_path: Path) -> Path:
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def kiddie_import() -> None:
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)


def test_a_request_folded_on_one_pair_stays_folded_and_both_reports_start_on_the_first_screen(open_as, tmp_path):
    kiddie_import()
    assessor = make_user(Role.ASSESSOR)
    work = preference_work_give(topic=Topic.objects.get(pk="bee"), assessor=assessor, by=make_user(Role.ORGANIZER))
    page = open_as(assessor, f"/preferences/work/{work.pk}/")
    page.set_viewport_size(SCREEN)
    page.wait_for_url("**/pair/1/")
    page.wait_for_function("window.judgePage !== undefined")
    request = page.locator("#request-text")
    expect(request).to_have_attribute("open", "")  # a first visit shows the request
    page.locator("#request-text summary").click()
    expect(request).not_to_have_attribute("open", "")
    with page.expect_request("**/label/"):
        page.keyboard.press("1")
    settled(page)
    page.wait_for_url("**/pair/2/")
    page.wait_for_function("window.judgePage !== undefined")
    # The second pair: the request as it was left, folded, its summary still there to open it again.
    expect(request).not_to_have_attribute("open", "")
    expect(page.locator("#request-text summary")).to_be_in_viewport()
    for side in ("#report-1", "#report-2"):
        first_line = page.locator(f"{side} li").first
        expect(first_line).to_be_in_viewport()
        box = first_line.bounding_box()
        assert box is not None and box["y"] + box["height"] <= SCREEN["height"], (side, box)
    page.screenshot(path=str(shots_dir(tmp_path) / "preference-pair-2-folded.png"))
    # Opened again, it stays open on the next pair.
    page.locator("#request-text summary").click()
    page.goto(page.url.replace("/pair/2/", "/pair/3/"))
    page.wait_for_function("window.judgePage !== undefined")
    expect(page.locator("#request-text")).to_have_attribute("open", "")


QUESTIONS = [f"Question {n} about bees and honey?" for n in range(1, 15)]


def test_the_grades_scale_stays_in_view_at_the_last_question(open_as, tmp_path):
    kiddie_import()
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
    page.set_viewport_size(SCREEN)
    page.wait_for_url("**/report/1/")
    page.wait_for_function("window.judgePage !== undefined")
    rows = page.locator("#rows li.jrow")
    expect(rows).to_have_count(len(QUESTIONS))
    scale = page.locator("#grade-definitions")
    expect(scale.locator("dt")).to_have_text(["5", "4", "3", "2", "1", "0"])
    last = rows.last
    # The last question starts below the first screen: the page has to scroll to it.
    assert last.bounding_box()["y"] > SCREEN["height"]
    # The whole scale and the report's first line on the first screen, at the middle question, at the last: on
    # every report's page, since the reports' order (and so the first page's report) is drawn per assessor.
    checked = []
    for number in range(1, 5):
        if number > 1:
            page.goto(f"/grades/work/{work.pk}/report/{number}/")
            page.wait_for_function("window.judgePage !== undefined")
        for where, row in (("first", rows.first), ("middle", rows.nth(len(QUESTIONS) // 2)), ("last", rows.last)):
            row.scroll_into_view_if_needed()
            expect(row).to_be_in_viewport()
            expect(scale).to_be_in_viewport(ratio=1)
            expect(page.locator("#report-sentences li").first).to_be_in_viewport()
            page.screenshot(path=str(shots_dir(tmp_path) / f"grading-{number}-{where}-question.png"))
            checked.append((number, where))
    assert len(checked) == 12
