"""An upload in the browser: the file goes to the server, its page waits for the worker, then shows the result for good."""

import pytest
from django.urls import reverse

from assessor.collection.uploads import progress_write, upload_run
from assessor.models import Topic, Upload
from assessor.work.roles import Role
from tests.builders import make_user

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_upload_page_follows_the_import_to_its_end_and_keeps_the_result(open_as, upload_queued, monkeypatch):
    page = open_as(make_user(Role.ORGANIZER), reverse("collection:upload"))
    page.get_by_label("Kind of file").select_option("topics")
    content = "".join(f"2024-{number}\tquery {number}\n" for number in range(1, 1501))
    page.set_input_files(
        "input[type=file]", files=[{"name": "topics.tsv", "mimeType": "text/plain", "buffer": content.encode()}]
    )
    page.get_by_role("button", name="Import").click()
    page.wait_for_url("**/collection/uploads/*/")
    state = page.locator("#upload-state")
    expect(state).to_have_text("queued")
    expect(page.get_by_text("Waiting for a worker.")).to_be_visible()
    [upload_id] = upload_queued
    assert page.url.endswith(reverse("collection:upload_detail", args=[upload_id]))

    # The worker's part, while the page polls: at its report of line 1,000 the page shows it running there.
    watched = []

    def report_and_watch(upload, progress):
        progress_write(upload, progress)
        if progress.lines == 1000:
            expect(page.locator("#upload-state")).to_have_text("running")
            expect(page.locator("#lines-read")).to_have_text("1000")
            watched.append(page.locator("progress").get_attribute("value"))

    monkeypatch.setattr("assessor.collection.uploads.progress_write", report_and_watch)
    assert upload_run(upload_id) == "done"
    # Two thirds of the file's bytes read, give or take the reader's buffer (its lines are 15 to 21 bytes).
    [percent] = watched
    assert 50 <= int(percent or 0) <= 99
    page.get_by_text("Imported topics.tsv.").wait_for()
    expect(state).to_have_text("done")
    expect(page.locator("#lines-read")).to_have_text("1500")
    expect(page.locator("#rows-written")).to_have_text("1500")
    expect(page.locator("progress")).to_have_attribute("value", "100")
    assert Topic.objects.count() == 1500

    page.reload()
    expect(page.locator("#upload-state")).to_have_text("done")
    expect(page.get_by_text("1500 lines: 1500 created, 0 unchanged, 0 replaced.")).to_be_visible()
    assert Upload.objects.get().state == "done"
