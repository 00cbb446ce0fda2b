"""Kinds are the apps' strings: a kind an app declares shows up everywhere, one no app declares breaks nothing.

A row keeps the kind it was made with when its app leaves the settings; its pages
show the stored value marked unknown, never a 500, and a job of it is not resumed.
"""

import pytest
from django.urls import reverse

from assessor.jobs.forms import RunsLaunchForm
from assessor.models import AssessorWork, Job, JobItem, LabelSource, Upload
from assessor.registry import JobKind, registry
from assessor.work.roles import Role
from tests.builders import make_batch, make_topic, make_user, source_of

pytestmark = pytest.mark.django_db

GONE = "retired_kind"


@pytest.fixture
def admin_client(client):
    client.force_login(make_user(Role.ADMIN, username="root"))
    return client


@pytest.fixture
def rows_of_a_removed_app():
    """A job, a piece of work, an import, an upload and a label source whose kinds no installed app declares."""
    assessor = make_user(Role.ASSESSOR, username="ann")
    job = Job.objects.create(kind=GONE, output_name="old-output", model="m", status=Job.Status.FAILED)
    JobItem.objects.create(job=job, key="a", status=JobItem.Status.FAILED)
    work = AssessorWork.objects.create(topic=make_topic("t-1"), assessor=assessor, kind=GONE)
    batch = make_batch(kind=GONE)
    upload = Upload.objects.create(kind=GONE, file_name="old.jsonl")
    source = source_of(GONE, "old-source")
    return {"assessor": assessor, "job": job, "work": work, "batch": batch, "upload": upload, "source": source}


def test_the_labels_of_an_unknown_kind_say_so(rows_of_a_removed_app):
    rows = rows_of_a_removed_app
    assert rows["job"].kind_label == "retired_kind (unknown)"
    assert rows["work"].kind_label == "retired_kind (unknown)"
    assert rows["batch"].kind_label == "retired_kind (unknown)"
    assert rows["upload"].kind_label == "retired_kind (unknown)"
    assert rows["source"].family_label == "retired_kind (unknown)"
    assert str(rows["source"]).startswith("retired_kind (unknown) 'old-source'")


def test_the_labels_of_declared_kinds_come_from_their_apps(db):
    assert registry.job_label("auto_nuggets") == "AutoNuggets"
    assert registry.work_label("assign_manual") == "ManualAssign"
    assert registry.import_label("qrels") == "Qrels (TREC qrels)"
    assert registry.family_label("support") == "support method"
    assert Job(kind="umbrela").kind_label == "UMBRELA relevance grades"


def test_the_organizers_pages_show_an_unknown_kind(admin_client, rows_of_a_removed_app):
    rows = rows_of_a_removed_app
    pages = [
        reverse("jobs:list"),
        reverse("jobs:detail", args=[rows["job"].pk]),
        reverse("collection:upload"),
        reverse("collection:upload_detail", args=[rows["upload"].pk]),
        reverse("admin:assessor_job_changelist"),
        reverse("admin:assessor_job_change", args=[rows["job"].pk]),
        reverse("admin:assessor_assessorwork_changelist"),
        reverse("admin:assessor_assessorwork_change", args=[rows["work"].pk]),
        reverse("admin:assessor_importbatch_changelist"),
        reverse("admin:assessor_upload_changelist"),
        reverse("admin:assessor_labelsource_changelist"),
    ]
    for url in pages:
        response = admin_client.get(url)
        assert response.status_code == 200, url
        assert "retired_kind (unknown)" in response.content.decode(), url


def test_the_admin_filters_by_declared_and_stored_kinds(admin_client, rows_of_a_removed_app):
    html = admin_client.get(reverse("admin:assessor_job_changelist")).content.decode()
    # Every kind the apps declare, by its label, and the stored one no app declares.
    for label in ("AutoNuggets", "AutoAssign", "Automatic support judging", "UMBRELA relevance grades"):
        assert label in html
    filtered = admin_client.get(reverse("admin:assessor_job_changelist"), {"kind": "auto_assign"})
    assert "old-output" not in filtered.content.decode()
    filtered = admin_client.get(reverse("admin:assessor_job_changelist"), {"kind": GONE})
    assert "old-output" in filtered.content.decode()


def test_the_assessors_queue_lists_work_of_an_unknown_kind_without_a_page(client, rows_of_a_removed_app):
    client.force_login(rows_of_a_removed_app["assessor"])
    html = client.get(reverse("home")).content.decode()
    assert "retired_kind (unknown)" in html
    assert "page not available yet" in html


def test_a_job_of_an_unknown_kind_is_not_resumed(admin_client, rows_of_a_removed_app):
    job = rows_of_a_removed_app["job"]
    response = admin_client.post(reverse("jobs:resume", args=[job.pk]), follow=True)
    assert "no installed app does jobs of kind &#x27;retired_kind&#x27;" in response.content.decode()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert JobItem.objects.get(job=job).status == JobItem.Status.FAILED


def test_a_job_kind_an_app_registers_is_listed_and_launched_from_the_page(admin_client, monkeypatch):
    """What a new app's parts.py does: the jobs page lists the kind and its launch page renders, with its command."""
    kind = JobKind(
        kind="new_judge",
        label="A new judge",
        description="Judges something new.",
        command="run_new_judge",
        compute=lambda **_: None,
        store=lambda **_: None,
        form=RunsLaunchForm,
    )
    monkeypatch.setitem(registry.job_kinds, kind.kind, kind)
    listing = admin_client.get(reverse("jobs:list")).content.decode()
    assert reverse("jobs:launch", args=["new_judge"]) in listing
    assert "A new judge" in listing
    launch = admin_client.get(reverse("jobs:launch", args=["new_judge"]))
    assert launch.status_code == 200
    html = launch.content.decode()
    assert "Launch A new judge" in html
    assert "manage.py run_new_judge --name NAME" in html
    assert "Judges something new." in html


def test_a_kind_no_app_declares_has_no_launch_page(admin_client):
    assert admin_client.get(reverse("jobs:launch", args=[GONE])).status_code == 404


def test_label_source_family_is_a_free_string(db):
    """A new family needs no migration: the column takes any value an app declares."""
    LabelSource.objects.create(family="rankings", name="x", kind=LabelSource.Kind.FILE)
    assert LabelSource.objects.get(family="rankings").family_label == "rankings (unknown)"
