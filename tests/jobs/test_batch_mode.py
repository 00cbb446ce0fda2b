"""Batch mode (assessor.jobs.batch): a job's calls through the provider's Files and Batch APIs, here the fake
server's (bench.fake_batches), driven by the real `openai` client; its labels must be the live job's."""

import time
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.jobs import batch as batch_flow
from assessor.jobs.batch import batch_run_sync, batch_step, batches_split, job_mode_set
from assessor.jobs.engine import job_cancel, job_dispatch, job_reopen, job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.jobs.llm.endpoints import endpoint_config
from assessor.models import Job, LLMBatch, LLMBatchRequest, LLMCall
from assessor.models.jobs import PICODOLLARS
from assessor.project.celery import app as celery_app
from assessor.project.llm_endpoints import EndpointsFileInvalid, endpoint_fields_check, endpoints_file_read
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from nuggets.auto import auto_nuggets_job_create
from nuggets.models import NuggetSet
from tests.builders import make_answer, make_nugget_set, make_qrel, make_run, make_segment, make_topic
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


# --- answers that cannot be used, and requests that fail ------------------------------------------


class FirstRequest:
    """True for the first request the fake provider answers, every time it answers it (its custom_id is the
    database's id of its row, which differs from one database to another)."""

    def __init__(self) -> None:
        self.custom_id = ""

    def __call__(self, custom_id: str) -> bool:
        self.custom_id = self.custom_id or custom_id
        return custom_id == self.custom_id

    def row(self) -> LLMBatchRequest:
        return LLMBatchRequest.objects.get(pk=int(self.custom_id.removeprefix("r")))


def test_an_answer_that_cannot_be_used_is_asked_again_in_the_next_rounds_batch(batch_server, answers):
    first = FirstRequest()
    batch_server.batches.transform = lambda custom_id, text: "no list here" if first(custom_id) else text
    job = batch_run_sync(batch_job().pk)
    assert (job.status, job.done_items) == ("done", 3)
    assert labels_of("auto-batch") == labels_of_rule(answers)
    spoilt = first.row()
    # Its item asks again with its first round's chain, then goes on a round behind the others.
    reask = LLMBatchRequest.objects.get(job=job, batch__round=2, item_id=spoilt.item_id)
    assert reask.messages[-2] == {"role": "assistant", "content": "no list here"}
    assert reask.messages[-1]["content"].startswith("Your answer could not be used")
    assert reask.chain_key == spoilt.request_key
    assert list(LLMBatch.objects.filter(job=job).values_list("round", "request_total")) == [
        (1, 3),
        (2, 3),
        (3, 3),
        (4, 1),
    ]
    assert batch_server.batches.calls == 10 and batch_server.count == 10
    # Both answers logged, at the batch price, under the chain's first key: the usable one is the cache's.
    chain = LLMCall.objects.filter(job=job, cache_key=reask.chain_key).order_by("id")
    assert [(call.parsed_ok, bool(call.error)) for call in chain] == [(False, True), (True, False)]
    calls, tokens_in, tokens_out = paid(job)
    assert calls == job.calls == 10
    assert job.cost_picodollars == (tokens_in * 1 + tokens_out * 4) * PICODOLLARS // 1_000_000


def test_with_live_reasks_an_answer_that_cannot_be_used_is_asked_again_at_once(batch_server, answers):
    first = FirstRequest()
    batch_server.batches.transform = lambda custom_id, text: "no list here" if first(custom_id) else text
    job = batch_run_sync(batch_job(reasks=Job.Mode.LIVE).pk)
    assert (job.status, job.done_items) == ("done", 3)
    assert labels_of("auto-batch") == labels_of_rule(answers)
    # Three rounds as without the bad answer; one call live, the re-ask.
    assert list(LLMBatch.objects.filter(job=job).values_list("round", flat=True)) == [1, 2, 3]
    assert batch_server.batches.calls == 9 and batch_server.count - batch_server.batches.calls == 1
    live_request = [body for body in batch_server.requests if body["messages"][-2:][0]["role"] == "assistant"]
    assert len(live_request) == 1 and live_request[0]["messages"][-2]["content"] == "no list here"
    # The live re-ask at the live price ($2 and $8 a million), the batches' calls at half.
    [reask] = [call for call in LLMCall.objects.filter(job=job) if len(call.messages) > 2]
    assert reask.cost_picodollars == (reask.tokens_in * 2 + reask.tokens_out * 8) * PICODOLLARS // 1_000_000


def test_a_request_that_failed_once_is_sent_again_in_a_later_round(batch_server, answers):
    first = FirstRequest()
    failures = [1]

    def fail(custom_id: str) -> bool:
        if first(custom_id) and failures[0]:
            failures[0] -= 1
            return True
        return False

    batch_server.batches.fail = fail
    job = batch_run_sync(batch_job().pk)
    assert (job.status, job.done_items, job.failed_items) == ("done", 3, 0)
    assert labels_of("auto-batch") == labels_of_rule(answers)
    chosen = first.row().custom_id
    assert batch_server.batches.failed[chosen] == 1 and batch_server.batches.answered[chosen] == 1
    assert set(batch_server.batches.answered.values()) == {1}
    assert first.row().attempts == 2


def test_a_request_that_keeps_failing_fails_its_item_after_the_retries(batch_server, answers, settings):
    first = FirstRequest()
    batch_server.batches.fail = first
    job = batch_run_sync(batch_job().pk)
    assert (job.status, job.done_items, job.failed_items) == ("failed", 2, 1)
    # Sent once and again LLM_MAX_RETRIES (3) times.
    assert batch_server.batches.failed[first.row().custom_id] == 1 + settings.LLM_MAX_RETRIES
    failed = job.items.get(status="failed")
    assert failed.pk == first.row().item_id
    assert "500" in failed.error and "after 4 batches" in failed.error
    # The other two items are labelled as live labels them.
    assert {key for key in labels_of("auto-batch")} == {
        key for key in labels_of_rule(answers) if key[0] != failed.payload["answer"]
    }


# --- batches that end short: the answers count, the rest wait for a resume ------------------------


def test_an_expired_batch_keeps_its_answers_and_the_job_resumes_in_batch_mode(batch_server, answers):
    batch_server.batches.expire_fraction = 0.5
    job = batch_run_sync(batch_job().pk)
    assert job.status == "failed" and job.done_items == 0
    assert "expired" in job.error and "1 of 3 requests answered" in job.error and "resume" in job.error
    # The two requests the batch never reached, and the second ask of the item whose first was answered.
    assert LLMBatchRequest.objects.filter(job=job, status="wanted").count() == 3
    batch_server.batches.expire_fraction = None
    assert job_reopen(job.pk) == 3
    job = batch_run_sync(job.pk)
    assert (job.status, job.done_items) == ("done", 3)
    assert labels_of("auto-batch") == labels_of_rule(answers)
    # No request answered twice: the expired batch's answer was used, the others asked once more.
    assert set(batch_server.batches.answered.values()) == {1} and batch_server.batches.calls == 9
    assert paid(job)[0] == 9


def test_a_batch_that_failed_whole_stops_the_job_saying_why(batch_server, answers):
    batch_server.batches.fail_next(1)
    job = batch_run_sync(batch_job().pk)
    assert job.status == "failed" and "failed" in job.error and "Enqueued token limit" in job.error
    assert job_reopen(job.pk) == 3
    job = batch_run_sync(job.pk)
    assert (job.status, job.done_items) == ("done", 3)
    assert labels_of("auto-batch") == labels_of_rule(answers)


def test_a_cancelled_job_cancels_its_batch_and_resumes_live_with_its_answers(batch_server, answers):
    batch_server.batches.delay = 2.0
    job = batch_job()
    assert batch_step(job.pk) == "waiting"
    job_cancel(job.pk)
    time.sleep(1.0)  # some of the batch's requests are answered by now (request i of 3 at 0.2 + 0.53 (i + 1) s)
    while batch_step(job.pk) == "waiting":
        time.sleep(0.05)
    batch = LLMBatch.objects.get(job=job)
    assert batch.state == "cancelled" and batch.request_completed == 1
    out = StringIO()
    call_command("run_auto_assign", resume=job.pk, live=True, sync=True, threads=1, stdout=out)
    job.refresh_from_db()
    assert (job.mode, job.status, job.done_items) == ("live", "done", 3)
    assert labels_of("auto-batch") == labels_of_rule(answers)
    # The one answer the batch gave was used; the eight other calls went live.
    assert batch_server.batches.calls == 1 and batch_server.count == 9
    assert paid(job)[0] == 9


# --- restarts --------------------------------------------------------------------------------------

POINTS = [
    "batches_made",
    "file_uploaded",
    "file_saved",
    "batch_creating",
    "batch_created",
    "batch_saved",
    "polled",
    "files_read",
    "batch_read",
    "round_done",
]


class Stopped(Exception):
    pass


@pytest.mark.parametrize("point", POINTS)
def test_a_restart_at_any_step_pays_no_request_twice(batch_server, answers, point, monkeypatch):
    batch_server.batches.delay = 0.05  # polled at least once
    hits = {"count": 0}

    def stop(name: str) -> None:
        if name == point:
            hits["count"] += 1
            if hits["count"] == 2:  # the second round's: the first round's asks are in
                raise Stopped(name)

    monkeypatch.setattr(batch_flow, "checkpoint", stop)
    job = batch_job()
    with pytest.raises(Stopped):
        batch_run_sync(job.pk)
    monkeypatch.setattr(batch_flow, "checkpoint", None)
    job = batch_run_sync(job.pk)
    assert (job.status, job.done_items) == ("done", 3)
    assert labels_of("auto-batch") == labels_of_rule(answers)
    assert set(batch_server.batches.answered.values()) == {1} and batch_server.batches.calls == 9
    # One batch at the provider per batch of ours (a lost id was found, not made again); one more file at most.
    assert batch_server.batches.created == LLMBatch.objects.filter(job=job).count() == 3
    assert batch_server.batches.uploaded == 3 + (point == "file_uploaded")
    assert paid(job)[0] == job.calls == 9


# --- the pages ---------------------------------------------------------------------------------------


@pytest.fixture
def batch_worker_inline(monkeypatch) -> list[int]:
    """Jobs launched from the pages are run at once, in the test, through their batches."""
    queued: list[int] = []

    def queue(job) -> None:
        queued.append(job.pk)
        batch_run_sync(job.pk) if Job.objects.get(pk=job.pk).mode == "batch" else job_run_sync(job.pk)

    monkeypatch.setattr("assessor.jobs.views.job_queue", queue)
    return queued


@pytest.fixture
def second_endpoint(settings, batch_server):
    """An endpoint "plain" on the same server that offers no batch interface."""
    settings.LLM_ENDPOINTS = {
        "plain": endpoint_fields_check("plain", {"base_url": batch_server.url, "model": "fake-model"})
    }


def test_a_job_launched_in_batch_mode_shows_its_batches_and_their_cost(
    organizer, batch_server, answers, batch_worker_inline
):
    response = organizer.post(
        reverse("jobs:launch", args=["auto_assign"]),
        {"name": "auto-page", "nuggets": "manual", "endpoint": "default", "batch": "on", "batch_reasks": "live"},
    )
    job = Job.objects.get(output_name="auto-page")
    assert response.status_code == 302 and batch_worker_inline == [job.pk]
    assert (job.mode, job.batch_reasks, job.status) == ("batch", "live", "done")
    page = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    table = page[page.index('id="batch-table"') :]
    rows = table[table.index("<tbody>") : table.index("</tbody>")].split("<tr>")[1:]
    assert len(rows) == 3
    for round_number, (row, batch) in enumerate(zip(rows, LLMBatch.objects.filter(job=job), strict=True), 1):
        cells = [cell.split(">", 1)[1].split("<")[0] for cell in row.split("<td")[1:]]
        assert cells[0] == f"#{batch.pk}" and cells[1] == str(round_number)
        assert batch.provider_id.startswith("batch_") and batch.provider_id in row
        assert "completed" in row and cells[4:7] == ["3", "3", "0"]
        assert batch.finished_at is not None and batch.finished_at.strftime("%Y-%m-%d %H:%M:%S") in row
    _, tokens_in, tokens_out = paid(job)
    # $2 and $8 a million at half: in dollars to the micro-dollar, and the same calls live at twice that.
    half = (tokens_in * 1 + tokens_out * 4) / 1_000_000
    assert f"9 calls answered through batches · {tokens_in} tokens in, {tokens_out} out" in page
    assert f"${half:.6f} at the batch price (× 0.5; ${2 * half:.6f} live)" in page
    assert "asked again at once, live" in page


def test_the_job_page_says_why_a_batch_job_stopped(organizer, batch_server, answers):
    batch_server.batches.expire_fraction = 0.5
    job = batch_run_sync(batch_job().pk)
    page = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert 'id="job-error"' in page and "expired" in page and "1 of 3 requests answered" in page
    assert "3 requests waiting" in page
    assert "Resume" in page


def test_the_launch_page_refuses_batch_mode_on_an_endpoint_without_it(organizer, answers, second_endpoint):
    form = organizer.get(reverse("jobs:launch", args=["auto_assign"])).content.decode()
    assert "Batch mode" in form and "Endpoints offering it: default." in form
    response = organizer.post(
        reverse("jobs:launch", args=["auto_assign"]),
        {"name": "auto-page", "nuggets": "manual", "endpoint": "plain", "batch": "on"},
    )
    assert response.status_code == 200
    assert "The LLM endpoint &#x27;plain&#x27; does not offer batch mode" in response.content.decode()
    assert not Job.objects.exists()


def test_without_an_endpoint_offering_it_the_launch_page_has_no_batch_mode(organizer, llm_server, answers):
    form = organizer.get(reverse("jobs:launch", args=["auto_assign"])).content.decode()
    assert "Batch mode" not in form


def test_the_endpoints_file_and_page_mark_an_endpoint_offering_batches(organizer, settings, write_file):
    path = write_file("endpoints.toml", '[endpoints.cheap]\nbase_url = "http://x.test/v1"\nmodel = "m"\nbatch = true\n')
    settings.LLM_ENDPOINTS = endpoints_file_read(path)
    assert settings.LLM_ENDPOINTS["cheap"]["batch"] is True
    assert settings.LLM_ENDPOINTS["cheap"]["batch_price_factor"] == 0.5
    bad = write_file("bad.toml", '[endpoints.cheap]\nbase_url = "http://x.test/v1"\nmodel = "m"\nbatch = "yes"\n')
    with pytest.raises(EndpointsFileInvalid, match="field 'batch': 'yes' is not true or false"):
        endpoints_file_read(bad)
    organizer.post(
        reverse("jobs:endpoints"),
        {
            "name": "paged",
            "base_url": "http://y.test/v1",
            "model": "m",
            "concurrency": 2,
            "price_input": 1,
            "price_output": 2,
            "temperature": 0,
            "timeout": 30,
            "batch": "on",
            "batch_price_factor": 0.4,
        },
    )
    config = endpoint_config("paged")
    assert (config.batch, config.batch_price_factor) == (True, 0.4)
    page = organizer.get(reverse("jobs:endpoints")).content.decode()
    assert "yes, × 0.4" in page and "yes, × 0.5" in page


# --- a job whose asks depend on the answers before them ---------------------------------------------


def test_auto_nuggets_in_batch_mode_makes_the_live_jobs_nuggets(batch_server, db):
    """AutoNuggets asks window after window, each from the list the one before made, then the importance: a round
    per ask, each replaying the answers before it."""
    topic = make_topic("t2", query="zebra stripes")
    for i in range(25):
        text = f"Zebra passage {i:02d} says {'stripes ' * (i % 3)}things here"
        make_qrel(topic, make_segment(f"doc{i:02d}#0", text=text), grade=1 + i % 3)
    live = auto_nuggets_job_create(
        name="auto-live", qrels="nist", config=replace(LLMConfig.from_settings(), model="m2")
    )
    job_run_sync(live.pk)
    live.refresh_from_db()
    job = auto_nuggets_job_create(name="auto-batch", qrels="nist")
    job_mode_set(job, mode=Job.Mode.BATCH)
    job = batch_run_sync(job.pk)
    assert (live.status, job.status) == ("done", "done")

    def nuggets(name: str) -> list[tuple[str, str]]:
        return list(NuggetSet.objects.get(name=name).nuggets.order_by("position").values_list("text", "importance"))

    assert nuggets("auto-batch") == nuggets("auto-live") and len(nuggets("auto-batch")) == 20
    # Three windows one after the other, then the importance of 25 drafts, 10, 10 and 5 a call (one after the other).
    assert list(LLMBatch.objects.filter(job=job).values_list("round", "request_total")) == [
        (round_number, 1) for round_number in range(1, 7)
    ]
    assert batch_server.batches.calls == 6 and paid(job)[0] == paid(live)[0] == 6
    assert job.cost_picodollars * 2 == live.cost_picodollars


def test_the_workers_run_a_batch_job_step_after_step(batch_server, answers, django_capture_on_commit_callbacks):
    """The job's dispatch queues its first step; each step queues the next while the batches are out (Celery's
    eager mode runs each where it is sent: the real task names and arguments, no broker)."""
    job = batch_job()
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert job_dispatch(job) == 3
    finally:
        celery_app.conf.task_always_eager = eager
    job.refresh_from_db()
    assert (job.status, job.done_items) == ("done", 3)
    assert labels_of("auto-batch") == labels_of_rule(answers)
    assert batch_server.batches.calls == 9 and batch_server.count == 9


def test_a_batch_job_resumed_live_calls_back_its_batch_still_out(batch_server, answers):
    batch_server.batches.delay = 2.0
    job = batch_job()
    assert batch_step(job.pk) == "waiting"
    time.sleep(1.0)  # one of the batch's three requests is answered by now (at 0.2 + 1.6 (i + 1) / 3 s)
    call_command("run_auto_assign", resume=job.pk, live=True, sync=True, threads=1, stdout=StringIO())
    job.refresh_from_db()
    assert (job.mode, job.status, job.done_items) == ("live", "done", 3)
    assert LLMBatch.objects.get(job=job).state == "cancelled"
    assert labels_of("auto-batch") == labels_of_rule(answers)
    # What the batch answered before it was cancelled was used; the rest went live: nine calls in all.
    assert 1 <= batch_server.batches.calls < 3 and batch_server.count == 9
    assert paid(job)[0] == 9


@pytest.mark.django_db(transaction=True)
def test_the_command_waits_for_the_workers_printing_the_batches_states(batch_server, answers):
    """--wait follows the job the workers run (here Celery's eager mode, each step where it is sent), printing its
    progress and its batches' states."""
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    out = StringIO()
    try:
        call_command("run_auto_assign", nuggets="manual", name="auto-wait", batch=True, wait=True, stdout=out)
    finally:
        celery_app.conf.task_always_eager = eager
    job = Job.objects.get(output_name="auto-wait")
    lines = out.getvalue().splitlines()
    assert f"queued job {job.pk} in batch mode" in lines
    ids = list(LLMBatch.objects.filter(job=job).values_list("pk", flat=True))
    assert f"job {job.pk} batches: " + ", ".join(f"#{pk} r{n} completed 3/3" for n, pk in enumerate(ids, 1)) in lines
    assert lines[-2].startswith(f"job {job.pk} done: 3/3 items")
