"""The query-only bank: one call per topic from its request, the reference's messages byte for byte, the
first 20 distinct questions, the origin of each, re-runs, the command and the jobs page."""

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.models import Job, LabelSource, LLMCall
from nuggets.banks import bank_questions
from nuggets.models import NuggetSet
from prefnugget.jobs import query_bank_job_create
from prefnugget.kinds import QUERY_BANK
from prefnugget.models import QuestionOrigin
from tests.builders import make_topic
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).with_name("fixtures")


def questions_answer(value: str) -> str:
    return f"[[ ## reasoning ## ]]\nr\n\n[[ ## questions ## ]]\n{value}\n\n[[ ## confidence ## ]]\n0.9\n\n[[ ## completed ## ]]"


def test_the_kiddie_calls_are_the_references_byte_for_byte(llm_server, kiddie):
    lines = [json.loads(line) for line in (FIXTURES / "queryonly-response.generate.jsonl").read_text().splitlines()]
    job = query_bank_job_create(name="qo")
    job_run_sync(job.pk)
    assert llm_server.count == 5
    sent = LLMCall.objects.filter(job=job)
    assert {call.messages[0]["content"] for call in sent} == {lines[0]["system"]}
    assert sorted(call.messages[1]["content"] for call in sent) == sorted(line["user"] for line in lines[1:])
    leaf = sent.get(item__key="topic:leaf").messages[1]["content"]
    assert leaf == (FIXTURES / "rubric_queryonly_generate.user_example.txt").read_text()


def test_the_bank_is_the_answers_questions_as_an_llms_question_set(llm_server, kiddie):
    job = query_bank_job_create(name="qo", topics=["bee", "leaf"])
    job_run_sync(job.pk)
    banks = bank_questions("qo")
    # The fake model: "What about <word>?" for each word of 4+ letters of the title, in order.
    assert [q.text for q in banks["bee"]] == [
        f"What about {word}?" for word in ("honey", "making", "nectar", "hive", "sting")
    ]  # "bee honey making nectar hive sting"
    assert [q.text for q in banks["leaf"]] == [
        f"What about {word}?" for word in ("fall", "leaf", "color", "change", "chlorophyll")
    ]
    bank = NuggetSet.objects.get(name="qo", topic_id="bee")
    assert (bank.kind, bank.form, bank.job_id) == ("auto", "questions", job.pk)
    source = LabelSource.objects.get(family="nuggets", name="qo")
    assert (source.kind, source.job_id) == (LabelSource.Kind.LLM, job.pk)
    origin = QuestionOrigin.objects.get(nugget_id=banks["bee"][2].pk)
    assert (origin.job_id, origin.batch, origin.pair, origin.position, origin.winner, origin.loser) == (
        job.pk,
        0,
        None,
        2,
        None,
        None,
    )
    assert origin.llm_call.item.key == "topic:bee" and "What about nectar?" in origin.llm_call.raw_response


def test_the_bank_keeps_the_first_20_distinct_questions(llm_server):
    make_topic("t", query="why")
    asked = [" Q1 ", "Q1", ""] + [f"Q{n}" for n in range(2, 30)]
    llm_server.script(
        Reply.literal("Here you go."),
        Reply.literal(questions_answer("1. Q1\n2. Q2")),  # numbered lines: the reference's adapter refuses them
        Reply.literal(questions_answer(json.dumps(asked))),
    )
    job = query_bank_job_create(name="twenty")
    job_run_sync(job.pk)
    assert llm_server.count == 3  # the answer without its section, then the one without a list, asked again
    refused = LLMCall.objects.filter(job=job, parsed_ok=False).order_by("pk")
    assert ["[[ ## questions ## ]]" in call.error for call in refused] == [True, True]
    assert [q.text for q in bank_questions("twenty")["t"]] == [f"Q{n}" for n in range(1, 21)]
    # A TREC 2024 topic: its query stands for the title, background and problem statement are empty.
    user = LLMCall.objects.filter(job=job).order_by("pk").first().messages[1]["content"]
    assert user.startswith(
        "[[ ## query_title ## ]]\nwhy\n\n[[ ## query_background ## ]]\n\n\n[[ ## query_problem ## ]]\n\n\n"
    )


def test_a_rerun_calls_nothing(llm_server, kiddie):
    job_run_sync(query_bank_job_create(name="a").pk)
    job_run_sync(query_bank_job_create(name="b").pk)
    assert llm_server.count == 5
    assert {t: [q.text for q in b] for t, b in bank_questions("a").items()} == {
        t: [q.text for q in b] for t, b in bank_questions("b").items()
    }


def test_run_query_bank_and_the_jobs_page(organizer, llm_server, kiddie, worker_inline):
    out = StringIO()
    call_command("run_query_bank", "--name", "cmd", "--topics", "bee", "cloud", "--sync", "--threads", "1", stdout=out)
    job = Job.objects.get(output_name="cmd")
    assert (job.kind, job.total_items) == (QUERY_BANK, 2) and f"job {job.pk} done: 2/2 items" in out.getvalue()
    launch = organizer.get(reverse("jobs:launch", args=[QUERY_BANK])).content.decode()
    assert "run_query_bank" in launch
    response = organizer.post(reverse("jobs:launch", args=[QUERY_BANK]), {"name": "page", "topics": "leaf"})
    job = Job.objects.get(output_name="page")
    assert response.status_code == 302 and worker_inline == [job.pk]
    assert list(bank_questions("page")) == ["leaf"]
    assert re.search(r"What about chlorophyll\?", bank_questions("page")["leaf"][-1].text)
