"""The deployment README describes, run for real: `bin/serve` (gunicorn and a Celery worker) on
PostgreSQL and Redis, with DEBUG off, driven over HTTP as a browser drives it.

An assessor logs in and saves a label through the judging endpoint the way the page's script
does; an organizer launches an LLM job on the jobs page, which the worker runs against the
project's fake LLM server; the static files and the health endpoint answer. The site runs on
the test database and a queue of its own, so that other workers on the same Redis never
take its jobs.
"""

import time
import uuid
from pathlib import Path

import pytest
from django.conf import global_settings
from django.conf import settings as django_settings
from django.contrib.auth.hashers import make_password
from django.urls import reverse
from django.utils.module_loading import import_string

from assessor.models import Job, Topic, Upload
from assignment.models import AssignmentLabel
from bench.http_site import Visitor, label_forms, label_post, location_path
from bench.serving import ServedSite, free_port
from tests.llm_server import FakeLLMServer
from tests.scenarios import give_assign, make_scenario
from tests.services import redis_or_skip

pytestmark = [pytest.mark.services, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "a-long-enough-password"
# The project's settings keep Django's hashers; the first is what the served site checks a password with.
SITE_HASHER = import_string(global_settings.PASSWORD_HASHERS[0])()
JOB_SECONDS = 120


def redis_url_or_skip() -> str:
    if not django_settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        pytest.skip("the deployment test runs on PostgreSQL: set DATABASE_URL=postgres://...")
    return redis_or_skip()


@pytest.fixture(scope="module")
def served(django_db_setup, tmp_path_factory):
    """`bin/serve` on the test database, with the fake LLM server; one for the module, as starting it takes a while."""
    redis_url = redis_url_or_skip()
    folder = tmp_path_factory.mktemp("served")
    llm = FakeLLMServer().start()
    site = ServedSite(
        role="all",
        var_dir=folder / "var",
        log=folder / "serve.log",
        CELERY_BROKER_URL=redis_url,
        CELERY_QUEUE=f"test-{uuid.uuid4().hex[:10]}",
        WEB_WORKERS="2",
        WEB_THREADS="2",
        LLM_BASE_URL=llm.url,
        LLM_MODEL="fake-model",
        LLM_API_KEY="",
        LLM_CONCURRENCY="2",
        LLM_TIMEOUT="10",
    )
    try:
        site.wait_ready()
        yield site, llm
    finally:
        site.stop()
        llm.stop()


@pytest.fixture
def deployed(served, transactional_db):
    """The scenario's people with passwords and ManualAssign given, committed for the site to see."""
    site, llm = served
    scenario = make_scenario(plant_llm=False)
    for person in (scenario.assessor, scenario.organizer):
        # Hashed as the served settings hash: the test settings' fast hasher is not among the site's.
        person.password = make_password(PASSWORD, hasher=SITE_HASHER)
        person.save()
    return scenario, give_assign(scenario), site, llm


def test_an_assessor_saves_a_label_through_gunicorn(deployed):
    scenario, work, site, _ = deployed
    assessor = Visitor(site.url)
    assessor.login(scenario.assessor.username, PASSWORD)
    start = assessor.get(reverse("judge:assign", args=[work.pk]))
    assert start.status == 302, site.log_tail()
    page = assessor.get(location_path(start))
    assert page.status == 200
    forms, csrf = label_forms(page.text)
    # One label form per nugget of the topic, each for the answer the page shows.
    assert [form.fields["nugget"] for form in forms] == [str(nugget.pk) for nugget in scenario.nuggets]
    first = forms[0]
    operation = str(uuid.uuid4())

    saved = label_post(assessor, first, csrf=csrf, label="support", op_id=operation)
    replayed = label_post(assessor, first, csrf=csrf, label="support", op_id=operation)

    assert saved.status == 200, saved.text
    assert saved.json()["label"] == "support"
    assert replayed.status == 200 and replayed.json()["label"] == "support"
    labels = AssignmentLabel.objects.filter(nugget=scenario.nuggets[0], assigner="manual")
    assert [(label.label, label.created_by_id, label.work_id) for label in labels] == [
        ("support", scenario.assessor.pk, work.pk)
    ]
    # Without the CSRF header the same save is refused.
    unprotected = assessor.request("POST", first.action, fields={**first.fields, "label": "not_support"})
    assert unprotected.status == 403


def test_an_organizer_launches_an_llm_job_the_worker_finishes(deployed):
    scenario, _, site, llm = deployed
    calls_before = llm.count
    organizer = Visitor(site.url)
    organizer.login(scenario.organizer.username, PASSWORD)
    launch_path = reverse("jobs:launch", args=["auto_assign"])
    assert organizer.get(launch_path).status == 200
    launched = organizer.form_post(launch_path, {"name": "served", "nuggets": "manual", "runs": ""})
    assert launched.status == 302, launched.text[-2000:]
    job = Job.objects.get(output_name="served")
    assert location_path(launched) == reverse("jobs:detail", args=[job.pk])

    deadline = time.monotonic() + JOB_SECONDS
    while job.status not in (Job.Status.DONE, Job.Status.FAILED) and time.monotonic() < deadline:
        time.sleep(0.5)
        job.refresh_from_db()
    assert job.status == Job.Status.DONE, site.log_tail()
    # Three answers, three nuggets each: one call per answer (under ten nuggets), nine labels.
    assert (job.total_items, job.done_items, job.failed_items) == (3, 3, 0)
    assert AssignmentLabel.objects.filter(assigner="served", job=job).count() == 9
    assert llm.count - calls_before == 3
    assert "done" in organizer.get(reverse("jobs:detail", args=[job.pk])).text


def test_an_upload_is_imported_by_the_worker_and_its_page_shows_the_result(deployed):
    scenario, _, site, _ = deployed
    organizer = Visitor(site.url)
    organizer.login(scenario.organizer.username, PASSWORD)
    upload_path = reverse("collection:upload")
    assert organizer.get(upload_path).status == 200
    lines = [f"2025-up{i}\tquestion number {i}" for i in range(1, 1201)]
    posted = organizer.file_post(
        upload_path, {"kind": "topics"}, file_field="file", file_name="topics.tsv",
        content=("\n".join(lines) + "\n").encode(),
    )  # fmt: skip
    assert posted.status == 302, posted.text[-2000:]
    upload = Upload.objects.get(file_name="topics.tsv")
    assert location_path(posted) == reverse("collection:upload_detail", args=[upload.pk])

    deadline = time.monotonic() + JOB_SECONDS
    while not upload.finished and time.monotonic() < deadline:
        time.sleep(0.5)
        upload.refresh_from_db()
    assert upload.state == Upload.State.DONE, site.log_tail()
    # The worker, not the web request, imported the file: its claim names the worker.
    assert upload.claimed_by and upload.attempts == 1
    assert (upload.lines, upload.created) == (1200, 1200)
    assert Topic.objects.filter(pk__startswith="2025-up").count() == 1200
    assert Topic.objects.get(pk="2025-up7").query == "question number 7"
    page = organizer.get(reverse("collection:upload_detail", args=[upload.pk]))
    assert page.status == 200 and "1200" in page.text.replace(",", "")


def test_static_files_and_health_are_served_with_debug_off(deployed, tmp_path):
    _, _, site, _ = deployed
    visitor = Visitor(site.url)
    script = visitor.get("/static/js/judge.js")
    assert script.status == 200
    assert script.body == (REPO / "static" / "js" / "judge.js").read_bytes()
    assert script.headers["content-type"].startswith("text/javascript")
    assert visitor.get("/static/js/no-such-file.js").status == 404

    health = visitor.get(reverse("health"))
    assert (health.status, health.json()["status"]) == (200, "ok")

    # The same site with its broker pointed at a port nothing listens on.
    broken = ServedSite(
        role="web",
        var_dir=tmp_path / "var-broken",
        log=tmp_path / "serve-broken.log",
        CELERY_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0",
        WEB_WORKERS="1",
        WEB_THREADS="1",
    )
    try:
        broken.wait_ready()
        down = Visitor(broken.url).get(reverse("health"))
    finally:
        broken.stop()
    assert down.status == 503
    assert down.json() == {"status": "down: broker", "checks": {"database": "ok", "broker": "down"}}
