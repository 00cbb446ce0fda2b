"""A bank post-edit in a real Chromium at 1366x768: the report request is on the first screen, folds and stays
folded across a reload, and the save state and Submit stay in view while the questions scroll."""

import pytest
from django.urls import reverse

from assessor.models import Job, LabelSource
from nuggets.banks import Answer, Question, bank_store
from nuggets.giving import nugget_work_give
from nuggets.kinds import LABEL_FAMILY
from reports.models import ReportRequest
from tests.builders import make_batch, make_topic, make_user, source_of
from tests.scenarios import make_relevant_segments

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BACKGROUND = "This is for a child who has noticed that the trees in the park change colour every autumn."
SCREENSHOT = "/tmp/bank_workspace.png"


def bank_post_edit():
    """A report request with its background and problem statement, PrefNugget's bank of 15 questions on it, and
    the post-edit of that bank given to an assessor."""
    topic = make_topic("leaf", "fall leaf color change chlorophyll")
    ReportRequest.objects.create(
        topic=topic, title=topic.query, background=BACKGROUND,
        problem_statement="My 5-year-old asks why leaves turn red and yellow: explain it in words she knows.",
        imported_from=make_batch(),
    )  # fmt: skip
    make_relevant_segments(topic, [2, 1])
    doc = topic.qrels.values_list("segment_id", flat=True).first()
    job = Job.objects.create(
        kind="prefnugget_bank", output_name="pn-bank", output_family=LABEL_FAMILY, model="gpt-4o-mini", status="done"
    )
    questions = [
        Question(text=f"What does question {i} ask of the leaves?", rule="or", answers=(Answer(f"answer {i}", (doc,)),))
        for i in range(15)
    ]
    source = source_of(LABEL_FAMILY, "pn-bank", kind=LabelSource.Kind.LLM)
    bank_store(topic_id=topic.pk, name="pn-bank", questions=questions, source=source, job=job)
    return nugget_work_give(
        topic=topic, assessor=make_user(), condition="auto_edit", by=None, form="questions", drafts_name="pn-bank"
    )


def test_the_request_folds_and_stays_folded_and_the_bar_stays_in_view(open_as):
    work = bank_post_edit()
    page = open_as(work.assessor, reverse("nuggets:work", args=[work.pk]))
    page.set_viewport_size({"width": 1366, "height": 768})
    page.reload()
    page.wait_for_function("window.nuggetWorkspace !== undefined")
    expect(page.locator("#request-background")).to_have_text(BACKGROUND)
    expect(page.locator("#request-background")).to_be_in_viewport(ratio=1)
    expect(page.locator("#started-from")).to_contain_text("pn-bank")
    page.screenshot(path=SCREENSHOT)

    page.locator("#request-text summary").click()
    expect(page.locator("#request-background")).to_be_hidden()
    page.reload()
    page.wait_for_function("window.nuggetWorkspace !== undefined")
    expect(page.locator("#request-text")).not_to_have_attribute("open", "")
    expect(page.locator("#request-background")).to_be_hidden()
    expect(page.locator("#request-text summary")).to_be_in_viewport()

    page.evaluate("window.scrollTo(0, 500)")
    assert page.evaluate("window.scrollY") == 500  # the page is long enough to scroll that far
    expect(page.locator("#connection")).to_have_text("Saved")
    expect(page.locator("#connection")).to_be_in_viewport(ratio=1)
    expect(page.get_by_role("button", name="Submit", exact=True)).to_be_in_viewport(ratio=1)
    page.screenshot(path=SCREENSHOT.replace(".png", "-scrolled.png"))

    # Unfolded again, it is open on the next visit too.
    page.locator("#request-text summary").click()
    page.reload()
    page.wait_for_function("window.nuggetWorkspace !== undefined")
    expect(page.locator("#request-background")).to_be_visible()
