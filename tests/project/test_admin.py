"""The admin covers every model, and its change lists and forms render with real rows."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor.models import (
    AssessorWork,
    Citation,
    ImportBatch,
    Job,
    JobItem,
    LLMCall,
    PromptTemplate,
    RunAlias,
    Upload,
    WorkEvent,
    WorkOperation,
)
from assessor.work.roles import Role, project_apps
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from metaeval.models import ImportedScore, ScoreTable
from nuggets.models import Nugget, NuggetEdit, NuggetSet
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_batch,
    make_collection,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    make_user,
    source_of,
)

pytestmark = pytest.mark.django_db


def project_models() -> list:
    return [model for app in project_apps() for model in apps.get_app_config(app).get_models()]


@pytest.fixture
def superuser(client):
    user = User.objects.create_superuser("root", password="pw-for-tests")
    client.force_login(user)
    return user


@pytest.fixture
def one_of_everything(superuser):
    """A row of every model, so the change lists render real objects."""
    topic = make_topic("2024-1", query="how do bees see colour")
    segment = make_segment("doc_a#0_0", text="Bees see ultraviolet light.")
    make_qrel(topic, segment, grade=2, source="nist")
    run = make_run("team.good")
    answer = make_answer(run, topic, [("Bees see ultraviolet.", [segment])])
    RunAlias.objects.create(alias="good-old", run=run, joined_from="good-old", answers_moved=1, created_by=superuser)
    batch = make_batch(kind="nuggets")
    nugget_set = NuggetSet.objects.create(
        topic=topic, kind="auto_edit", name="auto_edit", source=source_of("nuggets", "auto_edit"), imported_from=batch
    )
    nugget = Nugget.objects.create(
        nugget_set=nugget_set, position=0, text="bees see ultraviolet", importance="vital", imported_from=batch
    )
    NuggetEdit.objects.create(nugget_set=nugget_set, user=superuser, operation="add", set_version=1)
    AssignmentLabel.objects.create(
        answer=answer,
        nugget=nugget,
        assigner="manual",
        source=source_of("assignment", "manual"),
        assigner_kind="manual",
        label="support",
        imported_from=batch,
    )
    SupportLabel.objects.create(
        citation=Citation.objects.get(),
        method="scratch",
        source=source_of("support", "scratch"),
        method_kind="scratch",
        label=2,
        imported_from=batch,
    )
    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="gpt", model="gpt-4o")
    item = JobItem.objects.create(job=job, key="answer-1")
    prompt = PromptTemplate.objects.create(name="assign", version=1, system="s", user="u", sha256="0" * 64)
    LLMCall.objects.create(job=job, item=item, prompt=prompt, model="gpt-4o", messages=[], cache_key="k")
    work = AssessorWork.objects.create(
        topic=topic, assessor=make_user(Role.ASSESSOR), kind=assignment_kinds.ASSIGN_MANUAL
    )
    WorkEvent.objects.create(work=work, user=superuser, action="submit")
    WorkOperation.objects.create(work=work, op_id="op-1", answer={"label": "support"})
    Upload.objects.create(kind="nuggets", file_name="nuggets.jsonl", size=120, state="done", batch=batch)
    table = ScoreTable.objects.create(name="official", imported_from=batch)
    ImportedScore.objects.create(table=table, run_id="team.good", topic_id="all", metric="Vstrict", value=0.5)
    return {"nugget_set": nugget_set}


def test_every_model_of_every_app_is_in_the_admin():
    missing = [model._meta.label for model in project_models() if not admin.site.is_registered(model)]
    assert missing == []


def test_every_change_list_renders_for_a_superuser(client, one_of_everything):
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        response = client.get(url)
        assert response.status_code == 200, url
    # A search and a filter too, on the biggest tables.
    assert client.get(reverse("admin:assignment_assignmentlabel_changelist"), {"q": "2024-1"}).status_code == 200
    assert client.get(reverse("admin:assessor_qrel_changelist"), {"grade__exact": "2"}).status_code == 200


def test_every_change_form_renders_for_a_superuser(client, one_of_everything):
    opened = set()
    for model in project_models():
        if not admin.site.is_registered(model):
            continue
        obj = model.objects.first()
        if obj is None:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk])
        assert client.get(url).status_code == 200, url
        opened.add(model._meta.label_lower)
    # Rows the fixture makes, so the loop opened forms (the set grows with every model registered).
    assert {"assessor.topic", "assessor.run", "assessor.answer", "assessor.runalias"} <= opened


def test_provenance_is_read_only():
    for model in (NuggetSet, Nugget, AssignmentLabel, SupportLabel):
        readonly = admin.site._registry[model].readonly_fields
        assert {"created_by", "job", "imported_from", "created_at"} <= set(readonly), model
    assert "sha256" in admin.site._registry[ImportBatch].readonly_fields


def test_an_organizer_opens_the_admin_without_delete(client, one_of_everything):
    client.force_login(make_user(Role.ORGANIZER))
    assert client.get(reverse("admin:assignment_assignmentlabel_changelist")).status_code == 200
    nugget_set = one_of_everything["nugget_set"]
    delete_url = reverse("admin:nuggets_nuggetset_delete", args=[nugget_set.pk])
    assert client.get(delete_url).status_code == 403


def run_action(client, model, action: str, pks: list) -> object:
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return client.post(url, {"action": action, "_selected_action": [str(pk) for pk in pks]})


def test_download_actions_send_to_the_download_of_the_selection(client, one_of_everything):
    label = AssignmentLabel.objects.get()
    response = run_action(client, AssignmentLabel, "download_scores", [label.pk])
    assert response.status_code == 302
    assert response["Location"] == reverse("collection:download_scores", args=["auto_edit", "manual"])
    response = run_action(client, SupportLabel, "download_support", [SupportLabel.objects.get().pk])
    assert response["Location"] == reverse("collection:download_support", args=["scratch"])
    # The qrels source list also links each source's download.
    page = client.get(reverse("admin:assessor_qrelsource_changelist")).content.decode()
    assert reverse("collection:download_qrels", args=["nist"]) in page


def test_a_download_action_on_two_conditions_asks_for_one(client, one_of_everything):
    first = AssignmentLabel.objects.get()
    second = AssignmentLabel.objects.create(
        answer=first.answer,
        nugget=first.nugget,
        assigner="gpt",
        source=source_of("assignment", "gpt"),
        assigner_kind="auto",
        label="support",
        imported_from=first.imported_from,
    )
    response = run_action(client, AssignmentLabel, "download_assignments", [first.pk, second.pk])
    assert response.status_code == 302
    assert response["Location"].endswith(reverse("admin:assignment_assignmentlabel_changelist"))
    page = client.get(response["Location"]).content.decode()
    assert "exactly one condition" in page


def change_list_query_counts(client) -> dict[str, int]:
    counts = {}
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200, url
        counts[url] = len(queries)
    return counts


def test_change_lists_cost_a_fixed_number_of_queries(client, superuser):
    make_collection(2)
    small = change_list_query_counts(client)
    make_collection(5)
    big = change_list_query_counts(client)
    grown = {url: (small[url], big[url]) for url in small if small[url] != big[url]}
    assert grown == {}


def test_the_project_apps_are_ours_and_no_library():
    """The organizer's permissions cover the project's own apps, whatever they are, and no library's."""
    labels = project_apps()
    assert {"assessor", "nuggets", "assignment", "support", "metaeval"} <= set(labels)
    assert not {"axes", "django_htmx", "admin", "auth"} & set(labels)
