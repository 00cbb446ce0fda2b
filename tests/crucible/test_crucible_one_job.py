"""A Crucible run's name is one job's: two launches of one name at the same moment make one job and one run."""

import re

import pytest
from django.db import connection

from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Job, JobItem, Run
from crucible import llm
from crucible.llm import crucible_job_create
from crucible.models import Chunk, CrucibleRun
from tests.jobs.launches import launched_at_once


def refusal_of(owner: Job) -> str:
    return (
        f"Job {owner.pk} (fake-model of the endpoint 'default') already produces 'cru': "
        f"choose another name, or resume job {owner.pk}."
    )


def assert_one_job_made_the_run(owner: Job) -> None:
    assert list(Job.objects.values_list("pk", flat=True)) == [owner.pk]
    assert not JobItem.objects.exclude(job=owner).exists()
    assert not Chunk.objects.exclude(job=owner).exists()
    assert list(CrucibleRun.objects.values_list("job_id", flat=True)) == [owner.pk]
    job_run_sync(owner.pk)
    owner.refresh_from_db()
    assert (owner.status, owner.failed_items) == (Job.Status.DONE, 0)
    assert CrucibleRun.objects.get(job=owner).run == Run.objects.get(run_id="cru")


@pytest.mark.django_db
def test_the_second_of_two_launches_that_passed_the_check_is_refused_with_nothing_made(llm_server, bank, monkeypatch):
    monkeypatch.setattr(llm, "output_name_check", lambda **_: None)
    owner = crucible_job_create(name="cru", bank=bank, topics=["bee"])
    with pytest.raises(JobRequestInvalid, match=f"^{re.escape(refusal_of(owner))}$"):
        crucible_job_create(name="cru", bank=bank, topics=["bee"])
    assert owner.output_family == "crucible"
    assert_one_job_made_the_run(owner)


@pytest.mark.skipif(connection.vendor == "sqlite", reason="launches writing at once need PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_two_launches_at_the_same_moment_make_one_job_and_one_run(llm_server, bank, monkeypatch):
    outcomes = launched_at_once(monkeypatch, llm, lambda: crucible_job_create(name="cru", bank=bank, topics=["bee"]), 2)
    owner = Job.objects.get()
    assert sorted(outcomes) == sorted(["made", refusal_of(owner)])
    assert_one_job_made_the_run(owner)
