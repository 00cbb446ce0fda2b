"""A cancelled job's page: cancelled, not finished, and the items a worker still holds named until they land."""

import pytest
from django.urls import reverse

from assessor.jobs.engine import job_cancel
from assessor.models import Job, JobItem
from assessor.work.roles import Role
from assignment import kinds as assignment_kinds
from tests.builders import make_user

pytestmark = pytest.mark.django_db


def test_a_cancelled_job_with_items_in_flight_says_so_and_keeps_following_them(client):
    client.force_login(make_user(Role.ORGANIZER))
    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="auto", status=Job.Status.RUNNING)
    for index, status in enumerate([JobItem.Status.CLAIMED] * 8 + [JobItem.Status.PENDING, JobItem.Status.DONE]):
        JobItem.objects.create(job=job, key=f"item-{index}", status=status)
    assert job_cancel(job.pk)
    page = client.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "· cancelled " in page and "· finished " not in page
    assert "8 items still in flight: they finish on their own" in page
    assert 'hx-trigger="every 2s"' in page  # the panel follows them
    # Once the worker has written them, the page stops asking.
    JobItem.objects.filter(job=job, status=JobItem.Status.CLAIMED).update(status=JobItem.Status.DONE)
    page = client.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "in flight" not in page and 'hx-trigger="every 2s"' not in page and "· cancelled " in page
