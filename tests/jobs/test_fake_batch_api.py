"""The fake LLM server's Files and Batch APIs (bench.fake_batches), driven by the real `openai` client as a
job engine drives api.openai.com: upload, create, poll, read the output and error files."""

import io
import json
import time

import openai
import pytest

from bench.fake_llm import model_answer
from tests.llm_server import FakeLLMServer

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
