"""A labelled nugget list reopened, changed and resubmitted; the assessor relabels only what changed, in Chromium."""

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from assignment import judging
from assignment.models import AssignmentLabel, RetiredAssignmentLabel
from nuggets.models import NuggetSet
from nuggets.services import nugget_operation_apply, nugget_set_submit
from tests.builders import make_answer, make_run, make_user
from tests.scenarios import make_given_topic, nugget_set_of

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def apply(work: AssessorWork, operation: str, **params) -> None:
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation=operation, params=params,
        expected_version=nugget_set_of(work).version,
    )  # fmt: skip


def settled(page) -> None:
    page.wait_for_function(
        "window.judgePage && window.judgePage.saves.queue.length === 0 && !window.judgePage.saves.sending"
    )


def test_reopen_change_and_relabel_only_the_changed_nugget(open_as, tmp_path):
    organizer = make_user(Role.ORGANIZER)
    nuggets_work = make_given_topic(condition="manual", organizer=organizer)
    apply(nuggets_work, "add", text="Paris is the capital", importance="vital")
    apply(nuggets_work, "add", text="The Seine crosses it", importance="okay")
    nugget_set_submit(
        work_id=nuggets_work.pk, user=nuggets_work.assessor, expected_version=nugget_set_of(nuggets_work).version
    )
    for index in range(2):
        make_answer(make_run(f"run{index}"), nuggets_work.topic, [(f"Paris is the capital ({index}).", [])])
    assign = judging.assign_work_give(topic=nuggets_work.topic, assessor=nuggets_work.assessor, by=organizer)
    first, second = list(nugget_set_of(nuggets_work).nuggets.order_by("position"))
    for number in (1, 2):
        for nugget in (first, second):
            assign.refresh_from_db()
            judging.assignment_label_save(
                work_id=assign.pk, user=assign.assessor, number=number, nugget_id=nugget.pk, label="support",
                previous="", expected_version=assign.version,
            )  # fmt: skip
    assign.refresh_from_db()
    judging.assign_submit(work_id=assign.pk, user=assign.assessor, expected_version=assign.version)

    # The organizer reopens the list: the page first shows what depends on it.
    admin = open_as(organizer, reverse("nuggets:organize_topic", args=[nuggets_work.topic_id]))
    admin.get_by_label("Reason").fill("the second nugget is vague")
    admin.get_by_role("button", name="Reopen").click()
    admin.wait_for_selector("table.dependents")
    assert "assigner 'manual' (people's work)" in admin.locator("table.dependents").inner_text()
    assert nugget_set_of(nuggets_work).status == NuggetSet.Status.SUBMITTED
    admin.get_by_role("button", name="Reopen the list").click()
    admin.wait_for_url("**/organize/topic/**")
    assert nugget_set_of(nuggets_work).status == NuggetSet.Status.OPEN

    # The assessor rewords the second nugget and submits the list again.
    apply(nuggets_work, "edit", nugget=second.pk, text="The Seine flows through Paris")
    nugget_set_submit(
        work_id=nuggets_work.pk, user=nuggets_work.assessor, expected_version=nugget_set_of(nuggets_work).version
    )
    assert (
        list(RetiredAssignmentLabel.objects.values_list("nugget_text", "reason"))
        == [("The Seine crosses it", "reworded")] * 2
    )

    # ManualAssign is open again for that nugget only: the page says why, the other nugget is locked.
    page = open_as(assign.assessor, reverse("judge:assign", args=[assign.pk]))
    page.wait_for_url("**/answer/1/")
    banner = page.locator("#nuggets-changed")
    expect(banner).to_contain_text("The nugget list changed: nugget 2 reworded.")
    expect(banner).to_contain_text("The organizer reopened it: the second nugget is vague.")
    expect(page.locator(f"#row-{first.pk} button.choice").first).to_be_disabled()
    expect(page.locator(f"#row-{second.pk}")).to_contain_text("reworded")
    page.screenshot(path=str(tmp_path / "relabel.png"))
    page.keyboard.press("p")
    settled(page)
    # The changed nugget was the answer's only missing label: the page moves on by itself.
    page.wait_for_url("**/answer/2/")
    page.keyboard.press("n")
    settled(page)
    page.get_by_role("button", name="Submit topic").click()
    page.get_by_role("button", name="Submit and freeze").click()
    page.wait_for_selector("#judge[data-frozen='1']")
    assign.refresh_from_db()
    assert (assign.status, assign.redo) == (AssessorWork.Status.SUBMITTED, {})
    labels = AssignmentLabel.objects.filter(work=assign)
    assert sorted(labels.filter(nugget=second).values_list("label", flat=True)) == ["not_support", "partial_support"]
    assert list(labels.filter(nugget=first).values_list("label", flat=True)) == ["support", "support"]
