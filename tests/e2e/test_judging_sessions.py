"""ManualAssign and support judging sessions in a real Chromium, driven by the keyboard."""

import re

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assignment.judging import answer_order
from assignment.models import AssignmentLabel
from support import kinds as support_kinds
from support.judging import topic_pairs
from support.models import SupportLabel
from tests.e2e.keys import judge_every_answer_by_keyboard, press, settled, submit
from tests.scenarios import give_assign, give_support, make_scenario

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def manual_labels(answer_id: int) -> list[str]:
    return list(
        AssignmentLabel.objects.filter(assigner="manual", answer_id=answer_id)
        .order_by("nugget__position")
        .values_list("label", flat=True)
    )


def test_a_manual_assign_session_by_keyboard(open_as):
    scenario = make_scenario()
    work = give_assign(scenario)
    order = answer_order(work=work)
    page = open_as(scenario.assessor, reverse("judge:assign", args=[work.pk]))
    expect(page).to_have_url(re.compile(re.escape(reverse("judge:answer", args=[work.pk, 1])) + "$"))
    expect(page.locator("#work-status")).to_have_text("not started")
    # Each key labels the selected nugget and selects the next unlabelled one.
    press(page, "s", "p", "n")
    # The work's status follows the saves without a reload.
    expect(page.locator("#work-status")).to_have_text("in progress")
    assert manual_labels(order[0]) == ["support", "partial_support", "not_support"]
    expect(page.locator("#labels-done")).to_have_text("3")
    expect(page.locator("#answers-done")).to_have_text("1")
    # The answer's last label takes the page to the next answer with labels missing.
    page.wait_for_url("**/answer/2/")
    # Back up one row and change it before the last label.
    press(page, "n", "k", "p")
    press(page, "n", "s")
    assert manual_labels(order[1]) == ["partial_support", "not_support", "support"]
    page.wait_for_url("**/answer/3/")
    # Back one answer, then g goes to the next one with labels missing.
    page.keyboard.press(",")
    page.wait_for_url("**/answer/2/")
    page.keyboard.press("g")
    page.wait_for_url("**/answer/3/")
    expect(page.locator("#all-done")).to_be_hidden()
    press(page, "s", "s", "s")
    expect(page.locator("#answers-done")).to_have_text("3")
    # Every label is in: the page offers the submit, and asks before freezing the topic.
    expect(page.locator("#all-done")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/answer/3/$"))
    submit(page)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    # A frozen topic ignores the label keys.
    page.keyboard.press("n")
    assert AssignmentLabel.objects.filter(assigner="manual", label="not_support").count() == 2


def test_support_from_scratch_by_keyboard(open_as):
    scenario = make_scenario()
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:judge", args=[work.pk]))
    expect(page.locator(".shown-note")).to_have_count(0)
    judge_every_answer_by_keyboard(page, "s", 3)
    expect(page.locator("#labels-done")).to_have_text("5")
    labels = SupportLabel.objects.filter(method="scratch")
    assert sorted(labels.values_list("label", flat=True)) == [2] * 5
    assert not labels.filter(shown_label__isnull=False).exists()
    submit(page)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED


def test_support_post_editing_by_keyboard(open_as):
    scenario = make_scenario()
    work = give_support(scenario, support_kinds.SUPPORT_POSTEDIT)
    pairs = topic_pairs(work=work)
    # An answer with two pairs (the third run's second pair cites a segment without text).
    number = next(n for n, answer_id in enumerate(pairs.order, start=1) if len(pairs.pairs_of[answer_id]) == 2)
    page = open_as(scenario.assessor, reverse("support:answer", args=[work.pk, number]))
    first = page.locator("#rows li.jrow").first
    expect(first).to_have_attribute("data-shown", "1")
    expect(first.locator("button.choice.shown .choice-name")).to_have_text("PS")
    expect(first.locator("button.choice.on")).to_have_count(0)  # shown, not yet the assessor's
    # Enter confirms the pre-selected LLM label; n changes the next one.
    press(page, "Enter", "n")
    labels = list(SupportLabel.objects.filter(method="postedit").order_by("citation__sentence__index"))
    assert [(label.shown_label, label.label, label.changed) for label in labels] == [(1, 1, False), (1, 0, True)]
    assert all(label.shown_from.method == "llm-secret-judge" for label in labels)
    expect(page.locator("#labels-done")).to_have_text("2")


def test_a_label_survives_a_reload_and_a_second_tab(open_as):
    scenario = make_scenario()
    work = give_assign(scenario)
    url = reverse("judge:answer", args=[work.pk, 1])
    first_tab = open_as(scenario.assessor, url)
    press(first_tab, "s")
    first_tab.reload()
    row = first_tab.locator("#rows li.jrow").first
    expect(row.locator("button.choice.on .choice-name")).to_have_text("support")

    second_tab = open_as(scenario.assessor, url, context=first_tab.context)
    second_row = second_tab.locator("#rows li.jrow").first
    expect(second_row.locator("button.choice.on .choice-name")).to_have_text("support")
    # The second tab changes it; the first, stale, tries another change: refused, it shows the stored label.
    # A click on the row's number selects it (the label buttons sit in the row too).
    second_row.locator(".num").click()
    press(second_tab, "n")
    row.locator(".num").click()
    press(first_tab, "p")
    first_tab.wait_for_selector("#ws-alert:not([hidden])")
    expect(first_tab.locator("#ws-alert-text")).to_contain_text("another tab")
    expect(first_tab.locator("#connection")).to_have_text("Not saved")
    expect(row.locator("button.choice.on .choice-name")).to_have_text("not support")
    order = answer_order(work=work)
    assert manual_labels(order[0])[0] == "not_support"
    first_tab.reload()
    expect(first_tab.locator("#rows li.jrow").first.locator("button.choice.on .choice-name")).to_have_text(
        "not support"
    )


def test_a_label_made_while_the_connection_is_lost_is_kept_and_sent_later(open_as):
    scenario = make_scenario()
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:judge", args=[work.pk]))
    page.route("**/label/", lambda route: route.abort())
    settled(page)  # the page's script is running and has nothing queued
    page.keyboard.press("s")
    page.wait_for_function("window.judgePage.saves.queue.length === 1")
    page.wait_for_function("document.getElementById('connection').classList.contains('lost')", timeout=30_000)
    assert not SupportLabel.objects.filter(method="scratch").exists()
    # The unsent label is kept in the browser: a reload shows it and sends it once the server answers.
    assert page.evaluate(f"JSON.parse(localStorage.getItem('judge-ops:support-{work.pk}-1')).length") == 1
    page.unroute("**/label/")
    page.reload()
    settled(page)
    expect(page.locator("#connection")).to_have_text("Saved")
    assert list(SupportLabel.objects.filter(method="scratch").values_list("label", flat=True)) == [2]
    expect(page.locator("#rows li.jrow").first.locator("button.choice.on .choice-name")).to_have_text("FS")


def test_a_save_whose_answer_is_lost_is_retried_with_its_operation_id_and_applied_once(open_as):
    from assessor.models import WorkOperation

    scenario = make_scenario()
    work = give_assign(scenario)
    page = open_as(scenario.assessor, reverse("judge:assign", args=[work.pk]))
    settled(page)
    sent: list[str] = []

    def reach_the_server_then_lose_the_answer(route):
        sent.append(route.request.post_data)
        if len(sent) == 1:
            route.fetch()  # the server gets and applies the save ...
            route.abort()  # ... and the page never hears back
        else:
            route.continue_()

    page.route("**/label/", reach_the_server_then_lose_the_answer)
    # The first row's "support" choice is waited for, and the key's save is awaited as a request, so that a
    # key pressed before the page could take it fails here, saying so, not later as an empty list.
    expect(page.locator("#rows li.jrow").first.locator('button.choice[data-key="s"]')).to_be_visible()
    with page.expect_request("**/label/"):
        page.keyboard.press("s")
    settled(page)
    page.unroute("**/label/")
    op_ids = [dict(part.split("=", 1) for part in body.split("&"))["op_id"] for body in sent]
    assert len(op_ids) == 2 and op_ids[0] == op_ids[1] and op_ids[0]
    assert WorkOperation.objects.filter(work=work).count() == 1
    assert manual_labels(answer_order(work=work)[0]) == ["support"]
    expect(page.locator("#connection")).to_have_text("Saved")
