"""The UMBRELA job sends UMBRELA's prompt, byte for byte, with the track's parameters (local fake server)."""

from pathlib import Path

import pytest

from assessor.jobs.engine import job_run_sync
from assessor.jobs.llm.prompts import prompt_template_get
from assessor.models import Job, JobItem, PromptTemplate, Qrel
from relevance.prompts import UMBRELA_PROJECT
from relevance.umbrela import umbrela_job_create
from tests.builders import make_answer, make_run, make_segment, make_topic
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db

PROMPT = (Path(__file__).resolve().parents[2] / "relevance/umbrela_relevance.txt").read_bytes().decode()


@pytest.fixture
def one_pair():
    topic = make_topic("t1", query="zebra stripes pattern")
    segment = make_segment("s1#0", text="Zebras have black and white stripes {not a field}.")
    make_answer(make_run("r1"), topic, [("Zebras are striped.", [segment])])
    return topic, segment


def test_it_sends_the_published_prompt_and_parameters(llm_server, one_pair):
    job = umbrela_job_create(name="umb")
    job_run_sync(job.pk)
    assert job.prompt_versions == {"umbrela": 2}
    (body,) = llm_server.requests
    expected = PROMPT.replace("{query}", "zebra stripes pattern").replace(
        "{passage}", "Zebras have black and white stripes {not a field}."
    )
    assert body["messages"] == [{"role": "user", "content": expected}]
    assert body["messages"][0]["content"].encode() == expected.encode()
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0, 100, 1)
    assert (body["frequency_penalty"], body["presence_penalty"]) == (0.5, 0)
    # The fake model counts query words of 4+ letters in the passage: "stripes" only.
    assert list(Qrel.objects.values_list("segment_id", "grade")) == [("s1#0", 1)]


def test_an_answer_without_a_final_score_is_reasked_then_fails_with_the_raw_answer(llm_server, one_pair, settings):
    llm_server.script(Reply.literal("The passage is relevant: 2"), Reply.literal("Grade 2"), Reply.literal("2"))
    job = umbrela_job_create(name="umb")
    job_run_sync(job.pk)
    item = JobItem.objects.get(job=job)
    assert item.status == "failed"
    assert item.raw_response == "2"
    assert "##final score" in item.error
    assert llm_server.count == 3  # LLM_MAX_REASKS = 2
    assert not Qrel.objects.exists()
    reask = llm_server.requests[1]["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user"]


def test_a_reask_that_is_answered_well_is_kept(llm_server, one_pair):
    llm_server.script(Reply.literal("##final score: 7"))
    job_run_sync(umbrela_job_create(name="umb").pk)
    assert list(Qrel.objects.values_list("grade", flat=True)) == [1]
    assert llm_server.count == 2


def test_a_job_made_with_the_first_prompt_keeps_it_and_its_bare_grades(llm_server, one_pair):
    job = umbrela_job_create(name="umb")
    first = PromptTemplate.objects.get(name="umbrela", version=1)
    assert first.user == UMBRELA_PROJECT.user
    # A job stored before the published prompt became the default.
    Job.objects.filter(pk=job.pk).update(prompt_versions={"umbrela": 1})
    job_run_sync(job.pk)
    (body,) = llm_server.requests
    assert body["messages"][0] == {"role": "system", "content": UMBRELA_PROJECT.system}
    assert body["temperature"] == 0 and "max_tokens" not in body
    assert list(Qrel.objects.values_list("grade", flat=True)) == [1]
    assert prompt_template_get("umbrela").version == 2
