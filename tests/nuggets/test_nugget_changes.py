"""A labelled nugget list reopened and changed: what depends on it is retired, reopened or marked stale."""

import html
import re

import pytest
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.models import AssessorWork, LabelSource, WorkEvent
from assessor.work.judging import JudgeError
from assessor.work.roles import Role
from assignment import judging
from assignment.auto import auto_assign_job_create, auto_assign_rerun_create
from assignment.models import AssignmentLabel, RetiredAssignmentLabel
from assignment.selectors import nugget_scores
from nuggets.dependents import list_changes
from nuggets.models import Nugget, NuggetSet
from nuggets.services import DependentsUnconfirmed, nugget_operation_apply, nugget_set_reopen, nugget_set_submit
from tests.builders import make_answer, make_run, make_user
from tests.scenarios import label_everything, make_given_topic, nugget_set_of

pytestmark = pytest.mark.django_db

FACTS = [("Paris is the capital", "vital"), ("The Seine crosses it", "okay"), ("It has a tower", "vital")]


def apply(work: AssessorWork, operation: str, **params) -> None:
    nugget_set = nugget_set_of(work)
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation=operation, params=params, expected_version=nugget_set.version
    )


def submit_list(work: AssessorWork) -> None:
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)


@pytest.fixture
def labelled(llm_server):
    """A submitted list of three nuggets, ManualAssign of it submitted, and an LLM assigner's labels on it."""
    organizer = make_user(Role.ORGANIZER)
    nuggets_work = make_given_topic(condition="manual", organizer=organizer)
    for text, importance in FACTS:
        apply(nuggets_work, "add", text=text, importance=importance)
    submit_list(nuggets_work)
    topic = nuggets_work.topic
    for index in range(2):
        make_answer(make_run(f"run{index}"), topic, [(f"Paris is the capital, answer {index}.", [])])
    assign = judging.assign_work_give(topic=topic, assessor=nuggets_work.assessor, by=organizer)
    label_everything(assign)
    judging.assign_submit(work_id=assign.pk, user=assign.assessor, expected_version=assign.version)
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    job_run_sync(job.pk)
    return nuggets_work, assign, organizer


def test_the_changes_of_a_list_are_read_from_its_nuggets():
    before = {1: "a", 2: "b", 3: "c", 4: "d"}
    now = [(1, "a", "kept", []), (2, "b!", "kept", []), (5, "new", "added", []), (6, "c and d", "merged", [3, 4])]
    assert list_changes(before=before, nuggets=now) == {
        2: "reworded",
        5: "added",
        6: "merged",
        3: "removed",
        4: "removed",
    }
    assert list_changes(before={1: "a"}, nuggets=[(7, "a1", "split", [1]), (8, "a2", "split", [1])]) == {
        7: "split",
        8: "split",
        1: "removed",
    }


def test_reopening_a_labelled_list_asks_the_organizer_to_confirm(labelled):
    nuggets_work, _, organizer = labelled
    with pytest.raises(DependentsUnconfirmed) as refused:
        nugget_set_reopen(work_id=nuggets_work.pk, by=organizer)
    by_source = {d.source: d.labels for d in refused.value.dependents}
    # 2 answers x 3 nuggets, by the assessor and by the LLM.
    assert by_source == {"assigner 'gpt' (an LLM)": 6, "assigner 'manual' (people's work)": 6}
    assert nugget_set_of(nuggets_work).status == NuggetSet.Status.SUBMITTED
    nugget_set_reopen(work_id=nuggets_work.pk, by=organizer, confirmed=True)
    assert nugget_set_of(nuggets_work).status == NuggetSet.Status.OPEN


def test_a_changed_list_retires_reopens_and_marks_stale(labelled, llm_server):
    nuggets_work, assign, organizer = labelled
    first, second, third = list(nugget_set_of(nuggets_work).nuggets.order_by("position"))
    before_scores = nugget_scores(nuggets="manual", assigner="manual")
    assert before_scores.topics == [nuggets_work.topic_id]

    nugget_set_reopen(work_id=nuggets_work.pk, by=organizer, reason="sharpen", confirmed=True)
    # While the list is open, the condition counts nothing for the topic.
    with pytest.raises(LookupError):
        nugget_scores(nuggets="manual", assigner="manual")
    apply(nuggets_work, "edit", nugget=second.pk, text="The Seine flows through it")
    apply(nuggets_work, "delete", nugget=third.pk)
    apply(nuggets_work, "add", text="It hosts a parliament", importance="vital")
    submit_list(nuggets_work)
    added = Nugget.objects.get(text="It hosts a parliament")

    # Removed and reworded nuggets: their labels are retired, of every source, and kept for the record.
    retired = RetiredAssignmentLabel.objects.all()
    assert sorted(retired.values_list("assigner", "nugget_text", "reason")) == sorted(
        [(who, "It has a tower", "removed") for who in ("gpt", "manual") for _ in range(2)]
        + [(who, "The Seine crosses it", "reworded") for who in ("gpt", "manual") for _ in range(2)]
    )
    assert not AssignmentLabel.objects.filter(nugget_id__in=[second.pk, third.pk]).exists()
    # The first nugget did not change: its labels stand.
    assert AssignmentLabel.objects.filter(nugget=first).count() == 4

    # The assessor's ManualAssign is reopened for exactly the reworded and the added nugget, saying why.
    assign.refresh_from_db()
    assert assign.status == AssessorWork.Status.IN_PROGRESS
    assert assign.redo["nuggets"] == {str(second.pk): "reworded", str(added.pk): "added"}
    assert "nugget 2 reworded" in assign.redo["why"] and "nugget 3 added" in assign.redo["why"]
    # ... and why the organizer reopened the list, as they wrote it.
    assert assign.redo["why"].endswith("The organizer reopened it: sharpen.")
    assert WorkEvent.objects.filter(work=assign, action="reopened").exists()
    page = judging.assign_page_load(work=assign)
    assert page.redo == {second.pk: "reworded", added.pk: "added"}
    assert [change for _, _, _, change in page.rows] == ["kept", "reworded", "added"]
    with pytest.raises(JudgeError, match="Only the nuggets that changed"):
        judging.assignment_label_save(
            work_id=assign.pk, user=assign.assessor, number=1, nugget_id=first.pk, label="not_support",
            previous="support", expected_version=assign.version,
        )  # fmt: skip
    # Reopened work is provisional: the condition counts nothing until it is submitted again.
    with pytest.raises(LookupError):
        nugget_scores(nuggets="manual", assigner="manual")
    label_everything(assign, "partial_support")
    judging.assign_submit(work_id=assign.pk, user=assign.assessor, expected_version=assign.version)
    assign.refresh_from_db()
    assert assign.redo == {}
    scores = nugget_scores(nuggets="manual", assigner="manual")
    # Per answer: first nugget support (1, vital), the others partial (0.5): A = 2/3, Vstrict = 1/2.
    for metrics in scores.per_topic.values():
        assert metrics["A"] == pytest.approx(2 / 3) and metrics["Vstrict"] == pytest.approx(1 / 2)

    # The LLM assigner is stale for the changed nuggets until a re-run labels them.
    source = LabelSource.objects.get(family="assignment", name="gpt")
    assert source.stale == {"manual": {nuggets_work.topic_id: sorted([second.pk, added.pk])}}
    calls_before = llm_server.count
    job = auto_assign_rerun_create(name="gpt")
    assert job.total_items == 2 and all(
        set(item.payload["nuggets"]) == {second.pk, added.pk} for item in job.items.all()
    )
    job_run_sync(job.pk)
    source.refresh_from_db()
    assert source.stale == {}
    # One call per answer for the two changed nuggets, none for the unchanged one.
    assert llm_server.count - calls_before == 2
    assert AssignmentLabel.objects.filter(source=source).count() == 2 * 3


def answer_labels(page: str, run_id: str) -> dict[str, list[tuple[str, str]]]:
    """An answer's label rows on the topic page: caption -> [(badge text, its classes)]."""
    article = re.search(rf'<article class="answer"><h3><a href="[^"]*">{run_id}</a>.*?</article>', page, re.S)
    assert article, run_id
    rows = re.findall(r'<div class="labels"><span class="condition">([^<]*)</span> (.*?)</div>', article.group(0))
    return {
        html.unescape(caption): re.findall(r'<span class="badge ([^"]*)" title="[^"]*">([^<]*)</span>', badges)
        for caption, badges in rows
    }


def test_the_topic_page_marks_labels_of_open_work_provisional_and_an_llm_row_stale(labelled, client):
    nuggets_work, assign, organizer = labelled
    client.force_login(organizer)
    url = reverse("collection:topic", args=[nuggets_work.topic_id])
    page = client.get(url).content.decode()
    # Everything submitted and finished: plain badges (the test server supports the first fact only), no legend.
    assert answer_labels(page, "run0") == {
        "manual / gpt": [("support", "1S"), ("not_support", "2N"), ("not_support", "3N")],
        "manual / manual": [("support", "1S"), ("support", "2S"), ("support", "3S")],
    }
    assert "badge-legend" not in page

    second = nugget_set_of(nuggets_work).nuggets.get(position=1)
    nugget_set_reopen(work_id=nuggets_work.pk, by=organizer, confirmed=True)
    apply(nuggets_work, "edit", nugget=second.pk, text="The Seine flows through it")
    submit_list(nuggets_work)
    page = client.get(url).content.decode()
    # ManualAssign is reopened for the reworded nugget: what it holds is provisional until submitted again.
    # The LLM lost its label on the reworded nugget and has not labelled it again: its row shows the gap as stale.
    assert answer_labels(page, "run0") == {
        "manual / gpt": [("support", "1S"), ("stale", "2-"), ("not_support", "3N")],
        "manual / manual": [("support provisional", "1S"), ("support provisional", "3S")],
    }
    assert "(stale: its nugget changed since the LLM labelled it: re-run the affected items)" in html.unescape(page)
    legend = re.search(r'<p class="small badge-legend">(.*?)</p>', page, re.S)
    assert legend and html.unescape(legend.group(1)) == (
        'Not every label here counts: <span class="badge provisional">provisional</span> made in open work or by a '
        'job still running: not counted yet; <span class="badge stale">stale</span> its nugget changed since the '
        "LLM labelled it: re-run the affected items."
    )

    label_everything(assign)
    judging.assign_submit(work_id=assign.pk, user=assign.assessor, expected_version=assign.version)
    job_run_sync(auto_assign_rerun_create(name="gpt").pk)
    page = client.get(url).content.decode()
    assert answer_labels(page, "run0") == {
        "manual / gpt": [("support", "1S"), ("not_support", "2N"), ("not_support", "3N")],
        "manual / manual": [("support", "1S"), ("support", "2S"), ("support", "3S")],
    }
    assert "badge-legend" not in page
