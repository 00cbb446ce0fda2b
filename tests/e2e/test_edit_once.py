"""An edit confirmed with Enter is sent once and leaves no alert behind."""

import pytest
from django.urls import reverse

from nuggets.models import NuggetEdit
from tests.scenarios import make_given_topic, texts_of

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def settled(page) -> None:
    page.wait_for_function(
        "window.nuggetWorkspace && window.nuggetWorkspace.saves.queue.length === 0 && !window.nuggetWorkspace.saves.sending"
    )


@pytest.mark.parametrize("opening", ["key", "click"])
def test_an_edit_confirmed_with_enter_is_sent_once(open_as, opening):
    work = make_given_topic(condition="auto_edit", drafts=["first draft", "second draft"])
    page = open_as(work.assessor, reverse("nuggets:work", args=[work.pk]))
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" and "/op/" in request.url else None)
    if opening == "key":
        page.keyboard.press("e")
    else:
        page.locator("#nugget-list li.nugget .nugget-text").first.click()
    page.keyboard.press("Control+a")
    page.keyboard.type("a reworded draft")
    page.keyboard.press("Enter")
    # Done when the field is closed and the list shows the new text: a second save (from the field's blur as
    # it hides) would be queued by then, and `settled` waits for it too.
    page.wait_for_function(
        "!document.querySelector('li.nugget.editing') && "
        "document.querySelector('#nugget-list li.nugget .nugget-text').textContent.includes('a reworded draft')"
    )
    settled(page)
    assert texts_of(work) == ["a reworded draft", "second draft"]
    assert NuggetEdit.objects.filter(operation="edit").count() == 1
    assert [url.rsplit("/op/", 1)[1] for url in posts] == ["edit/"]
    expect(page.locator("#ws-alert")).to_be_hidden()
