"""The real `openai` client, our retries, re-asks, log and cache, against the local test server."""

import socket
import threading
import time
from datetime import timedelta
from decimal import Decimal
from functools import partial

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from assessor.jobs.llm.cache import cache_key
from assessor.jobs.llm.client import (
    LLMAnswerFailed,
    LLMConfig,
    LLMNotConfigured,
    LLMUnavailable,
    llm_missing_settings,
    llm_session,
    retry_after_seconds,
)
from assessor.jobs.llm.parsing import parse_label_list
from assessor.jobs.llm.prompts import PromptText, prompt_messages, prompt_template_get
from assessor.models import LLMCall, PromptTemplate
from assessor.models.jobs import LLMAskInFlight
from tests.llm_server import Reply, llm_settings

pytestmark = pytest.mark.django_db

LABELS = ("support", "partial_support", "not_support")
NUGGETS = ["Paris is the capital", "Seine river flows", "Lyon food"]
PASSAGE = "Paris is the capital of France, on the Seine."
# The test server's rule: the nugget's text in the passage -> support; a shared word
# of 4+ letters -> partial_support; else not_support.
EXPECTED = ["support", "partial_support", "not_support"]


def assign_ask(session, nuggets=NUGGETS):
    prompt = prompt_template_get("assign")
    messages = prompt_messages(
        prompt, n=len(nuggets), query="capital of France", passage=PASSAGE, nuggets=str(nuggets).replace("'", '"')
    )
    return session.ask(prompt, messages, partial(parse_label_list, expected=len(nuggets), allowed=LABELS))


def test_it_labels_through_the_openai_client(llm_server):
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 1
    assert llm_server.requests[0]["model"] == "fake-model"
    assert llm_server.requests[0]["temperature"] == 0.0


@pytest.mark.parametrize("reply", [Reply.fenced(), Reply.prose()])
def test_it_reads_fenced_and_wrapped_answers_without_a_reask(llm_server, reply):
    llm_server.script(reply)
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 1


@pytest.mark.parametrize("reply", [Reply.short(), Reply.long(), Reply.unknown_label()])
def test_it_reasks_when_the_answer_is_unusable(llm_server, reply):
    llm_server.script(reply)
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 2
    reask = llm_server.requests[1]["messages"]
    # The re-ask shows the model its answer and says what was wrong with it.
    assert reask[-2]["role"] == "assistant"
    assert "could not be used" in reask[-1]["content"]
    calls = list(LLMCall.objects.order_by("id"))
    assert [call.parsed_ok for call in calls] == [False, True]
    assert calls[0].error


def test_it_fails_with_the_raw_answer_after_the_bounded_reasks(llm_server, settings):
    settings.LLM_MAX_REASKS = 1
    llm_server.script(Reply.literal('["support", "maybe", "support"]'), Reply.literal("I cannot say."))
    with pytest.raises(LLMAnswerFailed) as failure:
        assign_ask(llm_session())
    assert failure.value.raw == "I cannot say."
    assert "no list" in failure.value.reason
    assert llm_server.count == 2


def test_it_retries_a_429_after_the_wait_it_asks_for(llm_server):
    llm_server.script(Reply.error(429, retry_after_ms="300"))
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 2
    first, second = llm_server.request_times
    assert second - first >= 0.3


def test_it_reads_retry_after_in_seconds_and_dates():
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after_seconds({}) is None


def test_it_retries_500s_then_succeeds(llm_server):
    llm_server.script(Reply.error(500), Reply.error(503))
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 3
    assert LLMCall.objects.exclude(error="").count() == 2


def test_it_gives_up_after_the_bounded_retries(llm_server, settings):
    settings.LLM_MAX_RETRIES = 2
    llm_server.script(*[Reply.error(500)] * 3)
    with pytest.raises(LLMUnavailable, match="failed 3 times"):
        assign_ask(llm_session())
    assert llm_server.count == 3


def test_it_does_not_retry_a_refused_request(llm_server):
    llm_server.script(Reply.error(400))
    with pytest.raises(LLMUnavailable, match="refused"):
        assign_ask(llm_session())
    assert llm_server.count == 1


def test_it_retries_a_slow_answer_that_times_out(llm_server, settings):
    settings.LLM_TIMEOUT = 0.3
    llm_server.script(Reply.slow(1.0))
    session = llm_session()
    assert assign_ask(session) == EXPECTED
    assert llm_server.count == 2
    assert "Timeout" in LLMCall.objects.order_by("id").first().error
    # The request that timed out reached the server: it is a call, as the server counts it.
    assert session.usage_take().calls == 2


def test_a_request_that_could_not_be_sent_is_logged_but_not_counted_as_a_call():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = LLMConfig(model="fake-model", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff=0.01)
    session = llm_session(config=config)
    with pytest.raises(LLMUnavailable, match="failed 2 times"):
        assign_ask(session)
    assert session.usage_take().calls == 0
    assert [call.error.split(":")[0] for call in LLMCall.objects.order_by("id")] == ["APIConnectionError"] * 2


def test_it_waits_for_a_slow_answer_within_the_timeout(llm_server):
    llm_server.script(Reply.slow(0.2))
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 1


def test_it_logs_each_call_with_tokens_latency_and_cost(llm_server):
    assign_ask(llm_session())
    call = LLMCall.objects.get()
    assert call.prompt.name == "assign" and call.prompt.version == 1
    assert call.model == "fake-model"
    assert call.messages[0]["role"] == "system"
    assert call.raw_response == '["support", "partial_support", "not_support"]'
    # The test server counts whitespace words as tokens.
    words_in = sum(len(message["content"].split()) for message in call.messages)
    assert (call.tokens_in, call.tokens_out) == (words_in, 3)
    assert call.cost == Decimal(str(round((words_in * 2.0 + 3 * 8.0) / 1_000_000, 6)))
    assert call.latency_ms >= 0


def test_a_calls_latency_is_its_requests_not_the_wait_for_a_slot(llm_server, monkeypatch):
    """A worker has two threads a call in flight: a call's latency must not count the time its thread waited for a
    slot before it (here 0.4 s), only the request (0.2 s at the server)."""
    import contextlib

    from assessor.jobs.llm import client as llm_client

    slot = llm_client.llm_slot

    @contextlib.contextmanager
    def waited(**kwargs):
        time.sleep(0.4)  # another thread's call holds the only slot meanwhile
        with slot(**kwargs):
            yield

    monkeypatch.setattr(llm_client, "llm_slot", waited)
    llm_server.script(Reply.slow(0.2))
    assign_ask(llm_session())
    assert 200 <= LLMCall.objects.get().latency_ms < 400


def test_a_calls_slot_is_taken_once_its_request_is_built_and_let_go_of_once_its_answer_is_read(
    llm_server, monkeypatch
):
    """The slot limits the requests on the wire: building one (its JSON, headers and URL) waits outside it."""
    import contextlib

    from assessor.jobs.llm import client as llm_client

    events: list[str] = []
    slot = llm_client.llm_slot

    @contextlib.contextmanager
    def recorded(**kwargs):
        with slot(**kwargs):
            events.append("slot taken")
            yield
            events.append("slot let go of")

    monkeypatch.setattr(llm_client, "llm_slot", recorded)
    openai_client = llm_client._openai_client(llm_session().config)
    build, send = openai_client._build_request, openai_client._client.send

    def built(*args, **kwargs):
        events.append("request built")
        return build(*args, **kwargs)

    def sent(*args, **kwargs):
        response = send(*args, **kwargs)
        events.append("answer read")
        return response

    monkeypatch.setattr(openai_client, "_build_request", built)
    monkeypatch.setattr(openai_client._client, "send", sent)
    assert assign_ask(llm_session()) == EXPECTED
    assert events == ["request built", "slot taken", "answer read", "slot let go of"]


def test_it_answers_again_from_the_cache_without_a_call(llm_server):
    assert assign_ask(llm_session()) == EXPECTED
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 1
    assert LLMCall.objects.filter(from_cache=True).count() == 1


def test_the_cache_serves_the_answer_a_reask_obtained(llm_server):
    llm_server.script(Reply.short())
    assign_ask(llm_session())
    assert llm_server.count == 2
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 2


def test_the_cache_does_not_serve_unusable_answers(llm_server, settings):
    settings.LLM_MAX_REASKS = 0
    llm_server.script(Reply.short())
    with pytest.raises(LLMAnswerFailed):
        assign_ask(llm_session())
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 2


def test_the_cache_is_keyed_by_model(llm_server, settings):
    assign_ask(llm_session())
    settings.LLM_MODEL = "another-model"
    assign_ask(llm_session())
    assert llm_server.count == 2


def test_a_changed_prompt_text_is_a_new_version():
    first = prompt_template_get("assign")
    again = prompt_template_get("assign")
    changed = prompt_template_get("assign", text=PromptText(name="assign", system=first.system, user=first.user + " "))
    assert (first.version, again.pk, changed.version) == (1, first.pk, 2)
    assert PromptTemplate.objects.filter(name="assign").count() == 2
    # The old text keeps its version.
    assert prompt_template_get("assign").version == 1


def test_it_says_what_to_set_when_no_llm_is_configured(settings):
    settings.LLM_MODEL = ""
    settings.LLM_BASE_URL = ""
    settings.LLM_API_KEY = ""
    assert llm_missing_settings() == ["LLM_MODEL", "LLM_BASE_URL (or LLM_API_KEY for api.openai.com)"]
    with pytest.raises(LLMNotConfigured, match="Set LLM_MODEL"):
        LLMConfig.from_settings()


def test_it_talks_to_azure_deployments(llm_server, settings):
    llm_settings(settings, llm_server, LLM_BASE_URL=llm_server.url.removesuffix("/v1"), LLM_API_VERSION="2024-06-01")
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 1


# --- identical asks in flight at once ------------------------------------------------

# Threads of one process writing at once: the test's shared in-memory SQLite database locks whole
# tables between them (a served SQLite file waits instead), so these run on PostgreSQL.
threads_writing = pytest.mark.skipif(
    connection.vendor == "sqlite", reason="threads writing at once need PostgreSQL (set DATABASE_URL)"
)


def _asked_together(count: int) -> list:
    """`count` sessions ask the same prompt from their own threads, released together."""
    start = threading.Barrier(count)
    answers: list = [None] * count

    def ask(index: int) -> None:
        try:
            start.wait()
            answers[index] = assign_ask(llm_session())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@threads_writing
@pytest.mark.django_db(transaction=True)
def test_identical_asks_in_flight_at_once_are_sent_once_and_shared(llm_server):
    llm_server.latency = 0.3
    assert _asked_together(6) == [EXPECTED] * 6
    assert llm_server.count == 1
    # One call paid; the five others are logged as answers served from it.
    assert LLMCall.objects.filter(from_cache=False).count() == 1
    assert LLMCall.objects.filter(from_cache=True, cost_picodollars=0).count() == 5
    assert not LLMAskInFlight.objects.exists()


@threads_writing
@pytest.mark.django_db(transaction=True)
def test_an_ask_whose_identical_ask_ends_unanswered_sends_its_own(llm_server, settings):
    settings.LLM_MAX_REASKS = 0
    llm_server.latency = 0.3
    # Whichever is sent first gets an unusable answer: the other must not wait for ever, nor use it.
    llm_server.script(Reply.short())
    answers = _asked_together_outcomes(2)
    assert sorted(answers, key=str) == sorted([EXPECTED, "failed"], key=str)
    assert llm_server.count == 2


def _asked_together_outcomes(count: int) -> list:
    start = threading.Barrier(count)
    outcomes: list = [None] * count

    def ask(index: int) -> None:
        try:
            start.wait()
            outcomes[index] = assign_ask(llm_session())
        except LLMAnswerFailed:
            outcomes[index] = "failed"
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_a_claim_whose_holder_died_is_taken_over_when_its_lease_runs_out(llm_server):
    key = _assign_key()
    LLMAskInFlight.objects.create(cache_key=key, holder="gone", lease_until=timezone.now() - timedelta(seconds=1))
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 1
    assert not LLMAskInFlight.objects.exists()


@threads_writing
@pytest.mark.django_db(transaction=True)
def test_an_ask_waits_for_the_holder_and_takes_its_answer(llm_server):
    key = _assign_key()
    LLMAskInFlight.objects.create(cache_key=key, holder="other", lease_until=timezone.now() + timedelta(minutes=5))
    answers: list = []
    waiting = threading.Thread(target=lambda: (answers.append(assign_ask(llm_session())), connections.close_all()))
    waiting.start()
    # The holder's answer arrives, and its claim ends.
    prompt = prompt_template_get("assign")
    LLMCall.objects.create(
        prompt=prompt, model="fake-model", messages=[], raw_response='["support", "support", "support"]',
        cache_key=key, parsed_ok=True,
    )  # fmt: skip
    LLMAskInFlight.objects.filter(cache_key=key).delete()
    waiting.join()
    assert answers == [["support", "support", "support"]]
    assert llm_server.count == 0


@threads_writing
@pytest.mark.django_db(transaction=True)
def test_an_ask_that_claims_as_the_holder_lets_go_takes_the_holders_answer(llm_server):
    # The holder logs its answer and lets go of the key in one transaction, which commits while the ask's look is
    # under way: the look saw the key held and no answer, and its claim waited for the holder and then went
    # through. The ask must look again, not pay for the answer a second time.
    key = _assign_key()
    LLMAskInFlight.objects.create(cache_key=key, holder="other", lease_until=timezone.now() + timedelta(minutes=5))
    holder_writing = threading.Event()
    failures: list = []

    def holder() -> None:
        try:
            with transaction.atomic():
                LLMCall.objects.create(
                    prompt=prompt_template_get("assign"), model="fake-model", messages=[], cache_key=key,
                    raw_response='["support", "support", "support"]', parsed_ok=True,
                )  # fmt: skip
                LLMAskInFlight.objects.filter(cache_key=key).delete()
                holder_writing.set()
                _until_a_statement_waits_on_a_lock()
        except Exception as exc:  # noqa: BLE001  # reported by the test's thread
            failures.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    assert holder_writing.wait(10)
    answer = assign_ask(llm_session())
    thread.join()
    assert not failures, failures
    assert answer == ["support", "support", "support"]
    assert llm_server.count == 0


def _until_a_statement_waits_on_a_lock(seconds: float = 10.0) -> None:
    """Return once another session of this database waits on a lock (the ask's claim on the holder's row)."""
    deadline = time.monotonic() + seconds
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.01)
    raise AssertionError("the ask's claim never waited on the holder's transaction")


def _assign_key() -> str:
    prompt = prompt_template_get("assign")
    messages = prompt_messages(
        prompt, n=len(NUGGETS), query="capital of France", passage=PASSAGE, nuggets=str(NUGGETS).replace("'", '"')
    )
    return cache_key(model="fake-model", prompt=prompt, temperature=0.0, messages=messages)


def test_a_lone_surrogate_in_the_answer_is_stored_as_the_replacement_character(llm_server):
    # The server's JSON body carries "\ud800" with no pair: an escape JSON allows and no text can store
    # (PostgreSQL refuses it; on SQLite the pages that showed it failed). The answer is still usable.
    llm_server.script(Reply.literal('["support", "partial_support", "not_support"] \ud800 done'))
    assert assign_ask(llm_session()) == EXPECTED
    (call,) = LLMCall.objects.all()
    assert call.raw_response == '["support", "partial_support", "not_support"] \ufffd done'
    assert call.parsed_ok
