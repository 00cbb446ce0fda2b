"""A name belongs to one source through every way in: the commands, the jobs' launch form, the upload page
and the give forms all refuse a write into a source another kind of maker owns, and say who owns it."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.jobs.llm.client import LLMConfig
from assessor.models import AssessorWork, Job, LabelSource
from assignment import kinds as assignment_kinds
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from support import kinds as support_kinds
from support.auto import auto_support_job_create
from support.models import SupportLabel
from tests.builders import make_answer, make_assignment_label, make_nugget_set, make_run, make_topic, nuggets_of
from tests.scenarios import give_assign, give_support, make_scenario

pytestmark = pytest.mark.django_db

CONFIG = LLMConfig(model="model-one", base_url="http://llm.example/v1")


def logged_in(client, user):
    client.force_login(user)
    return client


def upload(client, name: str, content: str, **options):
    return client.post(
        reverse("collection:upload"), {"file": SimpleUploadedFile(name, content.encode()), **options}, follow=True
    )


@pytest.fixture
def imported_assigner():
    """Labels imported under the assigner name 'nist' (a file's source) on a topic with a nugget list."""
    topic = make_topic()
    nugget_set = make_nugget_set(topic, texts=["a fact"], name="nist-nuggets")
    make_assignment_label(make_answer(make_run(), topic), nuggets_of(nugget_set)[0], "support", assigner="nist")
    return nugget_set


# --- LLM jobs: the command and the launch form ------------------------------------------------------


def test_a_job_into_a_name_imported_labels_hold_names_the_file(imported_assigner, llm_server):
    # The name is taken by labels already: the refusal says whose, not only that it is in use.
    with pytest.raises(CommandError, match=r"The assigner name 'nist' belongs to the file test.jsonl .*an LLM job"):
        call_command("run_auto_assign", "--name", "nist", "--nuggets", "nist-nuggets", "--sync")
    assert not Job.objects.exists()


def test_a_job_into_a_name_people_labelled_names_their_work(llm_server, client):
    scenario = make_scenario(plant_llm=False)
    work = give_assign(scenario)
    AssignmentLabel.objects.create(
        answer=scenario.answers[0], nugget=scenario.nuggets[0], label="support", assigner="manual",
        assigner_kind="manual", source=work.source, work=work, created_by=scenario.assessor,
    )  # fmt: skip
    response = logged_in(client, scenario.organizer).post(
        reverse("jobs:launch", args=["auto_assign"]), {"name": "manual", "nuggets": "manual"}
    )
    page = response.content.decode()
    assert "The assigner name &#x27;manual&#x27; belongs to people&#x27;s work" in page
    assert f"{scenario.assessor} on {scenario.topic.pk}" in page
    assert not Job.objects.exists()


def test_the_launch_form_names_the_people_before_any_label(llm_server, client):
    scenario = make_scenario(plant_llm=False)
    give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    response = logged_in(client, scenario.organizer).post(
        reverse("jobs:launch", args=["auto_support"]), {"name": "scratch"}
    )
    assert "The support method name &#x27;scratch&#x27; belongs to people&#x27;s work" in response.content.decode()
    assert not Job.objects.exists() and not SupportLabel.objects.exists()


def test_a_relevance_job_into_imported_qrels_names_the_file(llm_server, judged_topic):
    with pytest.raises(CommandError, match=r"The qrels source name 'nist' belongs to imported files: an LLM job"):
        call_command("run_umbrela", "--name", "nist", "--sync")


# --- Imports: the upload page ---------------------------------------------------------------------------


def test_the_upload_page_refuses_an_import_into_people_s_assigner_naming_them(client, upload_worker):
    scenario = make_scenario(plant_llm=False)
    give_assign(scenario)
    line = {
        "qid": scenario.topic.pk,
        "run_id": "SECRETRUN-alpha",
        "answer_text": "x",
        "nuggets": [{"text": "The answer names the capital", "importance": "vital", "assignment": "support"}],
    }
    response = upload(
        logged_in(client, scenario.organizer), "a.jsonl", json.dumps(line) + "\n",
        kind="assignments", nuggets_kind="auto_edit", nuggets_name="nist", assigner_kind="auto",
        assigner_name="manual",
    )  # fmt: skip
    page = response.content.decode()
    assert "The assigner name &#x27;manual&#x27; belongs to people&#x27;s work" in page
    assert "an import cannot write into it" in page and "Nothing was imported." in page
    assert not AssignmentLabel.objects.exists()


def test_the_upload_page_refuses_an_import_into_an_llm_s_method_naming_it(client, upload_worker):
    scenario = make_scenario(plant_llm=False)
    auto_support_job_create(name="gpt-support", config=CONFIG)
    response = upload(
        logged_in(client, scenario.organizer), "s.jsonl", "{}\n", kind="support", method_kind="auto",
        method_name="gpt-support",
    )  # fmt: skip
    page = response.content.decode()
    assert "The support method name &#x27;gpt-support&#x27; belongs to the LLM model-one" in page
    assert "an import cannot write into it" in page


# --- People's work: the give forms ---------------------------------------------------------------------


def test_the_give_form_refuses_an_assigner_an_llm_holds_naming_it(client):
    scenario = make_scenario(plant_llm=False)
    job = auto_assign_job_create(nuggets="manual", name="gpt-labels", config=CONFIG)
    response = logged_in(client, scenario.organizer).post(
        reverse("judge:organize"),
        {"topics": scenario.topic.pk, "assessor": scenario.assessor.pk, "nuggets": "", "assigner": "gpt-labels"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "The assigner name &#x27;gpt-labels&#x27; belongs to the LLM" in page and f"job {job.pk}" in page
    assert "an assessor&#x27;s work cannot write into it" in page
    assert not AssessorWork.objects.filter(kind=assignment_kinds.ASSIGN_MANUAL).exists()


def test_the_support_give_form_refuses_a_method_a_file_holds_naming_it(client):
    scenario = make_scenario(plant_llm=False)
    LabelSource.objects.create(family="support", name="imported-scratch", kind="file")
    response = logged_in(client, scenario.organizer).post(
        reverse("support:organize"),
        {
            "topics": scenario.topic.pk,
            "assessor": scenario.assessor.pk,
            "condition": "support_scratch",
            "method_name": "imported-scratch",
        },
    )
    page = response.content.decode()
    assert "The support method name &#x27;imported-scratch&#x27; belongs to imported files" in page
    assert not AssessorWork.objects.filter(kind=support_kinds.SUPPORT_SCRATCH).exists()
