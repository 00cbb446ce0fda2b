"""What an assessor looks at while judging, in view: the waiting state of a ManualAssign whose list is open, and
the bar (progress, save state, the all-done prompt, the submit) that stays at the top over long passages."""

import re

import pytest
from django.urls import reverse

from assessor.models import Segment
from nuggets.models import NuggetSet
from support import kinds as support_kinds
from tests.e2e.keys import answer_rows, press, settled
from tests.scenarios import give_assign, give_support, make_scenario

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def in_viewport(page, selector: str) -> bool:
    """The element's box lies wholly inside the window (not merely somewhere on the page)."""
    return page.evaluate(
        """(selector) => {
            const box = document.querySelector(selector).getBoundingClientRect();
            return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
        }""",
        selector,
    )


def row_below_bar(page, row) -> None:
    """The row's top lies below the sticky bar's bottom, inside the window; all of it when it fits there."""
    bar, box = page.locator("#judge-sticky").bounding_box(), row.bounding_box()
    window = page.evaluate("window.innerHeight")
    bar_bottom = bar["y"] + bar["height"]
    assert bar_bottom <= box["y"] < window, (bar, box, window)
    if box["height"] <= window - bar["height"]:
        assert box["y"] + box["height"] <= window, (bar, box, window)


def test_a_manual_assign_waiting_for_its_nugget_list_says_so_and_nothing_else(open_as):
    scenario = make_scenario()
    NuggetSet.objects.filter(pk=scenario.nugget_set.pk).update(status=NuggetSet.Status.OPEN)
    work = give_assign(scenario)
    page = open_as(scenario.assessor, reverse("home"))
    row = page.locator(f"#work-queue tr[data-work='{work.pk}']")
    expect(row.locator(".badge")).to_have_text("waiting")
    expect(row.locator(".waiting-why")).to_have_text("waiting for the topic's nugget list to be submitted")
    expect(row.get_by_role("link")).to_have_text("Look")
    row.get_by_role("link").click()
    expect(page.locator("#work-status")).to_have_text("waiting")
    expect(page.locator("#waiting-why")).to_have_text(
        "Waiting for the topic's nugget list to be submitted: nothing to label yet."
    )
    assert in_viewport(page, "#waiting-why") and in_viewport(page, "#nuggets-open")
    # No counts that mean nothing (it said "Answers done -1"), no "submitted: frozen" banner, no submit.
    for absent in ("#answers-done", "#labels-done", "#after-submit", "#all-done", "#submit-form"):
        expect(page.locator(absent)).to_have_count(0)
    expect(page.get_by_text("This topic is submitted")).to_have_count(0)


def test_the_bar_stays_in_view_over_long_passages(open_as):
    scenario = make_scenario(plant_llm=False)
    # Passages of a few thousand characters, as the collection's are: the rows run far below the first screen.
    # The scenario's passage without text gets one too, so that every answer has two rows whichever comes last
    # (the order depends on the assessor's id, which differs from run to run on PostgreSQL).
    for segment in Segment.objects.all():
        Segment.objects.filter(pk=segment.pk).update(text=((segment.text or "A passage.") + " ") * 60)
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:judge", args=[work.pk]))
    page.set_viewport_size({"width": 1024, "height": 768})
    settled(page)
    rows = page.locator("#rows li.jrow")
    counts: dict[int, int] = {}
    for number in range(1, 4):
        page.wait_for_url(f"**/answer/{number}/")
        counts[number] = answer_rows(page, number)
        for index in range(counts[number]):
            rows.nth(index).scroll_into_view_if_needed()
            press(page, "s")
    # The last label of the topic is in, the window scrolled down to it: the prompt and the bar are in view.
    assert page.evaluate("window.scrollY") > 0
    expect(page.locator("#all-done")).to_be_visible()
    assert in_viewport(page, "#all-done") and in_viewport(page, "#labels-done") and in_viewport(page, "#connection")
    # The submit is in the bar, in view.
    submit_button = page.locator("#submit-form button")
    expect(submit_button).to_be_in_viewport()
    bar, button = page.locator("#judge-sticky").bounding_box(), submit_button.bounding_box()
    assert bar["y"] <= button["y"] and button["y"] + button["height"] <= bar["y"] + bar["height"]
    # Moving up and down the rows (k, j): the selected row is never under the bar, its top below the bar's
    # bottom; a row that fits below the bar is seen whole.
    # Answer 3's rows as counted once its page was loaded, not read again while the page settles after the
    # topic's last label.
    assert counts == {1: 2, 2: 2, 3: 2}
    last = counts[3] - 1
    expect(rows.nth(last)).to_have_class(re.compile(r"\bselected\b"))
    moves = [("k", i) for i in range(last - 1, -1, -1)] + [("j", i) for i in range(1, last + 1)]
    # Rows taller than the room below the bar (their top is shown), then rows that fit in a taller window.
    for height in (768, 2000):
        page.set_viewport_size({"width": 1024, "height": height})
        for key, index in moves:
            page.keyboard.press(key)
            expect(rows.nth(index)).to_have_class(re.compile(r"\bselected\b"))
            row_below_bar(page, rows.nth(index))
        # The answer, beside the rows, stays in view below the bar too.
        bar, panel = page.locator("#judge-sticky").bounding_box(), page.locator(".answer-panel").bounding_box()
        assert page.evaluate("window.scrollY") > 0 and bar["y"] + bar["height"] <= panel["y"], (bar, panel)
    # A save that cannot reach the server: the lost connection is told where the assessor looks.
    page.route("**/label/", lambda route: route.abort())
    # A row's edge wears its label's colour (it was green whatever the label): full support's green, then
    # partial support's yellow.
    selected = page.locator("#rows li.jrow.selected")
    expect(selected).to_have_css("border-left-color", "rgb(46, 107, 63)")
    page.keyboard.press("p")
    expect(selected).to_have_css("border-left-color", "rgb(212, 165, 20)")
    page.locator("#rows li.jrow").last.scroll_into_view_if_needed()
    page.wait_for_function("document.getElementById('connection').classList.contains('lost')", timeout=30_000)
    assert in_viewport(page, "#connection")
