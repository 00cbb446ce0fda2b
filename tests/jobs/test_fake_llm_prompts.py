"""The fake LLM server reads nugget lists as nuggetizer writes them, and answers a prompt it cannot read with an
error (it dropped the connection, so the reference assigner could not be run against it)."""

import json
from urllib.request import urlopen

import openai
import pytest

from tests.llm_server import FakeLLMServer, expected_assign

ASSIGNER = "You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets."
PASSAGE = "Zebras have black and white stripes that differ on every animal."
NUGGETS = ["zebras have black and white stripes", "stripes differ between animals", "lions live in prides"]


@pytest.fixture
def client():
    server = FakeLLMServer().start()
    yield openai.OpenAI(base_url=server.url, api_key="test", max_retries=0, timeout=10)
    server.stop()


def ask(client, nugget_list: str) -> str:
    user = f"Search Query: zebra stripes\nPassage: {PASSAGE}\nNugget List: {nugget_list}\n"
    completion = client.chat.completions.create(
        model="fake", messages=[{"role": "system", "content": ASSIGNER}, {"role": "user", "content": user}]
    )
    return completion.choices[0].message.content or ""


def test_a_nugget_list_written_as_a_python_literal_is_read_as_a_json_one(client):
    expected = str([expected_assign(nugget, PASSAGE) for nugget in NUGGETS]).replace("'", '"')
    assert ask(client, str(NUGGETS)) == expected  # nuggetizer's str(list): single quotes
    assert ask(client, '["' + '", "'.join(NUGGETS) + '"]') == expected
    assert expected == '["support", "partial_support", "not_support"]'  # the rule by hand


def test_a_prompt_the_rules_cannot_read_is_answered_with_an_error_not_a_dropped_connection(client):
    with pytest.raises(openai.BadRequestError, match="unreadable prompt"):
        ask(client, "[an unterminated list")


def test_requests_are_counted_per_model_and_shown_at_stats():
    server = FakeLLMServer().start()
    try:
        client = openai.OpenAI(base_url=server.url, api_key="test", max_retries=0, timeout=10)
        for model in ["app", "app", "reference"]:
            client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}])
        with urlopen(server.url.removesuffix("/v1") + "/stats", timeout=10) as response:
            stats = json.load(response)
    finally:
        server.stop()
    assert stats["requests"] == 3
    assert stats["requests_by_model"] == {"app": 2, "reference": 1}
    # One at a time: never two in flight.
    assert stats["max_in_flight_by_model"] == {"app": 1, "reference": 1}
