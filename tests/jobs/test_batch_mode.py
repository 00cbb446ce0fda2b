"""Batch mode (assessor.jobs.batch): a job's calls through the provider's Files and Batch APIs, here the fake
server's (bench.fake_batches), driven by the real `openai` client; its labels must be the live job's."""

from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assessor.jobs.batch import batch_run_sync, batches_split, job_mode_set
from assessor.jobs.engine import job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Job, LLMBatch, LLMCall
from assessor.models.jobs import PICODOLLARS
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from tests.builders import make_answer, make_nugget_set, make_run, make_topic
from tests.llm_server import expected_assign

pytestmark = pytest.mark.django_db

NUGGETS = [f"fact number {i} about zebras" for i in range(23)] + ["Paris is the capital"]
# The longest line of a batch file of these asks (the prompt and 10 nuggets): 1,370 to 1,380 bytes.
LINE_BYTES = 1_380


@pytest.fixture
def batch_server(llm_server, settings):
    settings.LLM_BATCH = True
    settings.LLM_BATCH_PRICE_FACTOR = 0.5
    settings.LLM_BATCH_POLL_SECONDS = 0.01
    return llm_server


@pytest.fixture
def answers(db):
    topic = make_topic("t1", query="capital of France")
    make_nugget_set(topic, texts=NUGGETS, kind="manual", name="manual")
    return [
        make_answer(make_run(f"run{i}"), topic, [("Paris is the capital of France.", []), (f"Zebras fact {i}.", [])])
        for i in range(3)
    ]


def labels_of(name: str) -> dict[tuple[int, str], str]:
    return {
        (answer, nugget): label
        for answer, nugget, label in AssignmentLabel.objects.filter(assigner=name).values_list(
            "answer_id", "nugget__text", "label"
        )
    }


def live_job(name: str = "auto-live") -> Job:
    """The same job, live, under another model name, so that neither job's calls are the other's cache."""
    job = auto_assign_job_create(
        nuggets="manual", name=name, config=replace(LLMConfig.from_settings(), model="live-model")
    )
    job_run_sync(job.pk)
    job.refresh_from_db()
    return job


def batch_job(name: str = "auto-batch", *, reasks: str = Job.Mode.BATCH) -> Job:
    job = auto_assign_job_create(nuggets="manual", name=name)
    job_mode_set(job, mode=Job.Mode.BATCH, reasks=reasks)
    return job


def paid(job: Job) -> tuple[int, int, int]:
    calls = LLMCall.objects.filter(job=job, from_cache=False, reached=True)
    return (
        calls.count(),
        sum(calls.values_list("tokens_in", flat=True)),
        sum(calls.values_list("tokens_out", flat=True)),
    )


# --- the round trip -----------------------------------------------------------------------------


def test_a_batch_job_labels_as_the_live_job_at_half_the_price(batch_server, answers):
    live = live_job()
    live_calls = batch_server.count
    job = batch_run_sync(batch_job().pk)
    assert (job.status, job.done_items, job.failed_items) == ("done", 3, 0)
    assert labels_of("auto-batch") == labels_of("auto-live")
    assert labels_of("auto-batch") == labels_of_rule(answers)
    # 24 nuggets are asked 10, 10 and 4 at a time, one after the other: three rounds of one batch of 3 requests.
    assert list(LLMBatch.objects.filter(job=job).values_list("round", "request_total", "state")) == [
        (1, 3, "completed"),
        (2, 3, "completed"),
        (3, 3, "completed"),
    ]
    assert batch_server.batches.calls == 9 and batch_server.count - live_calls == 9
    assert set(batch_server.batches.answered.values()) == {1}
    # Every call logged once, at half the live price: (tokens in x $2 + tokens out x $8) / 2 per million.
    calls, tokens_in, tokens_out = paid(job)
    assert (calls, tokens_in, tokens_out) == paid(live)
    assert job.calls == 9
    assert job.cost_picodollars == (tokens_in * 1 + tokens_out * 4) * PICODOLLARS // 1_000_000
    assert job.cost_picodollars * 2 == live.cost_picodollars


def test_the_command_runs_a_batch_job_to_the_end(batch_server, answers):
    out = StringIO()
    call_command("run_auto_assign", nuggets="manual", name="auto-cmd", batch=True, sync=True, stdout=out)
    job = Job.objects.get(output_name="auto-cmd")
    assert (job.mode, job.status, job.done_items) == ("batch", "done", 3)
    assert len(labels_of("auto-cmd")) == 72
    text = out.getvalue()
    assert "batches: #" in text and "r3 completed 3/3" in text
    assert batch_server.batches.calls == 9


def test_the_command_refuses_batch_mode_on_an_endpoint_without_it(llm_server, answers):
    with pytest.raises(CommandError, match="does not offer batch mode"):
        call_command("run_auto_assign", nuggets="manual", name="auto-cmd", batch=True, sync=True, stdout=StringIO())
    assert not Job.objects.exists()


# --- limits ---------------------------------------------------------------------------------------


def test_splitting_keeps_each_batch_within_both_limits():
    assert batches_split([10] * 7, max_requests=3, max_bytes=1000) == [range(0, 3), range(3, 6), range(6, 7)]
    assert batches_split([40, 40, 40, 10, 90], max_requests=10, max_bytes=100) == [
        range(0, 2),
        range(2, 4),
        range(4, 5),
    ]
    # A request larger than the limit goes alone (the provider says no, the job says why).
    assert batches_split([500, 10], max_requests=10, max_bytes=100) == [range(0, 1), range(1, 2)]


def test_a_round_is_split_at_the_providers_limits(batch_server, answers, settings):
    settings.LLM_BATCH_MAX_REQUESTS = 2
    job = batch_run_sync(batch_job().pk)
    assert job.status == "done"
    assert list(LLMBatch.objects.filter(job=job).values_list("round", "request_total")) == [
        (1, 2),
        (1, 1),
        (2, 2),
        (2, 1),
        (3, 2),
        (3, 1),
    ]
    assert batch_server.batches.calls == 9 and set(batch_server.batches.answered.values()) == {1}
    assert labels_of("auto-batch") == labels_of_rule(answers)


def test_a_round_is_split_at_the_files_byte_limit(batch_server, answers, settings):
    # The fake provider refuses a file above its limit: every file sent keeps within it, two lines a file.
    settings.LLM_BATCH_MAX_BYTES = batch_server.batches.max_file_bytes = 2 * LINE_BYTES + 100
    job = batch_run_sync(batch_job().pk)
    assert job.status == "done"
    assert list(LLMBatch.objects.filter(job=job, round=1).values_list("request_total", flat=True)) == [2, 1]
    assert labels_of("auto-batch") == labels_of_rule(answers)


def labels_of_rule(answers) -> dict[tuple[int, str], str]:
    """Every label the fake model gives, recomputed by the test's copy of its rule."""
    return {
        (answer.pk, nugget): expected_assign(nugget, f"Paris is the capital of France. Zebras fact {index}.")
        for index, answer in enumerate(answers)
        for nugget in NUGGETS
    }
