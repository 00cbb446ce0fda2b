"""The example app's kind of human work in Chromium: an organizer gives it, the assessor judges an answer a page on
the label-app kit's pages (clicks and keys), reloads, sees the verdicts kept, and submits.

The app (tests/verdicts) reaches the pages through the registry alone: its organizer's page, the assessor's queue
and its judging pages come from assessor/work/kit.py and templates/work/.
"""

import pytest
from django.urls import reverse

from assessor.labelkit.work import answer_order
from assessor.models import Answer, AssessorWork
from assessor.work.roles import Role
from tests.builders import make_user
from tests.e2e.keys import settled, submit
from tests.verdict_tests.collection import make_verdict_collection
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
    expect(page.locator(".messages li.success")).to_have_text("Answer verdicts given to ann: t1.")
    work = AssessorWork.objects.get(assessor=ann)
    expect(page.locator(f"#work-{work.pk}")).to_contain_text("0 / 3")

    queue = open_as(ann, reverse("home"))
    row = queue.locator(f'tr[data-work="{work.pk}"]')
    expect(row.locator("td").nth(2)).to_have_text("Answer verdicts")
    expect(row.locator("td").nth(4)).to_have_text("0 / 3 answers")
    row.get_by_role("link", name="Start").click()
    chosen = ["yes", "no", "yes"]
    for number, label in enumerate(chosen, start=1):
        queue.wait_for_url(f"**/answer/{number}/")
        queue.wait_for_function("window.judgePage !== undefined")
        expect(queue.locator("h1.ws-title")).to_have_text(f"Topic t1 · answer {number} of 3")
        if number == 1:  # the first by a click, the others by their keys (y, n)
            button = queue.get_by_role("button", name=label)
            expect(button).to_be_in_viewport(ratio=1)
            button.click()
        else:
            with queue.expect_request("**/label/"):
                queue.keyboard.press(label[0])
        settled(queue)
    expect(queue.locator("#all-done")).to_be_visible()
    for number, label in enumerate(chosen, start=1):
        queue.goto(reverse("verdicts:answer", args=[work.pk, number]))
        expect(queue.locator("#row-item")).to_have_attribute("data-current", label)
        expect(queue.get_by_role("button", name=label)).to_have_attribute("aria-pressed", "true")

    submit(queue)
    expect(queue.locator(".messages")).to_contain_text("Submitted.")
    expect(queue.get_by_role("button", name="yes")).to_be_disabled()
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    stored = dict(Verdict.objects.filter(work=work).values_list("answer_id", "label"))
    assert [
        stored[answer_id] for answer_id in answer_order(work)
    ] == chosen  # what was pressed, in the assessor's order

    # The organizer finds the people's source on the leaderboards and opens its board, the kit's page for the app.
    by_run = dict(Answer.objects.filter(topic_id="t1").values_list("pk", "run__run_id"))
    shares = {by_run[answer_id]: 1.0 if label == "yes" else 0.0 for answer_id, label in stored.items()}
    boards = open_as(organizer, reverse("collection:leaderboards"))
    people = boards.locator("tr", has=boards.get_by_role("cell", name="people", exact=True))
    people.get_by_role("link", name="runs by share of yes").click()
    boards.wait_for_url("**/labels/verdicts/leaderboard/?source=people")
    for run, share in shares.items():  # every run's row on the first screen, with its share of yes
        row = boards.locator("tbody tr", has=boards.get_by_text(run, exact=True))
        expect(row).to_be_in_viewport()
        expect(row).to_contain_text(f"{share:.4f}")
