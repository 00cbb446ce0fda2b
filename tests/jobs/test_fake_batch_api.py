"""The fake LLM server's Files and Batch APIs (bench.fake_batches), driven by the real `openai` client as a
job engine drives api.openai.com: upload, create, poll, read the output and error files."""

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest

from bench.fake_llm import model_answer
from tests import processes
from tests.llm_server import FakeLLMServer

REPO = Path(__file__).resolve().parents[2]

ENDPOINT = "/v1/chat/completions"
ENDED = {"completed", "failed", "expired", "cancelled"}
JUDGE = {"role": "system", "content": "You are YesNoJudgeLLM, an assistant that says whether an answer answers."}
# The example judge's rule (tests/verdicts/parts.py): "yes" when a content word of the answer is in the question.
SHARED = {"role": "user", "content": "Question: why do bees dance\nAnswer: Bees dance to show where food is."}
UNSHARED = {"role": "user", "content": "Question: why do bees dance\nAnswer: To show the way."}


def client_for(server: FakeLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="test", max_retries=0, timeout=10)


def request(custom_id: str, messages: list[dict], *, url: str = ENDPOINT, model: str = "fake-model") -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": {"model": model, "messages": messages}}


def plain(number: int) -> list[dict]:
    """A prompt no app registers, different per request."""
    return [{"role": "user", "content": f"Say something about number {number}."}]


def upload(client: openai.OpenAI, lines: list) -> str:
    """The JSONL file of these lines (dicts, or raw text for a broken line), uploaded for a batch; its id."""
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    return client.files.create(file=("requests.jsonl", io.BytesIO(text.encode())), purpose="batch").id


def create(client: openai.OpenAI, file_id: str, **metadata: str):
    return client.batches.create(
        input_file_id=file_id, endpoint=ENDPOINT, completion_window="24h", metadata=metadata or None
    )


def poll(client: openai.OpenAI, batch_id: str, *, until=lambda batch: batch.status in ENDED, seconds: float = 10.0):
    """Retrieve the batch until `until` holds; every batch object seen, in order."""
    seen = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen.append(client.batches.retrieve(batch_id))
        if until(seen[-1]):
            return seen
        time.sleep(0.01)
    raise AssertionError(f"batch {batch_id} still {seen[-1].status}")


def jsonl(client: openai.OpenAI, file_id: str) -> list[dict]:
    return [json.loads(line) for line in client.files.content(file_id).text.splitlines()]


@pytest.mark.parametrize("flip", [False, True])
def test_a_batch_round_trip_answers_each_request_as_the_chat_endpoint_does(flip):
    server = FakeLLMServer(flip=flip).start()
    try:
        server.batches.delay = 0.3
        client = client_for(server)
        messages = {
            "shared": [JUDGE, SHARED],
            "unshared": [JUDGE, UNSHARED],
            **{f"plain-{n}": plain(n) for n in range(4)},
        }
        file_id = upload(client, [request(custom_id, m) for custom_id, m in messages.items()])
        created = create(client, file_id, job="17")
        assert (created.status, created.input_file_id, created.metadata) == ("validating", file_id, {"job": "17"})
        seen = poll(client, created.id)
        batch = seen[-1]
        statuses = [b.status for b in seen]
        lines = jsonl(client, batch.output_file_id)
        batch_calls = server.batches.calls
        # The chat endpoint, asked the same bodies live afterwards.
        live = {
            custom_id: client.chat.completions.create(model="fake-model", messages=m)
            for custom_id, m in messages.items()
        }
    finally:
        server.stop()
    assert statuses[-1] == "completed" and set(statuses) <= {"validating", "in_progress", "finalizing", "completed"}
    assert statuses == sorted(statuses, key=["validating", "in_progress", "finalizing", "completed"].index)
    assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (6, 6, 0)
    assert batch.error_file_id is None and batch.errors is None
    assert batch.completed_at is not None and batch.in_progress_at is not None
    assert [line["custom_id"] for line in lines] == list(messages)
    # The judge's rule by hand; the flipped "model" turns yes and no round.
    expected = {"shared": "no" if flip else "yes", "unshared": "yes" if flip else "no"}
    expected |= {f"plain-{n}": "I am a test server." for n in range(4)}
    for line in lines:
        custom_id, response = line["custom_id"], line["response"]
        assert line["id"].startswith("batch_req_") and line["error"] is None
        assert response["status_code"] == 200 and response["request_id"]
        body = response["body"]
        assert body["object"] == "chat.completion" and body["model"] == "fake-model"
        answer = body["choices"][0]["message"]["content"]
        assert answer == expected[custom_id] == model_answer(messages[custom_id], flip=flip)
        same = live[custom_id]
        assert answer == same.choices[0].message.content
        assert same.usage is not None
        assert (body["usage"]["prompt_tokens"], body["usage"]["completion_tokens"]) == (
            same.usage.prompt_tokens,
            same.usage.completion_tokens,
        )
    # Batch calls count among the server's calls, and apart: 6 in the batch, then 6 live.
    assert batch_calls == 6 and server.count == 12
    assert server.batches.answered == {custom_id: 1 for custom_id in messages}
    assert (server.batches.created, server.batches.uploaded) == (1, 1)
    # Usage summed over the answers: the prompts' and answers' words.
    words = sum(len(str(m["content"]).split()) for ms in messages.values() for m in ms)
    assert batch.usage is not None and batch.usage.input_tokens == words
    assert batch.usage.output_tokens == sum(len(expected[c].split()) for c in messages)


@pytest.fixture
def server():
    server = FakeLLMServer().start()
    yield server
    server.stop()


def requests_of(count: int) -> list[dict]:
    return [request(f"r{n}", plain(n)) for n in range(count)]


def test_a_retrieve_midway_sees_the_requests_answered_so_far_in_order(server):
    server.batches.delay = 1.0
    client = client_for(server)
    batch = create(client, upload(client, requests_of(20)))
    seen = poll(client, batch.id)
    counts = [b.request_counts.completed for b in seen if b.request_counts]
    assert seen[-1].status == "completed" and counts[-1] == 20
    assert counts == sorted(counts)  # never goes back
    midway = [b for b in seen if b.status == "in_progress" and 0 < b.request_counts.completed < 20]
    assert midway, [(b.status, b.request_counts) for b in seen]
    # Before it starts, a batch counts no requests (OpenAI's total is 0 while validating).
    assert all(b.request_counts.total == 0 for b in seen if b.status == "validating")
    assert all(b.request_counts.total == 20 for b in seen if b.status != "validating")


def test_failed_requests_go_to_the_error_file_with_a_500_and_the_rest_to_the_output(server):
    server.batches.fail_every = 3  # lines 3 and 6: r2 and r5
    server.batches.fail = lambda custom_id: custom_id == "r0"
    client = client_for(server)
    batch = poll(client, create(client, upload(client, requests_of(7))).id)[-1]
    assert batch.status == "completed"
    assert (batch.request_counts.completed, batch.request_counts.failed) == (4, 3)
    output, errors = jsonl(client, batch.output_file_id), jsonl(client, batch.error_file_id)
    assert [line["custom_id"] for line in output] == ["r1", "r3", "r4", "r6"]
    assert [line["custom_id"] for line in errors] == ["r0", "r2", "r5"]
    for line in errors:
        assert line["error"] is None and line["id"].startswith("batch_req_")
        assert line["response"]["status_code"] == 500
        assert line["response"]["body"]["error"]["type"] == "server_error"
    assert server.batches.answered == {"r1": 1, "r3": 1, "r4": 1, "r6": 1}
    assert server.batches.failed == {"r0": 1, "r2": 1, "r5": 1}
    assert server.batches.calls == 7


def test_all_requests_failing_leave_no_output_file(server):
    server.batches.fail_every = 1
    client = client_for(server)
    batch = poll(client, create(client, upload(client, requests_of(2))).id)[-1]
    assert (batch.status, batch.output_file_id, batch.request_counts.failed) == ("completed", None, 2)
    assert len(jsonl(client, batch.error_file_id)) == 2


def test_an_expired_batch_keeps_what_it_answered_and_lists_the_rest_as_expired(server):
    server.batches.delay = 0.2
    server.batches.expire_fraction = 0.5
    client = client_for(server)
    seen = poll(client, create(client, upload(client, requests_of(7))).id)
    batch = seen[-1]
    assert batch.status == "expired" and batch.expired_at is not None and batch.completed_at is None
    assert "completed" not in {b.status for b in seen}
    # floor(0.5 * 7) = 3 answered, in order; the other 4 expired, counted as failed.
    assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (7, 3, 4)
    assert [line["custom_id"] for line in jsonl(client, batch.output_file_id)] == ["r0", "r1", "r2"]
    expired = jsonl(client, batch.error_file_id)
    assert [line["custom_id"] for line in expired] == ["r3", "r4", "r5", "r6"]
    assert all(line["response"] is None and line["error"]["code"] == "batch_expired" for line in expired)
    assert sum(server.batches.answered.values()) == server.batches.calls == 3


def test_a_cancelled_batch_keeps_only_what_it_answered_before_the_cancel(server):
    server.batches.delay = 1.0
    client = client_for(server)
    batch = create(client, upload(client, requests_of(20)))
    poll(client, batch.id, until=lambda b: b.request_counts is not None and b.request_counts.completed >= 2)
    cancelling = client.batches.cancel(batch.id)
    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    answered = cancelling.request_counts.completed
    cancelled = poll(client, batch.id)[-1]
    assert cancelled.status == "cancelled" and cancelled.cancelled_at is not None
    time.sleep(1.0)  # past the batch's delay: nothing more is answered
    again = client.batches.retrieve(batch.id)
    assert again.status == "cancelled" and again.request_counts.completed == answered
    assert 2 <= answered < 20
    assert [line["custom_id"] for line in jsonl(client, again.output_file_id)] == [f"r{n}" for n in range(answered)]
    assert again.error_file_id is None
    assert server.batches.calls == sum(server.batches.answered.values()) == answered
    with pytest.raises(openai.BadRequestError):
        client.batches.cancel(batch.id)


def test_a_file_that_does_not_validate_fails_the_batch_naming_its_lines(server):
    lines = [
        request("a", plain(1)),
        '{"custom_id": "b", "method": "POST", ',  # cut short
        request("c", plain(2), url="/v1/embeddings"),
        request("a", plain(3)),
        request("d", plain(4)),
        request("e", plain(5), model="other-model"),
    ]
    client = client_for(server)
    batch = poll(client, create(client, upload(client, lines)).id)[-1]
    assert batch.status == "failed" and batch.failed_at is not None
    assert batch.errors is not None and batch.errors.data is not None
    assert [(e.line, e.code) for e in batch.errors.data] == [
        (2, "invalid_json_line"),
        (3, "invalid_url"),
        (4, "duplicate_custom_id"),
        (6, "mismatched_model"),
    ]
    assert (batch.output_file_id, batch.error_file_id, batch.request_counts.total) == (None, None, 0)
    assert server.batches.calls == 0 and server.count == 0


def test_a_whole_batch_failure_fails_the_next_batches_only(server):
    server.batches.fail_next(1)
    client = client_for(server)
    file_id = upload(client, requests_of(2))
    failed = poll(client, create(client, file_id).id)[-1]
    assert failed.status == "failed" and failed.errors is not None and failed.errors.data is not None
    assert [(e.code, e.line) for e in failed.errors.data] == [("token_limit_exceeded", None)]
    assert poll(client, create(client, file_id).id)[-1].status == "completed"
    assert server.batches.created == 2 and server.batches.calls == 2


def test_a_batch_over_the_limits_is_refused_so_that_the_client_splits_it(server):
    server.batches.max_requests = 3
    client = client_for(server)
    with pytest.raises(openai.BadRequestError, match="more than the 3 allowed"):
        create(client, upload(client, requests_of(4)))
    assert poll(client, create(client, upload(client, requests_of(3))).id)[-1].status == "completed"
    one = len(json.dumps(request("r0", plain(0))).encode()) + 1  # the bytes of one line and its newline
    server.batches.max_file_bytes = 2 * one
    with pytest.raises(openai.BadRequestError, match="too large"):
        upload(client, [request("r0", plain(0)), request("r1", plain(1)), request("r2", plain(2))])
    upload(client, [request("r0", plain(0)), request("r1", plain(1))])
    assert (server.batches.created, server.batches.uploaded) == (1, 3)


def test_the_defaults_are_openais_limits(server):
    assert (server.batches.max_requests, server.batches.max_file_bytes) == (50_000, 200 * 1024 * 1024)


def test_batches_are_listed_newest_first_a_page_at_a_time(server):
    client = client_for(server)
    file_id = upload(client, requests_of(1))
    made = [create(client, file_id, n=str(n)).id for n in range(5)]
    first = client.batches.list(limit=2)
    assert [b.id for b in first.data] == [made[4], made[3]] and first.has_more
    after = client.batches.list(limit=2, after=made[3])
    assert [b.id for b in after.data] == [made[2], made[1]]
    assert [b.id for b in client.batches.list(limit=2, after=made[1]).data] == [made[0]]
    # The client's own paging walks every page.
    assert [b.id for b in client.batches.list(limit=2)] == made[::-1]


def test_a_deleted_file_is_not_found(server):
    client = client_for(server)
    file_id = upload(client, requests_of(2))
    batch = poll(client, create(client, file_id).id)[-1]
    assert client.files.retrieve(file_id).purpose == "batch"
    output = client.files.retrieve(batch.output_file_id)
    assert output.purpose == "batch_output" and output.bytes == len(client.files.content(output.id).content)
    for deleted in (file_id, batch.output_file_id):
        assert client.files.delete(deleted).deleted
        with pytest.raises(openai.NotFoundError):
            client.files.retrieve(deleted)
        with pytest.raises(openai.NotFoundError):
            client.files.content(deleted)
        with pytest.raises(openai.NotFoundError):
            client.files.delete(deleted)
    with pytest.raises(openai.NotFoundError):
        create(client, file_id)


def test_the_answer_transform_changes_the_answers_a_test_names(server):
    server.batches.transform = lambda custom_id, text: "not a list" if custom_id == "r1" else text
    client = client_for(server)
    batch = poll(client, create(client, upload(client, requests_of(3))).id)[-1]
    answers = {
        line["custom_id"]: line["response"]["body"]["choices"][0]["message"]["content"]
        for line in jsonl(client, batch.output_file_id)
    }
    assert answers == {"r0": "I am a test server.", "r1": "not a list", "r2": "I am a test server."}


def test_a_request_answered_in_two_batches_is_counted_twice(server):
    client = client_for(server)
    for _ in range(2):
        poll(client, create(client, upload(client, requests_of(2))).id)
    assert server.batches.answered == {"r0": 2, "r1": 2}
    assert (server.batches.created, server.batches.uploaded, server.batches.calls) == (2, 2, 4)
    server.reset()
    assert (server.batches.created, server.batches.calls, server.batches.answered) == (0, 0, {})


def test_run_on_its_own_it_takes_the_batch_knobs_as_flags(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "ASSESSOR_VAR_DIR": str(tmp_path)}
    flags = ["--batch-delay", "0.2", "--batch-max-requests", "3", "--batch-fail-every", "2"]
    command = [sys.executable, "-m", "bench.fake_llm", *flags]
    with processes.running(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True) as process:
        client = openai.OpenAI(base_url=process.stdout.readline().strip(), api_key="test", max_retries=0, timeout=10)
        with pytest.raises(openai.BadRequestError):
            create(client, upload(client, requests_of(4)))
        seen = poll(client, create(client, upload(client, requests_of(3))).id)
    assert "in_progress" in {b.status for b in seen}  # it took its time
    batch = seen[-1]
    assert (batch.status, batch.request_counts.completed, batch.request_counts.failed) == ("completed", 2, 1)


def test_a_prompt_the_rules_cannot_read_is_a_400_line_as_the_chat_endpoint_answers_it(server):
    assigner = "You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets."
    user = "Search Query: zebra stripes\nPassage: Zebras have stripes.\nNugget List: [an unterminated list\n"
    messages = [{"role": "system", "content": assigner}, {"role": "user", "content": user}]
    client = client_for(server)
    batch = poll(client, create(client, upload(client, [request("bad", messages), request("ok", plain(1))])).id)[-1]
    assert (batch.request_counts.completed, batch.request_counts.failed) == (1, 1)
    (line,) = jsonl(client, batch.error_file_id)
    assert (line["custom_id"], line["response"]["status_code"]) == ("bad", 400)
    with pytest.raises(openai.BadRequestError) as live:
        client.chat.completions.create(model="fake-model", messages=messages)
    assert line["response"]["body"]["error"]["message"] == live.value.body["message"]


@pytest.mark.parametrize("cached_tokens", [True, False])
def test_batch_answers_report_the_prompt_cache_as_the_chat_endpoint_does(cached_tokens):
    server = FakeLLMServer(cached_tokens=cached_tokens).start()
    try:
        long = [{"role": "user", "content": " ".join(f"w{n}" for n in range(1100))}]
        client = client_for(server)
        batch = poll(client, create(client, upload(client, [request("first", long), request("again", long)])).id)[-1]
        usage = {line["custom_id"]: line["response"]["body"]["usage"] for line in jsonl(client, batch.output_file_id)}
        live = client.chat.completions.create(model="fake-model", messages=long).usage
    finally:
        server.stop()
    assert batch.usage is not None and live is not None
    if cached_tokens:
        # OpenAI's rule by hand: 1100 shared tokens are cached in blocks of 128 from 1024, so 1024 of them.
        cached = {custom_id: u["prompt_tokens_details"]["cached_tokens"] for custom_id, u in usage.items()}
        assert cached == {"first": 0, "again": 1024}
        assert batch.usage.input_tokens_details.cached_tokens == 1024
        # The batch's prompts are in the cache the live calls read.
        assert live.prompt_tokens_details is not None and live.prompt_tokens_details.cached_tokens == 1024
    else:
        assert all("prompt_tokens_details" not in u for u in usage.values())
        assert batch.usage.input_tokens_details.cached_tokens == 0
    assert batch.usage.input_tokens == 2 * 1100
