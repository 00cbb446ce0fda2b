"""Replacing a nugget list by import follows the rules of an edit, on the command line and the upload page:
refused while the list has labels unless the organizer confirms, never into a list people are making, and
once done the list's version is bumped and whoever labelled it is asked for the new nuggets."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.models import AssessorWork, LabelSource
from assessor.work.roles import Role
from assignment import judging
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel, RetiredAssignmentLabel
from nuggets.importing import nuggets_import
from nuggets.models import NuggetSet
from nuggets.services import nugget_operation_apply
from tests.builders import make_answer, make_run, make_topic, make_user
from tests.scenarios import label_everything, make_given_topic, nugget_set_of

pytestmark = pytest.mark.django_db

QUERY = "what is the capital of france"
OLD = [("Paris is the capital", "vital"), ("The Seine crosses it", "okay")]
NEW = [("Paris is the capital city", "vital"), ("It has a tower", "okay"), ("It hosts a parliament", "vital")]


def list_file(write_file, topic_id: str, nuggets: list[tuple[str, str]], name: str = "list.jsonl"):
    record = {"qid": topic_id, "query": QUERY, "nuggets": [{"text": t, "importance": i} for t, i in nuggets]}
    return write_file(name, json.dumps(record) + "\n")


def upload(client, path, **options):
    data = {"file": SimpleUploadedFile(path.name, path.read_bytes()), "kind": "nuggets", "nuggets_kind": "manual"}
    return client.post(reverse("collection:upload"), {**data, **options}, follow=True)


@pytest.fixture
def labelled_import(write_file, llm_server):
    """An imported list 'nist', ManualAssign of it submitted by an assessor, and an LLM assigner's labels on it."""
    topic = make_topic(query=QUERY)
    nuggets_import(path=list_file(write_file, topic.pk, OLD), kind="manual", name="nist")
    for index in range(2):
        make_answer(make_run(f"run{index}"), topic, [(f"Paris is the capital, answer {index}.", [])])
    organizer = make_user(Role.ORGANIZER)
    assign = judging.assign_work_give(topic=topic, assessor=make_user(), by=organizer, nugget_set_name="nist")
    label_everything(assign)
    judging.assign_submit(work_id=assign.pk, user=assign.assessor, expected_version=assign.version)
    job_run_sync(auto_assign_job_create(nuggets="nist", name="gpt").pk)
    return topic, assign, organizer


def test_the_upload_page_asks_to_confirm_then_retires_bumps_and_asks_for_the_new_nuggets(
    labelled_import, write_file, client, upload_worker
):
    topic, assign, organizer = labelled_import
    client.force_login(organizer)
    nugget_set = NuggetSet.objects.get(topic=topic, name="nist")
    version = nugget_set.version
    # 2 answers x 2 nuggets by the assessor and by the LLM.
    assert AssignmentLabel.objects.filter(nugget__nugget_set=nugget_set).count() == 8
    replacement = list_file(write_file, topic.pk, NEW, "new.jsonl")

    refused = upload(client, replacement, nuggets_name="nist", replace="on").content.decode()
    assert "Nothing was imported." in refused
    assert "4 of assigner &#x27;manual&#x27; (people&#x27;s work)" in refused
    assert "4 of assigner &#x27;gpt&#x27; (an LLM)" in refused
    assert "Retire labels on replaced nuggets" in refused
    nugget_set.refresh_from_db()
    assert nugget_set.version == version
    assert list(nugget_set.nuggets.order_by("position").values_list("text", "importance")) == OLD

    done = upload(client, replacement, nuggets_name="nist", replace="on", retire_labels="on").content.decode()
    assert "Nothing was imported." not in done and "retired 8 labels" in done
    nugget_set.refresh_from_db()
    assert nugget_set.version == version + 1  # a tab showing the old list is told it changed
    new_nuggets = list(nugget_set.nuggets.order_by("position"))
    assert [(n.text, n.importance) for n in new_nuggets] == NEW
    retired = RetiredAssignmentLabel.objects.filter(nugget_set=nugget_set)
    assert sorted(retired.values_list("assigner", "nugget_text")) == sorted(
        (who, text) for who in ("gpt", "manual") for text, _ in OLD for _answer in range(2)
    )
    assert not AssignmentLabel.objects.filter(nugget__nugget_set=nugget_set).exists()
    # The assessor's work is reopened for every nugget of the new list, and the LLM assigner is stale on them.
    assign.refresh_from_db()
    assert assign.status == AssessorWork.Status.IN_PROGRESS
    assert set(assign.redo["nuggets"]) == {str(n.pk) for n in new_nuggets}
    gpt = LabelSource.objects.get(family="assignment", name="gpt")
    assert sorted(gpt.stale["nist"][topic.pk]) == sorted(n.pk for n in new_nuggets)


def test_a_list_people_are_making_is_not_replaced_by_a_file(write_file, client, upload_worker):
    work = make_given_topic(condition="manual", query=QUERY)  # the list 'manual' is open in the workspace
    nugget_set = nugget_set_of(work)
    version = nugget_set.version
    path = list_file(write_file, work.topic_id, NEW)
    with pytest.raises(CommandError, match=r"The nugget set name 'manual' belongs to people's work \(.* on "):
        call_command(
            "import_nuggets", str(path), "--kind", "manual", "--name", "manual", "--replace", "--retire-labels"
        )
    client.force_login(make_user(Role.ORGANIZER))
    page = upload(client, path, nuggets_name="manual", replace="on", retire_labels="on").content.decode()
    assert "The nugget set name &#x27;manual&#x27; belongs to people&#x27;s work" in page
    nugget_set.refresh_from_db()
    assert (nugget_set.version, nugget_set.status, nugget_set.nuggets.count()) == (version, "open", 0)


def drafts_file(write_file, topic_id: str, texts: list[str]):
    record = {"qid": topic_id, "query": QUERY, "nuggets": [{"text": text} for text in texts]}
    return write_file("drafts_v2.jsonl", json.dumps(record) + "\n")


def post_edit(work, operation, **params):
    version = nugget_set_of(work).version
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation=operation, params=params, expected_version=version
    )


def lineage_of(work) -> list[tuple[str, list[str]]]:
    nuggets = nugget_set_of(work).nuggets.order_by("position").prefetch_related("derived_from")
    return [(n.text, sorted(d.text for d in n.derived_from.all())) for n in nuggets]


def test_drafts_being_post_edited_are_replaced_only_when_confirmed_and_keep_their_lineage(write_file):
    work = make_given_topic(condition="auto_edit", drafts=["draft a", "draft b", "draft c"], query=QUERY)
    first, second, third = nugget_set_of(work).nuggets.order_by("position").values_list("pk", flat=True)
    post_edit(work, "merge", nuggets=[first, second])
    post_edit(work, "edit", nugget=third, text="draft c, reworded")
    started = [("draft a; draft b", ["draft a", "draft b"]), ("draft c, reworded", ["draft c"])]
    assert lineage_of(work) == started
    edited_version = nugget_set_of(work).version
    path = drafts_file(write_file, work.topic_id, ["new draft x", "new draft y"])

    with pytest.raises(
        CommandError, match=r"line 1, field 'nuggets': the drafts 'draft' of topic .* are being post-edited"
    ):
        call_command("import_nuggets", str(path), "--drafts", "--replace")
    assert list(NuggetSet.objects.get(topic_id=work.topic_id, name="draft").nuggets.values_list("text", flat=True)) == [
        "draft a", "draft b", "draft c",
    ]  # fmt: skip

    call_command("import_nuggets", str(path), "--drafts", "--replace", "--retire-labels")
    # The file's drafts are the topic's drafts now; the old ones stay, renamed, as what the started list came from.
    new = NuggetSet.objects.get(topic_id=work.topic_id, name="draft")
    assert list(new.nuggets.order_by("position").values_list("text", flat=True)) == ["new draft x", "new draft y"]
    old = NuggetSet.objects.get(topic_id=work.topic_id, name="draft-replaced-1")
    assert list(old.nuggets.order_by("position").values_list("text", flat=True)) == ["draft a", "draft b", "draft c"]
    edited = nugget_set_of(work)
    assert edited.drafts_id == old.pk and edited.version == edited_version
    assert lineage_of(work) == started
    # Undo walks back to the copy of the old drafts, every link restored.
    post_edit(work, "undo")
    post_edit(work, "undo")
    assert lineage_of(work) == [("draft a", ["draft a"]), ("draft b", ["draft b"]), ("draft c", ["draft c"])]
    # New post-editing starts from the new drafts; a second replacement sets the second drafts aside beside the first.
    path = drafts_file(write_file, work.topic_id, ["newer draft z"])
    call_command("import_nuggets", str(path), "--drafts", "--replace", "--retire-labels")
    assert not NuggetSet.objects.filter(topic_id=work.topic_id, name="draft-replaced-2").exists()  # nothing edits it
    assert list(NuggetSet.objects.get(topic_id=work.topic_id, name="draft").nuggets.values_list("text", flat=True)) == [
        "newer draft z",
    ]  # fmt: skip
