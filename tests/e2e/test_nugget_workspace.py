"""Full assessor sessions in a real Chromium, driven by the keyboard."""

import re

import pytest
from django.urls import reverse

from assessor.models import AssessorWork, Qrel
from assessor.work.roles import Role
from nuggets.models import NuggetEdit, NuggetSet
from tests.builders import make_user
from tests.scenarios import make_given_topic, nugget_set_of, texts_of

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def workspace_url(work) -> str:
    return reverse("nuggets:work", args=[work.pk])


def settled(page) -> None:
    """Wait until every queued change is saved and the panel swapped in."""
    page.wait_for_function(
        "window.nuggetWorkspace && window.nuggetWorkspace.saves.queue.length === 0 && !window.nuggetWorkspace.saves.sending"
    )


def press(page, *keys: str) -> None:
    for key in keys:
        page.keyboard.press(key)
        settled(page)


def submit(page) -> None:
    """Submit the list: the button asks for a confirmation first, in a dialog."""
    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator("#submit-confirm")).to_be_visible()
    page.get_by_role("button", name="Submit and freeze").click()
    page.wait_for_selector("#nugget-panel[data-frozen='1']")
    settled(page)


def add_by_keyboard(page, text: str) -> None:
    # After an add the field keeps the focus, ready for the next nugget.
    if not page.evaluate("document.activeElement && document.activeElement.id === 'new-nugget'"):
        page.keyboard.press("n")
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    settled(page)


def rows(work) -> list[tuple[str, str, str, list[str]]]:
    result = []
    for nugget in nugget_set_of(work).nuggets.order_by("position").prefetch_related("derived_from"):
        result.append(
            (nugget.text, nugget.importance, nugget.origin, sorted(d.text for d in nugget.derived_from.all()))
        )
    return result


def test_a_full_manual_nuggets_session_by_keyboard(open_as):
    work = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(work))
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    assert "merge the marked nuggets" in page.locator("#help").inner_text()
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()

    for text in ["Nuggets are atomic facts", "Assessors write at most twenty", "A typo nuget"]:
        add_by_keyboard(page, text)
    page.keyboard.press("Escape")  # leave the new-nugget field
    assert texts_of(work) == ["Nuggets are atomic facts", "Assessors write at most twenty", "A typo nuget"]

    # The last one added is selected: fix its text, then mark importance walking up the list.
    press(page, "e")
    page.keyboard.press("Control+a")
    page.keyboard.type("A fixed nugget")
    press(page, "Enter")
    press(page, "o", "k", "v", "k", "v")
    assert rows(work) == [
        ("Nuggets are atomic facts", "vital", "", []),
        ("Assessors write at most twenty", "vital", "", []),
        ("A fixed nugget", "okay", "", []),
    ]
    # Move the first one down, delete it, undo the delete.
    press(page, "J")
    assert texts_of(work)[1] == "Nuggets are atomic facts"
    press(page, "d")
    assert len(texts_of(work)) == 2
    press(page, "u")
    assert texts_of(work) == ["Assessors write at most twenty", "Nuggets are atomic facts", "A fixed nugget"]
    expect(page.locator("#nugget-list li.nugget")).to_have_count(3)

    submit(page)
    expect(page.locator("#nugget-panel")).to_have_attribute("data-frozen", "1")
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    assert nugget_set_of(work).status == NuggetSet.Status.SUBMITTED
    operations = list(NuggetEdit.objects.order_by("id").values_list("operation", flat=True))
    assert operations == [
        "add",
        "add",
        "add",
        "edit",
        "importance",
        "importance",
        "importance",
        "move",
        "delete",
        "undo",
        "submit",
    ]


def test_a_full_post_editing_session_by_keyboard(open_as):
    drafts = ["draft zero", "draft one", "draft two", "draft three and four", "draft five", "draft six"]
    work = make_given_topic(condition="auto_edit", drafts=drafts, grades=[2, 1])
    page = open_as(work.assessor, workspace_url(work))
    expect(page.locator("#nugget-list li.nugget")).to_have_count(6)

    # Merge the first two: mark d0, go down, m merges the marked one with the selected one.
    press(page, "x", "j")
    page.keyboard.press("m")
    expect(page.locator("#merge-text")).to_have_value("draft zero; draft one")
    page.keyboard.press("Control+a")
    page.keyboard.type("drafts zero and one")
    press(page, "Enter")
    # The merged nugget is selected; next is "draft two": reword it.
    press(page, "j", "e")
    page.keyboard.press("Control+a")
    page.keyboard.type("draft two, reworded")
    press(page, "Enter")
    # Split "draft three and four" in two.
    press(page, "j")
    page.keyboard.press("s")
    page.locator("#split-text").fill("draft three\ndraft four")
    press(page, "Control+Enter")
    # The first part is selected; down twice to "draft five" and delete it.
    press(page, "j", "j", "d")
    # Add a nugget no draft had, then undo and add it again.
    add_by_keyboard(page, "a fact the drafts missed")
    page.keyboard.press("Escape")
    press(page, "u")
    assert "a fact the drafts missed" not in texts_of(work)
    add_by_keyboard(page, "a fact the drafts missed")
    page.keyboard.press("Escape")

    # The source of the selected nugget, then importance for every nugget from the top.
    page.locator("#segments li.segment").first.get_by_role("button").click()
    settled(page)
    page.locator("#nugget-list li.nugget .num").first.click()  # the number selects; the text opens an edit
    for key in ["v", "j", "o", "j", "v", "j", "v", "j", "o", "j", "o"]:
        press(page, key)
    submit(page)

    assert rows(work) == [
        ("drafts zero and one", "vital", "merged", ["draft one", "draft zero"]),
        ("draft two, reworded", "okay", "reworded", ["draft two"]),
        ("draft three", "vital", "split", ["draft three and four"]),
        ("draft four", "vital", "split", ["draft three and four"]),
        ("draft six", "okay", "kept", ["draft six"]),
        ("a fact the drafts missed", "okay", "added", []),
    ]
    best_segment = Qrel.objects.filter(topic_id=work.topic_id, grade=2).get().segment_id
    assert nugget_set_of(work).nuggets.get(text="a fact the drafts missed").source_segment_id == best_segment
    assert nugget_set_of(work).status == NuggetSet.Status.SUBMITTED
    summary = page.locator("#drafts summary").inner_text()
    assert "1 kept, 1 reworded, 2 merged, 1 split, 1 deleted; 1 added" in summary


def test_two_tabs_never_overwrite_each_other_silently(open_as):
    work = make_given_topic(condition="manual")
    first = open_as(work.assessor, workspace_url(work))
    second = open_as(work.assessor, workspace_url(work), context=first.context)
    add_by_keyboard(first, "written in the first tab")
    add_by_keyboard(second, "written in the second tab")
    alert = second.locator("#ws-alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("changed elsewhere")
    expect(alert).to_contain_text("written in the second tab")
    expect(second.locator("#connection")).to_have_text("Not saved")
    assert texts_of(work) == ["written in the first tab"]
    second.get_by_role("button", name="Load the latest list").click()
    second.wait_for_selector("#nugget-list li.nugget")
    assert second.locator("#nugget-list").inner_text().count("written in the first tab") == 1
    add_by_keyboard(second, "now on the latest list")
    assert texts_of(work) == ["written in the first tab", "now on the latest list"]
    expect(second.locator("#connection")).to_have_text("Saved")


def test_a_lost_connection_is_shown_and_the_change_retried(open_as):
    work = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(work))
    page.context.set_offline(True)
    page.keyboard.press("n")
    page.keyboard.type("typed while offline")
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('connection').textContent.startsWith('Connection lost')")
    expect(page.locator("#connection")).to_have_class(re.compile(r"(^|\s)lost(\s|$)"))
    assert texts_of(work) == []
    page.context.set_offline(False)
    settled(page)
    assert texts_of(work) == ["typed while offline"]
    expect(page.locator("#connection")).to_have_text("Saved")


def test_a_change_whose_answer_was_lost_is_applied_once(open_as):
    work = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(work))
    lost = {"count": 0}

    def drop_first_answer(route):
        # The server gets the request and applies it; the browser never hears back.
        route.fetch()
        if lost["count"] == 0:
            lost["count"] += 1
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route("**/op/add/", drop_first_answer)
    add_by_keyboard(page, "applied exactly once")
    assert lost["count"] == 1
    assert texts_of(work) == ["applied exactly once"]
    expect(page.locator("#nugget-list li.nugget")).to_have_count(1)


def test_changes_kept_before_a_reload_are_sent_after_it(open_as):
    work = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(work))
    page.context.set_offline(True)
    add_by_keyboard_offline = ["n", "kept across a reload", "Enter"]
    page.keyboard.press(add_by_keyboard_offline[0])
    page.keyboard.type(add_by_keyboard_offline[1])
    page.keyboard.press(add_by_keyboard_offline[2])
    page.wait_for_function("localStorage.length > 0")
    page.context.set_offline(False)
    page.evaluate("window.onbeforeunload = null")
    page.on("dialog", lambda dialog: dialog.accept())
    page.reload()
    settled(page)
    assert texts_of(work) == ["kept across a reload"]


def test_an_assessor_cannot_open_someone_elses_topic_or_organizer_pages(open_as):
    work = make_given_topic(condition="manual")
    other = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(other))
    assert "nugget-panel" not in page.content()
    response = page.goto(page.url)
    assert response.status == 404
    assert page.goto(page.url.split("/nuggets/")[0] + reverse("nuggets:organize")).status == 403
    assert (
        page.goto(page.url.split("/nuggets/")[0] + reverse("nuggets:organize_topic", args=[work.topic_id])).status
        == 403
    )


def test_the_organizer_sees_the_time_and_reopens(open_as):
    work = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(work))
    add_by_keyboard(page, "one vital fact")
    page.keyboard.press("Escape")
    press(page, "v")
    submit(page)
    organizer = make_user(Role.ORGANIZER)
    admin_page = open_as(organizer, reverse("nuggets:organize_topic", args=[work.topic_id]))
    assert "one vital fact" in admin_page.content()
    admin_page.get_by_label("Reason").fill("check nugget 1")
    admin_page.get_by_role("button", name="Reopen").click()
    admin_page.wait_for_load_state()
    assert "reopened: check nugget 1" in admin_page.content()
    assert nugget_set_of(work).status == NuggetSet.Status.OPEN


def test_leaving_an_edited_text_saves_it_and_esc_cancels(open_as):
    work = make_given_topic(condition="auto_edit", drafts=["first draft", "second draft"])
    page = open_as(work.assessor, workspace_url(work))
    page.keyboard.press("e")
    page.keyboard.press("Control+a")
    page.keyboard.type("thrown away")
    page.keyboard.press("Escape")
    settled(page)
    assert texts_of(work) == ["first draft", "second draft"]
    page.keyboard.press("e")
    page.keyboard.press("End")
    page.keyboard.type(", kept on blur")
    page.locator("#topic-query").click()
    settled(page)
    assert texts_of(work) == ["first draft, kept on blur", "second draft"]
    assert NuggetEdit.objects.filter(operation="edit").count() == 1


def test_active_time_skips_an_idle_gap_and_is_shown(open_as):
    from datetime import timedelta

    from django.utils import timezone

    work = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(work))

    def beat_after(seconds_away: int) -> None:
        AssessorWork.objects.filter(pk=work.pk).update(
            last_activity_at=timezone.now() - timedelta(seconds=seconds_away)
        )
        page.mouse.move(10, 10)
        page.mouse.move(20, 30)
        page.evaluate("window.nuggetWorkspace.state.lastBeat = 0; window.nuggetWorkspace.heartbeat()")
        page.wait_for_function("document.getElementById('connection').textContent === 'Saved'")

    beat_after(20 * 60)  # back from a 20 minute break: nothing counted
    page.wait_for_function("document.getElementById('active-time').textContent === '0 s'")
    work.refresh_from_db()
    assert work.active_seconds == 0 and work.status == AssessorWork.Status.IN_PROGRESS
    beat_after(90)  # 90 s of reading the segments: counted
    page.wait_for_function("document.getElementById('active-time').textContent.startsWith('1 min 3')")
    work.refresh_from_db()
    assert 90 <= work.active_seconds < 100


def test_the_heartbeat_notices_a_change_made_in_another_tab(open_as):
    work = make_given_topic(condition="manual")
    first = open_as(work.assessor, workspace_url(work))
    second = open_as(work.assessor, workspace_url(work), context=first.context)
    add_by_keyboard(first, "made in the first tab")
    second.mouse.move(5, 5)
    second.mouse.move(50, 60)
    second.evaluate("window.nuggetWorkspace.state.lastBeat = 0; window.nuggetWorkspace.heartbeat()")
    second.wait_for_selector("#ws-alert:not([hidden])")
    expect(second.locator("#ws-alert")).to_contain_text("changed in another tab")
    second.get_by_role("button", name="Load the latest list").click()
    second.wait_for_selector("#nugget-list li.nugget")
    expect(second.locator("#nugget-list")).to_contain_text("made in the first tab")


def test_a_submitted_list_ignores_editing_keys(open_as):
    work = make_given_topic(condition="manual")
    page = open_as(work.assessor, workspace_url(work))
    add_by_keyboard(page, "the only nugget")
    page.keyboard.press("Escape")
    press(page, "v")
    submit(page)
    for key in ["d", "o", "u", "x", "m", "s", "e"]:
        press(page, key)
    page.keyboard.press("n")
    expect(page.locator("#ws-alert")).to_contain_text("submitted and frozen")
    assert rows(work) == [("the only nugget", "vital", "", [])]
    assert NuggetEdit.objects.filter(operation="undo").count() == 0


def test_segments_without_text_are_collapsed_below_the_texts(open_as):
    """2024-214096 has 163 of 183 relevant segments without text in the collection: the texts come first."""
    from tests.builders import make_qrel, make_segment

    work = make_given_topic(grades=[1, 2])  # two segments with text
    for index in range(40):
        make_qrel(work.topic, make_segment(docid=f"msmarco_v2.1_doc_99_{index}#0_0", text=""), grade=3, source="nist")
    page = open_as(work.assessor, workspace_url(work))
    page.set_viewport_size({"width": 1400, "height": 900})
    texts = page.locator("#segments li.segment")
    expect(texts).to_have_count(2)
    expect(texts.first.locator(".seg-text")).to_contain_text("passage about nuggets")
    expect(texts.first).to_be_in_viewport()
    untexted = page.locator("#untexted-segments")
    expect(untexted.locator("summary")).to_have_text("40 relevant segments with no text in the collection")
    expect(untexted.locator(".untexted-list")).to_be_hidden()  # collapsed until asked for
    expect(page.get_by_text("(the collection has no text for this segment)")).to_have_count(0)
    untexted.locator("summary").click()
    expect(untexted.locator(".untexted-list li")).to_have_count(40)


def test_submitting_with_nuggets_without_importance_is_told_before_and_nothing_is_called_unsaved(open_as):
    work = make_given_topic(condition="auto_edit", drafts=["draft zero", "draft one", "draft two"], grades=[2])
    page = open_as(work.assessor, workspace_url(work))
    press(page, "v")  # the first draft is vital; two are left without importance
    page.get_by_role("button", name="Submit", exact=True).click()
    dialog = page.locator("#submit-confirm")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#confirm-missing")).to_be_visible()
    expect(dialog.locator("#confirm-missing")).to_contain_text("2 of them have no importance yet")
    expect(dialog.locator("#confirm-missing")).to_be_in_viewport(ratio=1)
    expect(dialog.get_by_role("button", name="Submit and freeze")).to_be_disabled()
    dialog.get_by_role("button", name="Keep working").click()
    # Sent anyway (another tab, a stale page): the server refuses, and the edits already saved stay "Saved".
    page.evaluate(
        "window.nuggetWorkspace.saves.push(document.getElementById('submit-form').action, {}, {label: 'submit'})"
    )
    settled(page)
    expect(page.locator("#ws-alert")).to_be_visible()
    expect(page.locator("#connection")).to_have_text("Saved")
    expect(page.locator("#connection")).to_be_in_viewport(ratio=1)
    assert nugget_set_of(work).status == NuggetSet.Status.OPEN
