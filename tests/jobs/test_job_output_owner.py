"""One job owns an output name: two launches of one name at the same moment make one job, and the other is refused
naming it, on the page and on the command line, with nothing made; a resume keeps its job's name."""

import html
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid, job_cancel, job_reopen, job_run_sync
from assessor.models import Job, JobItem, LabelSource
from assignment import auto
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from tests.builders import make_topic
from tests.jobs.launches import NUGGETS, launched_at_once, make_assign_setup


@pytest.fixture
def assign_setup(db) -> None:
    make_assign_setup()


@pytest.fixture
def checked_long_ago(monkeypatch):
    """Each launch passes the name check as if the other launch had not yet written its job: two launches of one
    name at the same moment, one after the other."""
    monkeypatch.setattr(auto, "output_name_check", lambda **_: None)


def refusal_of(owner: Job) -> str:
    return f"Job {owner.pk} (fake-model of the endpoint 'default') already produces 'gpt'"


# --- one after the other, as if at once (SQLite and PostgreSQL) -------------------------------------------------


@pytest.mark.django_db
def test_the_second_of_two_launches_that_passed_the_check_is_refused_with_nothing_made(
    llm_server, assign_setup, checked_long_ago
):
    first = auto_assign_job_create(nuggets="manual", name="gpt")
    with pytest.raises(
        JobRequestInvalid, match=f"^{re.escape(refusal_of(first))}: choose another name, or resume job {first.pk}"
    ):
        auto_assign_job_create(nuggets="manual", name="gpt")
    assert list(Job.objects.values_list("pk", flat=True)) == [first.pk]
    assert JobItem.objects.exclude(job=first).count() == 0
    assert LabelSource.objects.get(family="assignment", name="gpt").job_id == first.pk
    job_run_sync(first.pk)
    first.refresh_from_db()
    assert (first.status, first.done_items, first.failed_items) == ("done", 2, 0)
    assert AssignmentLabel.objects.filter(assigner="gpt").count() == 2 * len(NUGGETS)


@pytest.mark.django_db
def test_the_page_refuses_the_second_launch_naming_the_job_that_owns_the_name(
    llm_server, assign_setup, checked_long_ago, organizer, worker_inline
):
    def launch():
        data = {"name": "gpt", "endpoint": "default", "nuggets": "manual", "topics": "", "runs": ""}
        return organizer.post(reverse("jobs:launch", args=["auto_assign"]), data)

    assert launch().status_code == 302
    owner = Job.objects.get()
    response = launch()
    assert response.status_code == 200
    errors = [html.unescape(error) for error in response.context["form"].non_field_errors()]
    assert errors == [f"{refusal_of(owner)}: choose another name, or resume job {owner.pk}."]
    assert Job.objects.count() == 1 and worker_inline == [owner.pk]


@pytest.mark.django_db
def test_the_command_refuses_the_second_launch_with_a_command_error(llm_server, assign_setup, checked_long_ago):
    call_command(
        "run_auto_assign", "--nuggets", "manual", "--name", "gpt", "--sync", "--threads", "1", stdout=StringIO()
    )
    owner = Job.objects.get()
    with pytest.raises(CommandError, match=f"^{re.escape(refusal_of(owner))}"):
        call_command("run_auto_assign", "--nuggets", "manual", "--name", "gpt", "--sync", "--threads", "1")
    assert Job.objects.count() == 1


@pytest.mark.django_db
def test_a_resumed_job_keeps_its_name_and_a_cancelled_one_gets_it_back_only_if_free(llm_server, assign_setup):
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    job_cancel(job.pk)
    assert job_reopen(job.pk) == 2  # its own name: resumed
    job_cancel(job.pk)
    # Cancelled, it gave the name back: a new job of the same endpoint and model takes it.
    taker = auto_assign_job_create(nuggets="manual", name="gpt")
    with pytest.raises(
        JobRequestInvalid, match=rf"^Job {job.pk} cannot resume: since it was cancelled, job {taker.pk}"
    ):
        job_reopen(job.pk)
    job.refresh_from_db()
    assert job.status == "cancelled" and job.items.filter(status="pending").count() == 2
    job_run_sync(taker.pk)
    taker.refresh_from_db()
    assert (taker.status, taker.done_items) == ("done", 2)


@pytest.mark.django_db
def test_two_kinds_writing_nugget_sets_share_one_name_space(llm_server):
    """AutoNuggets and its drafts both write nugget sets: one name is one output, whichever kind claims it."""
    from nuggets.auto import auto_nuggets_job_create
    from tests.builders import make_qrel, make_segment

    make_qrel(make_topic("t1", query="q"), make_segment("d1", text="Some text."), grade=2, source="nist")
    first = auto_nuggets_job_create(name="auto", qrels="nist")
    with pytest.raises(JobRequestInvalid, match=rf"^Job {first.pk} .* already produces 'auto'"):
        auto_nuggets_job_create(name="auto", qrels="nist", drafts=True)
    assert first.output_family == "nuggets"


# --- at the same moment, for real (PostgreSQL) ------------------------------------------------------------------


@pytest.mark.skipif(connection.vendor == "sqlite", reason="launches writing at once need PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(3))
def test_two_launches_at_the_same_moment_make_one_job(llm_server, monkeypatch, round_):
    make_assign_setup()
    outcomes = launched_at_once(monkeypatch, auto, lambda: auto_assign_job_create(nuggets="manual", name="gpt"), 2)
    owner = Job.objects.get()  # one job, not two
    assert sorted(outcomes) == sorted(["made", f"{refusal_of(owner)}: choose another name, or resume job {owner.pk}."])
    assert JobItem.objects.exclude(job=owner).count() == 0
    job_run_sync(owner.pk)
    owner.refresh_from_db()
    assert (owner.status, owner.done_items, owner.failed_items) == ("done", 2, 0)
    assert AssignmentLabel.objects.filter(assigner="gpt").count() == 2 * len(NUGGETS)


# --- the migration ----------------------------------------------------------------------------------------------

BEFORE_OWNERS = [("assessor", "0021_cost_in_picodollars")]
AFTER_OWNERS = [("assessor", "0022_one_job_per_output")]


@pytest.mark.django_db(transaction=True)
def test_jobs_made_before_the_rule_keep_their_first_owner_and_nothing_else_changes():
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_OWNERS)
    old = executor.loader.project_state(BEFORE_OWNERS).apps.get_model("assessor", "Job")
    made = {
        "first": old.objects.create(kind="auto_assign", output_name="gpt", model="m", status="done"),
        "second": old.objects.create(kind="auto_assign", output_name="gpt", model="m", status="failed"),
        "rerun": old.objects.create(kind="auto_assign", output_name="gpt", model="m", params={"rerun": True}),
        "cancelled": old.objects.create(kind="auto_assign", output_name="other", model="m", status="cancelled"),
        "after_cancel": old.objects.create(kind="auto_assign", output_name="other", model="m", status="done"),
        "drafts": old.objects.create(kind="draft_nuggets", output_name="gpt", model="m", status="done"),
        "crucible": old.objects.create(kind="crucible", output_name="gpt", model="m", status="done"),
    }

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER_OWNERS)
    new = executor.loader.project_state(AFTER_OWNERS).apps.get_model("assessor", "Job")
    rows = {name: new.objects.get(pk=job.pk) for name, job in made.items()}
    assert {name: (row.output_family, row.owns_output, row.status) for name, row in rows.items()} == {
        "first": ("assignment", True, "done"),
        "second": ("assignment", False, "failed"),
        "rerun": ("assignment", False, "queued"),
        "cancelled": ("assignment", True, "cancelled"),
        "after_cancel": ("assignment", True, "done"),
        "drafts": ("nuggets", True, "done"),
        "crucible": ("crucible", True, "done"),
    }
    call_command("migrate", verbosity=0)


@pytest.mark.django_db
def test_the_resume_page_and_command_say_why_a_cancelled_job_cannot_resume(llm_server, assign_setup, organizer):
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    job_cancel(job.pk)
    taker = auto_assign_job_create(nuggets="manual", name="gpt")
    refusal = f"Job {job.pk} cannot resume: since it was cancelled, job {taker.pk}"
    page = organizer.post(reverse("jobs:resume", args=[job.pk]), follow=True).content.decode()
    assert refusal in html.unescape(page)
    with pytest.raises(CommandError, match=f"^{refusal}"):
        call_command("run_auto_assign", "--resume", str(job.pk))
    job.refresh_from_db()
    assert job.status == "cancelled"
