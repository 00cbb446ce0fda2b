"""The UMBRELA job grades each topic's pool into a qrels source, from a service call or `run_umbrela`."""

from io import StringIO

import pytest
from django.core.management import call_command

from assessor.jobs.engine import job_run_sync
from assessor.models import Job, Qrel, QrelSource
from nuggets.auto import auto_nuggets_job_create
from nuggets.models import NuggetSet
from relevance.kinds import UMBRELA
from relevance.umbrela import umbrela_job_create
from tests.builders import make_topic

pytestmark = pytest.mark.django_db


def test_umbrela_grades_the_pool_as_a_qrels_source(llm_server, pool):
    job = umbrela_job_create(name="umbrela-fake")
    assert job.kind == UMBRELA == "umbrela"
    assert job.total_items == 3  # s1, s2, s3: cited and referenced
    job_run_sync(job.pk)
    job.refresh_from_db()
    grades = dict(Qrel.objects.filter(source__name="umbrela-fake").values_list("segment_id", "grade"))
    # Query words of 4+ letters present: zebra(s) no ("zebras" != "zebra"), stripes yes.
    assert grades == {"s1#0": 1, "s2#0": 0}
    failed = job.items.get(status="failed")
    assert "s3#0 has no text" in failed.error
    assert QrelSource.objects.get(name="umbrela-fake").job_id == job.pk
    assert set(Qrel.objects.filter(source__name="umbrela-fake").values_list("job_id", flat=True)) == {job.pk}


def test_the_fully_automatic_chain_reads_umbrela_grades(llm_server, pool):
    """Condition (2): UMBRELA grades the pool, then AutoNuggets reads the segments it grades >= 1."""
    job_run_sync(umbrela_job_create(name="umbrela-auto").pk)
    nuggets_job = auto_nuggets_job_create(name="auto-umb", qrels="umbrela-auto")
    job_run_sync(nuggets_job.pk)
    nugget_set = NuggetSet.objects.get(name="auto-umb")
    # Only s1 ("Zebras have black and white stripes.") is graded >= 1 (see the test above).
    assert list(nugget_set.nuggets.values_list("text", flat=True)) == ["Zebras have black and white stripes"]
    assert nuggets_job.params["qrels"] == "umbrela-auto"


def test_run_umbrela_keeps_its_name_and_options(llm_server, pool):
    make_topic("t4", query="other topic")
    out = StringIO()
    call_command(
        "run_umbrela", "--name", "umb-cmd", "--runs", "r1", "--topics", "t3", "--sync", "--threads", "1", stdout=out
    )
    job = Job.objects.get(output_name="umb-cmd")
    assert (job.kind, job.params) == ("umbrela", {"runs": ["r1"], "topics": ["t3"], "queue": ""})
    # A job with a failed item finishes as failed; the other two items are graded.
    assert f"job {job.pk} failed: 3/3 items (1 failed), 2 calls" in out.getvalue()
    assert sorted(Qrel.objects.filter(source__name="umb-cmd").values_list("segment_id", "grade")) == [
        ("s1#0", 1),
        ("s2#0", 0),
    ]
