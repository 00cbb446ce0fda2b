"""The automatic support job sends the prompt of Thakur et al., byte for byte (local fake server)."""

from pathlib import Path

import pytest

from assessor.collection.importing.segments import segments_import
from assessor.jobs.engine import job_run_sync
from assessor.models import Job, JobItem, Segment
from support.auto import auto_support_job_create
from support.models import SupportLabel
from support.prompts import SUPPORT_PROJECT
from tests.builders import make_answer, make_run, make_topic
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db

PROMPT = (Path(__file__).resolve().parents[2] / "support/support_thakur.txt").read_bytes().decode()


def _expected(statement: str, citation: str) -> str:
    return PROMPT.replace("{statement}", statement).replace("{citation}", citation)


@pytest.fixture
def answer(tmp_path):
    topic = make_topic("t1", query="zebra stripes")
    segments = tmp_path / "segments.jsonl"
    segments.write_text(
        '{"docid": "s1#0", "title": "Zebra", "segment": "Zebras have black and white stripes."}\n'
        '{"docid": "s2#0", "segment": "Lions live in prides."}\n'
    )
    segments_import(path=segments)
    titled, plain = Segment.objects.get(pk="s1#0"), Segment.objects.get(pk="s2#0")
    return make_answer(
        make_run("r1"),
        topic,
        [("Zebras have black and white stripes.", [titled]), ("Lions hunt at night.", [plain])],
    )


def test_it_sends_the_published_prompt_with_the_title_in_the_citation(llm_server, answer):
    job = auto_support_job_create(name="auto")
    job_run_sync(job.pk)
    assert job.prompt_versions == {"support": 2}
    first, second = (body["messages"] for body in llm_server.requests)
    assert first == [
        {"role": "user", "content": _expected("Zebras have black and white stripes.", "Zebra: Zebras have black and white stripes.")}
    ]
    assert second == [{"role": "user", "content": _expected("Lions hunt at night.", "Lions live in prides.")}]
    assert {body["temperature"] for body in llm_server.requests} == {0.1}
    labels = dict(SupportLabel.objects.values_list("citation__sentence__index", "label"))
    # "Full Support" (the sentence is in the citation), "Partial Support" ("Lions").
    assert labels == {0: SupportLabel.Label.FS, 1: SupportLabel.Label.PS}


def test_an_answer_naming_two_labels_is_reasked_then_fails_with_the_raw_answer(llm_server, answer):
    two = "Full Support or maybe Partial Support"
    llm_server.script(Reply.literal(two), Reply.literal("Supported"), Reply.literal(two))
    job_run_sync(auto_support_job_create(name="auto").pk)
    item = JobItem.objects.get()
    assert item.status == "failed"
    assert item.raw_response == two
    assert "names more than one of" in item.error
    assert not SupportLabel.objects.exists()


def test_a_job_made_with_the_first_prompt_keeps_it(llm_server, answer):
    job = auto_support_job_create(name="auto")
    Job.objects.filter(pk=job.pk).update(prompt_versions={"support": 1})
    job_run_sync(job.pk)
    messages = llm_server.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": SUPPORT_PROJECT.system}
    assert "Passage: Zebras have black and white stripes.\n" in messages[1]["content"]
    labels = dict(SupportLabel.objects.values_list("citation__sentence__index", "label"))
    assert labels == {0: SupportLabel.Label.FS, 1: SupportLabel.Label.PS}
