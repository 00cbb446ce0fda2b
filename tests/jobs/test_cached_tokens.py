"""Cached prompt tokens: read from each completion's usage, kept per call and per job, priced at the endpoint's
cached input price (its input price when it has none), and shown on the job's page as a share of prompt tokens.

The fake server's prompt cache is recomputed here from the requests it received, by its documented rule
(bench/fake_llm.py): the longest prefix of words shared with an earlier request's prompt, in whole blocks of 128
words from 1024."""

import json
import os
import re
import subprocess
import sys
import urllib.request
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.jobs.llm.client import LLMConfig, _completion_read
from assessor.jobs.llm.endpoints import endpoint_config
from assessor.models import Job, LLMCall, LLMEndpoint
from assessor.project.llm_endpoints import EndpointsFileInvalid, endpoints_file_read
from assignment.auto import auto_assign_job_create
from tests.builders import make_answer, make_nugget_set, make_run, make_topic
from tests.llm_server import FakeLLMServer, endpoints_toml, llm_settings

REPO = Path(__file__).resolve().parents[2]
PRICE_INPUT, PRICE_OUTPUT, PRICE_CACHED = 2.0, 8.0, 0.5  # US dollars per million tokens
PICODOLLARS_PER_DOLLAR = 10**12


# --- the cost of a call, by hand --------------------------------------------------------------------------------


def picodollars(tokens_in: int, tokens_out: int, cached: int, price_in: str, price_out: str, price_cached: str) -> int:
    """(uncached in x input + cached x cached price + out x output) per million tokens, in picodollars, exactly."""
    per_million = (
        (tokens_in - cached) * Fraction(price_in) + cached * Fraction(price_cached) + tokens_out * Fraction(price_out)
    )
    exact = per_million * PICODOLLARS_PER_DOLLAR / 1_000_000
    assert exact.denominator == 1  # prices of six decimals at most: whole picodollars
    return int(exact)


def test_cached_tokens_cost_the_cached_price_and_the_rest_the_input_price():
    config = LLMConfig(model="m", price_input=2.5, price_output=10.0, price_cached_input=1.25)
    # 952 uncached x 2.5 + 2048 x 1.25 + 200 x 10 = 2380 + 2560 + 2000 = 6940 dollars per million tokens.
    assert config.cost_picodollars(3000, 200, 2048) == 6_940_000_000
    assert config.cost_picodollars(3000, 200, 2048) == picodollars(3000, 200, 2048, "2.5", "10", "1.25")
    odd = LLMConfig(model="m", price_input=0.123457, price_output=0.987654, price_cached_input=0.061728)
    assert odd.cost_picodollars(1279, 33, 1152) == picodollars(1279, 33, 1152, "0.123457", "0.987654", "0.061728")


def test_without_a_cached_price_cached_tokens_cost_the_input_price_and_a_free_cache_costs_nothing():
    no_discount = LLMConfig(model="m", price_input=2.5, price_output=10.0)
    assert no_discount.price_cached_input is None
    assert no_discount.cost_picodollars(3000, 200, 2048) == picodollars(3000, 200, 0, "2.5", "10", "0")
    free = LLMConfig(model="m", price_input=2.5, price_output=10.0, price_cached_input=0.0)
    assert free.cost_picodollars(3000, 200, 2048) == picodollars(3000, 200, 2048, "2.5", "10", "0")
    assert free.cost_picodollars(3000, 200, 2048) < no_discount.cost_picodollars(3000, 200, 2048)


@pytest.mark.parametrize(
    "usage, cached",
    [
        ({"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1920}}, 1920),
        ({"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 0}}, 0),
        ({"prompt_tokens": 2000, "completion_tokens": 5}, 0),  # a server that keeps no prompt cache
        ({"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": None}, 0),
        ({"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"audio_tokens": 0}}, 0),
        # Never more than the prompt: the uncached part is never below nothing.
        ({"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1024}}, 100),
    ],
)
def test_the_cached_tokens_are_read_from_the_completions_usage(usage, cached):
    body = {"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": usage}
    completion = _completion_read(json.dumps(body).encode(), latency_ms=3)
    assert (completion.tokens_in, completion.tokens_out, completion.tokens_cached) == (
        usage["prompt_tokens"],
        5,
        cached,
    )


# --- the fake server's prompt cache, by hand ----------------------------------------------------------------------


def usage_of(server: FakeLLMServer, *contents: str) -> dict:
    body = {"model": "m", "messages": [{"role": "user", "content": content} for content in contents]}
    request = urllib.request.Request(
        f"{server.url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["usage"]


def words(prefix: str, count: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(count))


def test_the_fake_server_caches_prefixes_of_1024_tokens_and_more_in_blocks_of_128():
    server = FakeLLMServer().start()
    try:
        first = usage_of(server, words("a", 1300))
        assert (first["prompt_tokens"], first["prompt_tokens_details"]) == (1300, {"cached_tokens": 0})
        # 1200 words shared: 1024 + 128 of them are whole blocks.
        assert usage_of(server, words("a", 1200), words("b", 50))["prompt_tokens_details"]["cached_tokens"] == 1152
        # The same prompt again: its whole blocks, 1280 of 1300.
        assert usage_of(server, words("a", 1300))["prompt_tokens_details"]["cached_tokens"] == 1280
        # 1000 words shared: below the first block, nothing; split across messages, the words still count.
        assert usage_of(server, words("a", 1000), words("c", 500))["prompt_tokens_details"]["cached_tokens"] == 0
        assert (
            usage_of(server, words("a", 600), words("a", 1300)[len(words("a", 600)) + 1 :])["prompt_tokens_details"][
                "cached_tokens"
            ]
            == 1280
        )
        # The longest of the earlier prompts counts: 1000 a's then 500 c's, sent above, shared for 1100 words.
        assert (
            usage_of(server, words("a", 1000), words("c", 100), "z")["prompt_tokens_details"]["cached_tokens"] == 1024
        )
    finally:
        server.stop()
    quiet = FakeLLMServer(cached_tokens=False).start()
    try:
        usage_of(quiet, words("a", 1300))
        usage = usage_of(quiet, words("a", 1300))
        assert usage["prompt_tokens"] == 1300 and "prompt_tokens_details" not in usage
    finally:
        quiet.stop()


# --- a job through the real client and the fake server ------------------------------------------------------------

COMMON = [f"common{i}" for i in range(1100)]  # every answer's passage starts with these words


def long_answers_setup(answers: int = 2) -> None:
    """Twenty nuggets (two calls per answer, ten nuggets each), and answers of long passages sharing their start:
    an answer's second call repeats its first's prompt up to the nugget list; another answer's, up to its own words."""
    topic = make_topic("t1", query="zebra stripes")
    make_nugget_set(topic, texts=[f"fact number {i} about zebras" for i in range(20)], kind="manual", name="manual")
    for index in range(answers):
        own = [f"answer{index}word{i}" for i in range(300)]
        make_answer(make_run(f"run{index}"), topic, [(" ".join(COMMON + own) + ".", [])])


def common_prefix(a: list[str], b: list[str]) -> int:
    length = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        length += 1
    return length


def expected_cached(requests: list[dict]) -> list[int]:
    """The fake server's rule, recomputed: per request, the longest prefix of its prompt's words shared with an
    earlier request's, floored to whole blocks of 128 words, and nothing below 1024."""
    seen: list[list[str]] = []
    cached = []
    for body in requests:
        words = " ".join(str(message["content"]) for message in body["messages"]).split()
        shared = max((common_prefix(words, earlier) for earlier in seen), default=0)
        cached.append(shared // 128 * 128 if shared >= 1024 else 0)
        seen.append(words)
    return cached


def paid_calls(job: Job) -> list[LLMCall]:
    return list(LLMCall.objects.filter(job=job, from_cache=False).order_by("id"))


def shown_percent(cached: int, tokens_in: int) -> str:
    return str((Decimal(100 * cached) / Decimal(tokens_in)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


@pytest.mark.django_db
def test_a_jobs_calls_keep_their_cached_tokens_priced_at_the_cached_price(llm_server, settings, organizer):
    settings.LLM_PRICE_CACHED_INPUT = PRICE_CACHED
    long_answers_setup(answers=2)
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items) == ("done", 2)

    calls = paid_calls(job)
    assert len(calls) == llm_server.count == 4
    expected = expected_cached(llm_server.requests)
    assert [call.tokens_cached for call in calls] == expected
    # The first prompt was new; every later one repeats at least the shared start of the passages.
    assert expected[0] == 0 and all(cached >= 1024 for cached in expected[1:])
    assert all(call.tokens_cached < call.tokens_in for call in calls)
    for call in calls:
        assert call.cost_picodollars == picodollars(
            call.tokens_in, call.tokens_out, call.tokens_cached, str(PRICE_INPUT), str(PRICE_OUTPUT), str(PRICE_CACHED)
        )
    assert job.tokens_cached == sum(expected)
    assert job.tokens_in == sum(call.tokens_in for call in calls)
    assert job.cost_picodollars == sum(call.cost_picodollars for call in calls)

    # The job's page: the cached tokens beside the tokens, as a share of the prompt tokens.
    page = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    percent = shown_percent(sum(expected), job.tokens_in)
    found = re.search(r'<span id="cached"[^>]*>cached: (\d+) \(([0-9.]+)% of prompt tokens\)</span>', page)
    assert found, page
    assert (int(found[1]), found[2]) == (sum(expected), percent)
    assert f"{job.tokens_in} tokens in" in page
    # The jobs' list: the share beside the cost.
    listing = organizer.get(reverse("jobs:list")).content.decode()
    assert f"{percent}% cached" in listing


@pytest.mark.django_db
def test_a_server_that_reports_no_cache_gives_no_cached_tokens_and_the_page_no_share(settings, organizer):
    server = FakeLLMServer(cached_tokens=False).start()
    try:
        llm_settings(settings, server, LLM_PRICE_CACHED_INPUT=PRICE_CACHED)
        long_answers_setup(answers=2)
        job = auto_assign_job_create(nuggets="manual", name="gpt")
        job_run_sync(job.pk)
        job.refresh_from_db()
        assert job.status == "done"
        assert server.count == 4
        calls = paid_calls(job)
        assert [call.tokens_cached for call in calls] == [0, 0, 0, 0]
        assert job.tokens_cached == 0
        assert job.cost_picodollars == sum(
            picodollars(call.tokens_in, call.tokens_out, 0, str(PRICE_INPUT), str(PRICE_OUTPUT), "0") for call in calls
        )
        page = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
        assert 'id="paid"' in page and 'id="cached"' not in page
    finally:
        server.stop()


@pytest.mark.django_db
def test_a_file_endpoint_without_a_cached_price_charges_cached_tokens_at_its_input_price(
    llm_server, settings, write_file
):
    settings.LLM_PRICE_CACHED_INPUT = PRICE_CACHED  # the default endpoint's: not the file's
    endpoints = {
        "plain": {"base_url": llm_server.url, "model": "model-plain", "price_input": 3.0, "price_output": 5.0},
        "cheap": {
            "base_url": llm_server.url,
            "model": "model-cheap",
            "price_input": 3.0,
            "price_output": 5.0,
            "price_cached_input": 0.75,
        },
    }
    settings.LLM_ENDPOINTS = endpoints_file_read(write_file("endpoints.toml", endpoints_toml(endpoints)))
    assert endpoint_config("plain").price_cached_input is None
    assert endpoint_config("cheap").price_cached_input == 0.75
    long_answers_setup(answers=1)

    plain = auto_assign_job_create(nuggets="manual", name="by-plain", endpoint="plain")
    job_run_sync(plain.pk)
    calls = paid_calls(plain)
    assert [call.tokens_cached for call in calls] == expected_cached(llm_server.requests)
    assert calls[1].tokens_cached >= 1024  # the second call repeats the first's prompt up to the nuggets
    for call in calls:
        assert call.cost_picodollars == picodollars(call.tokens_in, call.tokens_out, 0, "3", "5", "0")

    # The same prompts again on the other endpoint: the server has seen them all.
    cheap = auto_assign_job_create(nuggets="manual", name="by-cheap", endpoint="cheap")
    job_run_sync(cheap.pk)
    calls = paid_calls(cheap)
    assert [call.tokens_cached for call in calls] == expected_cached(llm_server.requests)[2:]
    for call in calls:
        assert call.tokens_cached >= 1024
        assert call.cost_picodollars == picodollars(
            call.tokens_in, call.tokens_out, call.tokens_cached, "3", "5", "0.75"
        )


# --- where the price is set --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, message",
    [
        ('"cheap"', "field 'price_cached_input': 'cheap' is not a number"),
        ("-0.5", "field 'price_cached_input': -0.5 is below 0.0"),
        ("true", "field 'price_cached_input': True is not a number"),
    ],
)
def test_a_wrong_cached_price_in_the_file_names_the_file_the_endpoint_and_the_field(write_file, value, message):
    path = write_file(
        "endpoints.toml", f'[endpoints.a]\nmodel = "m"\nbase_url = "http://h/v1"\nprice_cached_input = {value}\n'
    )
    with pytest.raises(EndpointsFileInvalid) as refused:
        endpoints_file_read(path)
    assert str(refused.value) == f"{path}, endpoint 'a', {message}"


def test_a_cached_price_in_the_file_is_read_and_a_whole_number_is_a_number(write_file):
    path = write_file(
        "endpoints.toml", '[endpoints.a]\nmodel = "m"\nbase_url = "http://h/v1"\nprice_cached_input = 1\n'
    )
    assert endpoints_file_read(path)["a"]["price_cached_input"] == 1.0


@pytest.mark.django_db
def test_an_endpoint_added_on_the_page_keeps_its_cached_price_or_none(organizer, llm_server, monkeypatch):
    monkeypatch.setenv("LLM_KEY_GAMMA", "secret-of-gamma")
    fields = {
        "base_url": llm_server.url,
        "api_key_env": "LLM_KEY_GAMMA",
        "model": "model-gamma",
        "api_version": "",
        "concurrency": "2",
        "price_input": "0.5",
        "price_output": "1.5",
        "temperature": "0",
        "timeout": "30",
    }
    assert organizer.post(reverse("jobs:endpoints"), {**fields, "name": "gamma"}).status_code == 302
    assert (
        organizer.post(
            reverse("jobs:endpoints"), {**fields, "name": "delta", "price_cached_input": "0.125"}
        ).status_code
        == 302
    )
    assert LLMEndpoint.objects.get(name="gamma").price_cached_input is None
    assert LLMEndpoint.objects.get(name="delta").price_cached_input == 0.125
    assert endpoint_config("gamma").price_cached_input is None
    assert endpoint_config("delta").price_cached_input == 0.125
    refused = organizer.post(reverse("jobs:endpoints"), {**fields, "name": "eps", "price_cached_input": "-1"})
    assert refused.status_code == 200 and not LLMEndpoint.objects.filter(name="eps").exists()
    page = organizer.get(reverse("jobs:endpoints")).content.decode()
    assert "0.125" in page and "$ / M cached" in page


def settings_value(tmp_path: Path, value: str | None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environment.pop("LLM_PRICE_CACHED_INPUT", None)
    environment.update(ASSESSOR_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="assessor.project.settings")
    if value is not None:
        environment["LLM_PRICE_CACHED_INPUT"] = value
    code = "from django.conf import settings; print(repr(settings.LLM_PRICE_CACHED_INPUT))"
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("value, shown", [(None, "None"), ("", "None"), ("0.3", "0.3"), ("0", "0.0")])
def test_the_default_endpoints_cached_price_is_read_from_the_environment(tmp_path, value, shown):
    result = settings_value(tmp_path, value)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == shown


def test_a_negative_cached_price_stops_the_start_naming_the_variable(tmp_path):
    result = settings_value(tmp_path, "-1")
    assert result.returncode != 0
    assert "ImproperlyConfigured: LLM_PRICE_CACHED_INPUT='-1' must be at least 0.0" in result.stderr
