"""What the browser tests of the judging pages share: pressing label keys until saved, and submitting."""

from playwright.sync_api import expect


def settled(page) -> None:
    """Wait until every queued label is saved."""
    page.wait_for_function(
        "window.judgePage && window.judgePage.saves.queue.length === 0 && !window.judgePage.saves.sending"
    )


def press(page, *keys: str) -> None:
    for key in keys:
        page.keyboard.press(key)
        settled(page)


def submit(page) -> None:
    """Submit the topic: the button asks for a confirmation first, in a dialog."""
    page.get_by_role("button", name="Submit topic").click()
    expect(page.locator("#submit-confirm")).to_be_visible()
    page.get_by_role("button", name="Submit and freeze").click()
    page.wait_for_selector("#judge[data-frozen='1']")


def judge_every_answer_by_keyboard(page, key: str, total_answers: int) -> None:
    # After an answer's last label the page moves to the next answer by itself.
    for number in range(1, total_answers + 1):
        page.wait_for_url(f"**/answer/{number}/")
        for _ in range(page.locator("#rows li.jrow").count()):
            press(page, key)
