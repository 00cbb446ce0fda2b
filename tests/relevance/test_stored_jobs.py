"""An UMBRELA job a database held before the relevance app existed: listed, shown and resumed as before.

The rows are written as the earlier code stored them (kind "umbrela", the prompt's
versions under the name "umbrela", a qrels source claimed by the job), not made by
today's services, so that what is checked is the data, not the code that writes it.
"""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.models import Job, JobItem, LabelSource, LLMCall, PromptTemplate, Qrel, QrelSource
from relevance.prompts import UMBRELA, UMBRELA_PROJECT
from tests.builders import make_answer, make_run, make_segment, make_topic

pytestmark = pytest.mark.django_db

# PromptTemplate.sha256 of the two versions as databases store them (tests/relevance/test_umbrela_prompt.py).
STORED = {
    1: "e906ab0034c603a4a5316d721401075453435d0611f2e2688b62df538fd9ed8f",
    2: "d1598c4463f13f95920204008a1c505c9968ab62bb27427a76a2482d39ebe4bd",
}


@pytest.fixture
def stored_job(llm_server) -> Job:
    """A failed UMBRELA job of one item, with its prompt versions and qrels source, as stored earlier."""
    topic = make_topic("t1", query="zebra stripes pattern")
    segment = make_segment("s1#0", text="Zebras have black and white stripes.")
    make_answer(make_run("r1"), topic, [("Zebras are striped.", [segment])])
    PromptTemplate.objects.create(
        name="umbrela", version=1, system=UMBRELA_PROJECT.system, user=UMBRELA_PROJECT.user, sha256=STORED[1]
    )
    PromptTemplate.objects.create(
        name="umbrela", version=2, system="", user=UMBRELA.user, params=dict(UMBRELA.params), sha256=STORED[2]
    )
    job = Job.objects.create(
        kind="umbrela",
        status="failed",
        output_name="umb-old",
        params={"runs": [], "topics": [], "queue": ""},
        model="fake-model",
        endpoint_name="default",
        endpoint=llm_server.url,
        prompt_versions={"umbrela": 2},
        total_items=1,
        failed_items=1,
    )
    JobItem.objects.create(
        job=job,
        key="t1|s1#0",
        payload={"topic": "t1", "segment": "s1#0"},
        status="failed",
        error="the LLM server did not answer",
    )
    source = LabelSource.objects.create(
        family="qrels",
        name="umb-old",
        kind="llm",
        model=job.model,
        endpoint_name=job.endpoint_name,
        endpoint=job.endpoint,
        prompt_versions=job.prompt_versions,
        job=job,
    )
    QrelSource.objects.create(name="umb-old", job=job, source=source)
    return job


def test_the_jobs_page_lists_it(organizer, stored_job):
    page = organizer.get(reverse("jobs:list")).content.decode()
    assert "UMBRELA relevance grades" in page and "umb-old" in page
    detail = organizer.get(reverse("jobs:detail", args=[stored_job.pk]))
    assert detail.status_code == 200
    assert "the LLM server did not answer" in detail.content.decode()


def test_a_resume_grades_it_with_the_stored_prompt_version(organizer, llm_server, stored_job, worker_inline):
    response = organizer.post(reverse("jobs:resume", args=[stored_job.pk]))
    assert response.status_code == 302
    stored_job.refresh_from_db()
    assert (stored_job.status, stored_job.done_items, stored_job.failed_items) == ("done", 1, 0)
    # The fake model counts query words of 4+ letters in the passage: "stripes" only.
    assert list(Qrel.objects.filter(source__name="umb-old").values_list("segment_id", "grade", "job")) == [
        ("s1#0", 1, stored_job.pk)
    ]
    # The stored version was found by its hash: no new version was made, and the call used version 2.
    assert PromptTemplate.objects.filter(name="umbrela").count() == 2
    assert list(LLMCall.objects.filter(job=stored_job).values_list("prompt__name", "prompt__version")) == [
        ("umbrela", 2)
    ]
    (body,) = llm_server.requests
    assert body["messages"][0]["content"].startswith(UMBRELA.user.split("{query}")[0])


def test_run_umbrela_resumes_it(llm_server, stored_job):
    call_command("run_umbrela", "--resume", str(stored_job.pk), "--sync", "--threads", "1", stdout=StringIO())
    stored_job.refresh_from_db()
    assert (stored_job.status, stored_job.done_items) == ("done", 1)
    assert Qrel.objects.filter(source__name="umb-old").count() == 1
