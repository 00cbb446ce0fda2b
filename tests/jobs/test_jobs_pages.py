"""The organizer's jobs pages: launch, progress (htmx), failures with the raw answer, call log, cancel/resume."""

import pytest
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.models import Job
from assessor.work.roles import Role
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from tests.builders import make_answer, make_nugget_set, make_run, make_topic, make_user
from tests.jobs.interrupted import run_stopped_before_its_end
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def collection():
    topic = make_topic("p1", query="zebra stripes")
    make_nugget_set(topic, texts=["zebra stripes are black", "lions roar"], kind="manual", name="manual")
    for i in range(2):
        make_answer(make_run(f"run{i}"), topic, [(f"Zebra stripes are black, says {i}.", [])])



def test_assessors_cannot_see_jobs(client):
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(reverse("jobs:list")).status_code == 403


def test_without_an_llm_the_pages_say_what_to_set(organizer, settings, collection):
    settings.LLM_MODEL = ""
    settings.LLM_BASE_URL = ""
    settings.LLM_API_KEY = ""
    page = organizer.get(reverse("jobs:list")).content.decode()
    assert "No LLM is configured. Set LLM_MODEL" in page
    launch = organizer.get(reverse("jobs:launch", args=["auto_assign"])).content.decode()
    assert "No LLM is configured" in launch
    response = organizer.post(reverse("jobs:launch", args=["auto_assign"]), {"name": "x", "nuggets": "manual"})
    assert response.status_code == 200
    assert not Job.objects.exists()


def test_an_organizer_launches_auto_assign_and_watches_it(organizer, llm_server, collection, worker_inline):
    response = organizer.post(
        reverse("jobs:launch", args=["auto_assign"]), {"name": "auto-page", "nuggets": "manual", "runs": "run0 run1"}
    )
    job = Job.objects.get(output_name="auto-page")
    assert response.status_code == 302 and response["Location"] == reverse("jobs:detail", args=[job.pk])
    assert worker_inline == [job.pk]
    assert job.created_by is not None
    assert AssignmentLabel.objects.filter(assigner="auto-page").count() == 4
    page = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "2/2" in page and "done" in page
    # Finished: the progress panel stops polling.
    assert 'hx-trigger="every 2s"' not in page
    listing = organizer.get(reverse("jobs:list")).content.decode()
    assert "auto-page" in listing


def test_a_launch_error_is_shown_on_the_form(organizer, llm_server, collection):
    response = organizer.post(reverse("jobs:launch", args=["auto_assign"]), {"name": "x", "nuggets": "manual", "runs": "nope"})
    assert "unknown run(s): nope" in response.content.decode()
    assert not Job.objects.exists()


def test_the_progress_panel_polls_while_the_job_runs(organizer, llm_server, collection):
    job = auto_assign_job_create(nuggets="manual", name="auto-x")
    response = organizer.get(reverse("jobs:detail", args=[job.pk]), HTTP_HX_REQUEST="true")
    fragment = response.content.decode()
    assert "<html" not in fragment
    assert 'id="progress"' in fragment and 'hx-trigger="every 2s"' in fragment
    assert "0/2" in fragment


def test_failures_show_the_raw_answer_and_a_resume_retries_them(organizer, llm_server, collection, settings, worker_inline):
    settings.LLM_MAX_REASKS = 0
    job = auto_assign_job_create(nuggets="manual", name="auto-f", runs=["run0"])
    llm_server.script(Reply.literal("Both nuggets are supported <b>clearly</b>."))
    job_run_sync(job.pk)
    page = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "the answer holds no list" in page
    assert "Both nuggets are supported &lt;b&gt;clearly&lt;/b&gt;." in page
    response = organizer.post(reverse("jobs:resume", args=[job.pk]))
    assert response.status_code == 302
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == ("done", 1, 0)


def test_the_call_log_shows_prompt_version_messages_and_answer(organizer, llm_server, collection):
    job = auto_assign_job_create(nuggets="manual", name="auto-c", runs=["run0"])
    job_run_sync(job.pk)
    page = organizer.get(reverse("jobs:calls", args=[job.pk])).content.decode()
    assert "assign v1" in page and "fake-model" in page
    assert "NuggetizeAssignerLLM" in page
    assert "[&quot;support&quot;, " in page


def test_cancel_stops_a_queued_job(organizer, llm_server, collection):
    job = auto_assign_job_create(nuggets="manual", name="auto-s")
    organizer.post(reverse("jobs:cancel", args=[job.pk]))
    job.refresh_from_db()
    assert job.status == "cancelled"
    assert organizer.get(reverse("jobs:cancel", args=[job.pk])).status_code == 405


def test_each_job_launches_from_the_browser(organizer, llm_server, worker_inline):
    from assessor.models import QrelSource
    from nuggets.models import NuggetSet
    from support.models import SupportLabel
    from tests.builders import make_qrel, make_segment

    topic = make_topic("b1", query="zebra stripes")
    segment = make_segment("b#1", text="Zebra stripes are black and white.")
    make_qrel(topic, segment, grade=2)
    make_answer(make_run("rb"), topic, [("Zebra stripes are black and white.", [segment])])
    launches = [
        ("umbrela", {"name": "umb-page"}),
        ("auto_nuggets", {"name": "drafts-page", "qrels": "nist", "drafts": "on"}),
        ("auto_support", {"name": "support-page", "runs": "rb"}),
    ]
    for kind, data in launches:
        response = organizer.post(reverse("jobs:launch", args=[kind]), data)
        assert response.status_code == 302, response.content.decode()
    assert QrelSource.objects.get(name="umb-page").qrels.get().grade == 2
    assert NuggetSet.objects.get(name="drafts-page").kind == "draft"
    assert SupportLabel.objects.get(method="support-page").label == SupportLabel.Label.FS
    assert set(Job.objects.values_list("status", flat=True)) == {"done"}


def test_resuming_a_job_left_running_with_nothing_to_do_ends_it(organizer, llm_server, collection):
    job = auto_assign_job_create(nuggets="manual", name="auto-e")
    # Its last item's worker stopped before the job's end.
    run_stopped_before_its_end(job.pk)
    assert Job.objects.get(pk=job.pk).status == "running"
    page = organizer.post(reverse("jobs:resume", args=[job.pk]), follow=True).content.decode()
    assert f"Job {job.pk} has nothing left to do: it is done." in page
    assert Job.objects.get(pk=job.pk).status == "done"


def test_cancel_then_resume_ends_a_job_left_running_with_nothing_to_do(organizer, llm_server, collection):
    job = auto_assign_job_create(nuggets="manual", name="auto-e")
    run_stopped_before_its_end(job.pk)
    # The page offers Cancel while a job runs, then Resume.
    organizer.post(reverse("jobs:cancel", args=[job.pk]))
    assert Job.objects.get(pk=job.pk).status == "cancelled"
    page = organizer.post(reverse("jobs:resume", args=[job.pk]), follow=True).content.decode()
    assert f"Job {job.pk} has nothing left to do: it is done." in page
    assert Job.objects.get(pk=job.pk).status == "done"
