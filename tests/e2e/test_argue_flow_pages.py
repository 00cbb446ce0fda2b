"""ARGUE's whole flow in Chromium: an assessor is asked of a sentence citing nothing whether it needs a citation and
whether it is the first instance of its claim (keys y / n); once submitted, the organizer's ARGUE-style leaderboard
shows the figures, and one report sentence by sentence shows that sentence penalized as an uncited first instance.
On the hand-made collection of tests/argue/flow.py (the kiddie reports cite a document in every sentence)."""

import re

import pytest

from argue.judging import argue_work_give, topic_plan
from argue.models import UncitedAttestation
from assessor.models import AssessorWork, Topic
from assessor.work.roles import Role
from tests.argue.flow import PEOPLE, flow_collection_make
from tests.argue.pages import client_for, page_of, post, rows_of
from tests.builders import make_user
from tests.e2e.keys import press, submit

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_uncited_checks_on_the_page_and_the_figures_on_the_boards(open_as):
    flow = flow_collection_make()
    organizer, assessor = make_user(Role.ORGANIZER, username="olga"), make_user(Role.ASSESSOR, username="pat")
    work = argue_work_give(topic=Topic.objects.get(pk="f1"), assessor=assessor, by=organizer)
    runs = {flow.a_f1.pk: "A", flow.b_f1.pk: "B"}
    pages = [(runs[page.answer_id], page.index) for page in topic_plan(work).pages]
    uncited = pages.index(("A", 1)) + 1

    # The assessor's page of "The team met in Paris.": the two checks of a sentence citing nothing, in view.
    page = open_as(assessor, f"/argue/work/{work.pk}/sentence/{uncited}/")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.wait_for_function("window.judgePage !== undefined")
    rows = page.locator("#rows li.jrow")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("does it need a citation")
    expect(rows.nth(1)).to_contain_text("first instance of its claim")
    expect(rows.nth(1)).to_be_in_viewport()
    press(page, "y", "y")
    expect(page.locator("#rows li.jrow.labelled")).to_have_count(2)
    saved = dict(UncitedAttestation.objects.filter(work=work).values_list("asked", "label"))
    assert saved == {"needs_citation": "yes", "first_instance": "yes"}

    # The other pages as the person answers them, then the submit from the page.
    client = client_for(assessor)
    others = [(number, PEOPLE[key]) for number, key in enumerate(pages, start=1) if number != uncited]
    for number, labels in others:
        sentence = page_of(client, work, number)
        for row, label in zip(rows_of(sentence), labels, strict=True):
            assert post(client, work, number, row, label, page=sentence).status_code == 200
    assert len(others) == len(pages) - 1 == 5
    # Opened again in a new tab of the same session, the first one closed: once its rows are labelled, that page moves
    # on to the next sentence by itself, and its own navigation would abort one asked of it. It is closed once it has
    # moved on, and without waiting for the browser to say it is gone: a close that races a navigation's commit can be
    # acknowledged by Chromium and never done (microsoft/playwright#42366), and the test then hung here.
    context = page.context
    page.wait_for_url(re.compile(rf".*/sentence/{uncited + 1}/$"))
    page.wait_for_load_state()
    page.close(run_before_unload=True)
    page = open_as(assessor, f"/argue/work/{work.pk}/sentence/{uncited}/", context=context)
    submit(page)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED

    # The leaderboard of the people's source: A's F1 is 1/2 (support 1/3, coverage 1: worked by hand in
    # tests/argue/test_argue_flow.py), B's 1, in that order; the micro figures beside them.
    board = open_as(organizer, "/collection/leaderboards/argue/?source=people")
    board.set_viewport_size({"width": 1366, "height": 768})
    table = board.locator("table").last
    expect(table.locator("thead")).to_contain_text("f1_micro")
    body = table.locator("tbody tr")
    expect(body.nth(0)).to_contain_text("B")
    expect(body.nth(1)).to_contain_text("A")
    expect(body.nth(1)).to_contain_text("0.5000")

    # One report, sentence by sentence: A's second sentence penalized as an uncited first instance, in view.
    board.locator("#report-open select[name=run]").select_option("A")
    board.get_by_role("button", name="Show its path through the flow").click()
    board.wait_for_url(re.compile(r".*/argue/report/\?.*run=A.*"))
    second = board.locator("#sentence-2")
    expect(second.locator(".badge").first).to_have_text("penalized")
    expect(second).to_contain_text("needs a citation and is the first instance of its claim")
    expect(second).to_be_in_viewport()
