"""Label sources: a name belongs to one kind of maker, and people's pages read only their own work's labels."""

import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Job, LabelSource
from assessor.sources import SourceRefused, source_claim
from assessor.work.services import WorkError
from assignment import judging
from assignment import kinds as assignment_kinds
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from support import kinds as support_kinds
from support import services
from support.judging import support_page_load, topic_pairs
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_run,
    make_segment,
    make_support_label,
    make_topic,
    make_user,
    nuggets_of,
)
from tests.scenarios import give_assign, give_support, make_scenario

pytestmark = pytest.mark.django_db

CONFIG = LLMConfig(model="model-one", base_url="http://llm.example/v1")


def logged_in(client, user):
    client.force_login(user)
    return client


# --- A name belongs to one source -----------------------------------------------------------


def test_the_first_writer_makes_the_source_with_its_provenance():
    scenario = make_scenario(plant_llm=False)
    work = give_assign(scenario)
    source = LabelSource.objects.get(family="assignment", name="manual")
    assert (source.kind, work.source_id) == ("person", source.pk)
    job = auto_assign_job_create(nuggets="manual", name="gpt-labels", config=CONFIG)
    llm = LabelSource.objects.get(family="assignment", name="gpt-labels")
    assert (llm.kind, llm.model, llm.endpoint, llm.prompt_versions, llm.job_id) == (
        "llm",
        "model-one",
        "http://llm.example/v1",
        {"assign": 1},
        job.pk,
    )


def test_an_llm_job_cannot_write_into_people_s_assigner():
    scenario = make_scenario(plant_llm=False)
    give_assign(scenario)
    with pytest.raises(
        JobRequestInvalid, match=rf"'manual' belongs to people's work \({scenario.assessor} on {scenario.topic.pk}\)"
    ):
        auto_assign_job_create(nuggets="manual", name="manual", config=CONFIG)
    assert not Job.objects.exists()


def test_the_command_refuses_it_too(llm_server):
    scenario = make_scenario(plant_llm=False)
    give_assign(scenario)
    with pytest.raises(CommandError, match="belongs to people's work"):
        call_command("run_auto_assign", "--name", "manual", "--nuggets", "manual", "--sync")
    assert not AssignmentLabel.objects.exists()


def test_imports_cannot_write_into_people_s_names(write_file):
    scenario = make_scenario(plant_llm=False)
    give_assign(scenario)
    give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    line = {
        "qid": scenario.topic.pk,
        "run_id": "SECRETRUN-alpha",
        "answer_text": "x",
        "nuggets": [{"text": "The answer names the capital", "importance": "vital", "assignment": "support"}],
    }
    path = write_file("a.jsonl", json.dumps(line) + "\n")
    with pytest.raises(
        CommandError, match=r"field '--assigner-name': The assigner name 'manual' belongs to people's work"
    ):
        call_command(
            "import_assignments", str(path), "--nuggets", "auto_edit", "--nuggets-name", "nist",
            "--assigner", "auto", "--assigner-name", "manual",
        )  # fmt: skip
    with pytest.raises(
        CommandError, match=r"field '--name': The support method name 'scratch' belongs to people's work"
    ):
        call_command("import_support", str(write_file("s.jsonl", "{}\n")), "--method", "auto", "--name", "scratch")
    with pytest.raises(CommandError, match=r"The nugget set name 'manual' belongs to people's work"):
        call_command("import_nuggets", str(write_file("n.jsonl", "{}\n")), "--kind", "manual", "--name", "manual")
    assert not AssignmentLabel.objects.exists() and not SupportLabel.objects.exists()


def test_an_llm_source_takes_no_other_model():
    job = Job.objects.create(
        kind=assignment_kinds.AUTO_ASSIGN, output_name="x", model="model-one", prompt_versions={"assign": 1}
    )
    source_claim(family="assignment", name="gpt", kind="llm", job=job)
    # The jobs below are no owners of the output (a job launched under a taken name is refused before it is
    # made): the source's own rule is what is tested.
    other = Job.objects.create(
        kind=assignment_kinds.AUTO_ASSIGN,
        output_name="x",
        owns_output=False,
        model="model-two",
        prompt_versions={"assign": 1},
    )
    with pytest.raises(
        SourceRefused,
        match=r"holds the labels of the LLM model-one of the endpoint 'default' \(job \d+\): a job of model-two",
    ):
        source_claim(family="assignment", name="gpt", kind="llm", job=other)
    newer = Job.objects.create(
        kind=assignment_kinds.AUTO_ASSIGN,
        output_name="x",
        owns_output=False,
        model="model-one",
        prompt_versions={"assign": 2},
    )
    with pytest.raises(SourceRefused, match="made with the prompts assign v1"):
        source_claim(family="assignment", name="gpt", kind="llm", job=newer)
    # The same model and prompts may write again (a re-run of changed items).
    same = Job.objects.create(
        kind=assignment_kinds.AUTO_ASSIGN,
        output_name="x",
        owns_output=False,
        model="model-one",
        prompt_versions={"assign": 1},
    )
    assert source_claim(family="assignment", name="gpt", kind="llm", job=same).kind == "llm"


def test_a_file_owns_its_name_against_people():
    topic = make_topic()
    nugget_set = make_nugget_set(topic, texts=["a fact"], name="auto_edit")
    make_assignment_label(make_answer(make_run(), topic), nuggets_of(nugget_set)[0], "support", assigner="manual")
    with pytest.raises(WorkError, match=r"The assigner name 'manual' belongs to the file test.jsonl"):
        judging.assign_work_give(topic=topic, assessor=make_user(), by=None)


# --- Blind by provenance: new work starts empty whatever else labels the same items ----------------


def test_work_beside_an_llm_job_named_like_the_human_condition_starts_empty(llm_server, client):
    scenario = make_scenario(plant_llm=False)
    job = auto_assign_job_create(nuggets="manual", name="manual")
    job_run_sync(job.pk)
    llm_labels = AssignmentLabel.objects.filter(assigner="manual", source__kind="llm")
    assert llm_labels.count() == len(scenario.answers) * len(scenario.nuggets)
    # The name is the LLM's now: people's work is refused there, naming the owner...
    with pytest.raises(WorkError, match=r"'manual' belongs to the LLM .*: an assessor's work cannot write into it"):
        give_assign(scenario)
    # ... and given under another name it starts empty, on the very answers and nuggets the LLM labelled.
    work = judging.assign_work_give(
        topic=scenario.topic, assessor=scenario.assessor, by=scenario.organizer, assigner_name="people"
    )
    page = judging.assign_page_load(work=work)
    assert (page.labels_done, page.labels, page.answers_done) == (0, {}, 0)
    html = logged_in(client, scenario.assessor).get(reverse("judge:answer", args=[work.pk, 1])).content.decode()
    assert not re.search(r'class="choice [a-z_]+ on"', html)  # no label button is shown pressed
    # The assessor's label goes into the people's source, with the work it was made in.
    judging.assignment_label_save(
        work_id=work.pk, user=scenario.assessor, number=1, nugget_id=scenario.nuggets[0].pk,
        label="support", previous="", expected_version=work.version,
    )  # fmt: skip
    mine = AssignmentLabel.objects.get(work=work)
    assert (mine.assigner, mine.source.kind, mine.created_by_id) == ("people", "person", scenario.assessor.pk)


def test_work_beside_imported_labels_named_like_the_human_condition_starts_empty():
    topic = make_topic()
    nugget_set = make_nugget_set(topic, texts=["first fact", "second fact"], name="auto_edit")
    answers = [make_answer(make_run(), topic) for _ in range(2)]
    for answer in answers:
        for nugget in nuggets_of(nugget_set):
            make_assignment_label(answer, nugget, "support", assigner="manual")
    work = judging.assign_work_give(topic=topic, assessor=make_user(), by=None, assigner_name="mine")
    page = judging.assign_page_load(work=work)
    assert (page.labels_done, page.labels_total, page.labels) == (0, 4, {})
    with pytest.raises(WorkError, match="missing"):
        judging.assign_submit(work_id=work.pk, user=work.assessor, expected_version=work.version)


def test_support_work_beside_imported_labels_named_scratch_starts_empty():
    topic = make_topic()
    segment = make_segment()
    answer = make_answer(make_run(), topic, [("One cites.", [segment]), ("Two cites.", [segment])])
    make_support_label(answer, 0, 2, method="scratch")
    make_support_label(answer, 1, 1, method="scratch")
    assessor = make_user()
    with pytest.raises(WorkError, match="'scratch' belongs to the file"):
        services.support_work_give(topic=topic, assessor=assessor, kind=support_kinds.SUPPORT_SCRATCH, by=None)
    work = services.support_work_give(
        topic=topic, assessor=assessor, kind=support_kinds.SUPPORT_SCRATCH, by=None, method_name="scratch-people"
    )
    page = support_page_load(work=work)
    assert (page.pairs_done, page.pairs_total) == (0, 2)
    assert all(row.label is None for row in page.rows)
    assert topic_pairs(work=work).done == {}


def test_post_editing_shows_only_labels_no_person_made():
    topic = make_topic()
    segment = make_segment()
    answer = make_answer(make_run(), topic, [("One cites.", [segment])])
    # An automatic-kind method whose source is people's work cannot be post-edited: it is no LLM's output.
    person = make_user()
    LabelSource.objects.create(family="support", name="fake-auto", kind="person")
    SupportLabel.objects.create(
        citation=answer.sentences.get().citations.get(), method="fake-auto", method_kind="auto", label=2,
        source=LabelSource.objects.get(name="fake-auto"), created_by=person,
    )  # fmt: skip
    with pytest.raises(WorkError, match="no automatic support labels"):
        services.support_work_give(topic=topic, assessor=make_user(), kind=support_kinds.SUPPORT_POSTEDIT, by=None)


def test_a_failed_import_claims_no_name(write_file):
    topic = make_topic()
    good = {
        "qid": topic.pk,
        "run_id": "run-a",
        "answer_text": "x",
        "nuggets": [{"text": "a fact", "importance": "vital", "assignment": "support"}],
    }
    bad = {**good, "run_id": "run-b", "nuggets": [{"text": "a fact", "importance": "vital", "assignment": "maybe"}]}
    path = write_file("a.jsonl", json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(CommandError, match="line 2"):
        call_command("import_assignments", str(path), "--nuggets", "auto_edit", "--assigner", "manual")
    # The name stays free: a person's work may still take it.
    assert not LabelSource.objects.exists()
    make_nugget_set(topic, texts=["a fact"], name="mine", kind="manual")
    make_answer(make_run(), topic)
    work = judging.assign_work_give(topic=topic, assessor=make_user(), by=None, nugget_set_name="mine")
    assert work.source.name == "manual" and work.source.kind == "person"
