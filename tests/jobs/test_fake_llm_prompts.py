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


def stats_after_asks(models: list[str]) -> dict:
    """What a server shows at /stats after one ask of each of `models`, one after the other."""
    server = FakeLLMServer().start()
    try:
        client = openai.OpenAI(base_url=server.url, api_key="test", max_retries=0, timeout=10)
        for model in models:
            client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}])
        with urlopen(server.url.removesuffix("/v1") + "/stats", timeout=10) as response:
            return json.load(response)
    finally:
        server.stop()


def test_requests_are_counted_per_model_and_shown_at_stats():
    stats = stats_after_asks(["app", "app", "reference"])
    assert stats["requests"] == 3
    assert stats["requests_by_model"] == {"app": 2, "reference": 1}
    # One at a time: never two in flight.
    assert stats["max_in_flight_by_model"] == {"app": 1, "reference": 1}


def test_the_first_requests_of_each_model_are_kept_in_the_order_they_came():
    stats = stats_after_asks(["app", "reference", "app"])
    app, reference = stats["first_requests_by_model"]["app"], stats["first_requests_by_model"]["reference"]
    assert len(app) == 2 and len(reference) == 1
    # One after the other: the app's second came after the reference's one, which came after the app's first.
    assert app[0] == stats["first_request_by_model"]["app"] < reference[0] < app[1]


def test_the_benchmark_says_how_long_after_its_first_request_a_side_had_the_most_in_flight():
    from bench.management.commands.bench_llm import _ordinal, _phases

    stats = {
        "first_request_by_model": {"app": 100.0},
        "first_requests_by_model": {"app": [100.0, 100.004, 100.021, 100.030]},
        "last_done_by_model": {"app": 108.0},
        "last_full_by_model": {"app": 107.9},
        "busy_seconds_by_model": {"app": 20.0},
        "max_in_flight_by_model": {"app": 3},
        "requests_by_model": {"app": 100},
    }
    line = _phases(stats, "app", started=99.95, wall=8.1)
    # The 3rd request, the most in flight, came 21 ms after the first, which came 50 ms after the start; the calls
    # span 8 s, of which 3 x 8 - 20 = 4 slot-seconds were unused, 40 ms a call.
    assert "the first request 50 ms after the start, the 3rd 21 ms after it, the calls 8.00 s" in line
    assert "(the last 100 ms with fewer in flight than the most; 4.00 slot-seconds unused, 40.0 ms a call)" in line
    assert [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 16, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "16th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip
    # A side that never had its most in flight kept (fewer first requests kept than the most) says nothing of it.
    stats["max_in_flight_by_model"] = {"app": 5}
    assert "after it" not in _phases(stats, "app", started=99.95, wall=8.1)
