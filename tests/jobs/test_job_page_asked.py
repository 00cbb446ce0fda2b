"""What the job page says the organizer asked for: each choice as written, never spelled out letter by letter."""

import pytest
from django.urls import reverse

from assessor.models import Job
from assessor.work.roles import Role
from assignment import kinds as assignment_kinds
from tests.builders import make_user

pytestmark = pytest.mark.django_db


def test_the_job_page_shows_texts_and_lists_as_they_were_asked(client):
    client.force_login(make_user(Role.ORGANIZER))
    params = {"nuggets": "auto_edit", "runs": ["run-a", "run-b"], "topics": [], "qrels": ""}
    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="auto", params=params)
    page = client.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "nuggets: <code>auto_edit</code>" in page
    assert "runs: <code>run-a run-b</code>" in page
    # Choices left empty are not listed.
    assert "topics:" not in page and "qrels:" not in page
