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


def answer_rows(page, number: int) -> int:
    """The number of rows of answer `number`, counted once its page is the one shown and loaded: its path is the
    answer's and its (deferred) script has run, so every row is in; not the rows of the page being left."""
    return page.wait_for_function(
        """(path) => {
            if (!window.judgePage || !window.location.pathname.endsWith(path)) return null;
            const rows = document.querySelectorAll("#rows li.jrow").length;
            return rows > 0 ? rows : null;
        }""",
        arg=f"/answer/{number}/",
    ).json_value()


def judge_every_answer_by_keyboard(page, key: str, total_answers: int) -> None:
    # After an answer's last label the page moves to the next answer by itself.
    for number in range(1, total_answers + 1):
        page.wait_for_url(f"**/answer/{number}/")
        for _ in range(answer_rows(page, number)):
            press(page, key)
