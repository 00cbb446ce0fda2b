"""Asks made together (`LLMSession.ask_together`): an item's independent asks sent at once, through the real client,
its retries, re-asks, log and cache, against the local test server."""

import threading
import time
import uuid
from functools import partial

import pytest
from django.db import connections

from assessor.jobs.engine import item_process, job_items_process, job_run_sync, pending_item_ids
from assessor.jobs.llm.cache import cache_key
from assessor.jobs.llm.client import LLMUnavailable, llm_session
from assessor.jobs.llm.concurrency import llm_slot, slots_wanted_here
from assessor.jobs.llm.parsing import parse_label_list
from assessor.jobs.llm.prompts import prompt_messages, prompt_template_get
from assessor.models import LLMCall
from assessor.models.jobs import LLMAskInFlight
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from nuggets.models import Nugget
from support.auto import auto_support_job_create
from support.models import SupportLabel
from tests.builders import make_answer, make_nugget_set, make_run, make_topic
from tests.llm_server import Reply, expected_assign
from tests.services import redis_slots

pytestmark = pytest.mark.django_db

LABELS = ("support", "partial_support", "not_support")
PASSAGE = "Paris is the capital of France, on the Seine."
BATCHES = [
    ["Paris is the capital", "Seine river flows", "Lyon food"],
    ["France has a capital", "Marseille port", "on the Seine"],
]


def _asks(batches=BATCHES):
    prompt = prompt_template_get("assign")
    asks = [
        (
            prompt_messages(
                prompt, n=len(batch), query="capital of France", passage=PASSAGE, nuggets=str(batch).replace("'", '"')
            ),
            partial(parse_label_list, expected=len(batch), allowed=LABELS),
        )
        for batch in batches
    ]
    return prompt, asks


def _expected(batches=BATCHES) -> list[list[str]]:
    return [[expected_assign(nugget, PASSAGE) for nugget in batch] for batch in batches]


def test_the_asks_go_out_at_once_and_their_answers_come_back_in_order(llm_server, settings):
    redis_slots(settings)
    llm_server.latency = 0.4
    prompt, asks = _asks()
    assert llm_session().ask_together(prompt, asks) == _expected()
    assert llm_server.count == 2
    assert llm_server.max_in_flight == 2
    first, second = llm_server.request_times
    assert abs(second - first) < 0.3  # the second did not wait for the first's answer (0.4 s)
    calls = LLMCall.objects.filter(from_cache=False, parsed_ok=True)
    assert calls.count() == 2
    assert not LLMAskInFlight.objects.exists()  # both claims let go of


def test_without_redis_the_asks_go_one_after_the_other(llm_server, settings):
    settings.CELERY_BROKER_URL = "memory://"  # the slots kept in the database
    llm_server.latency = 0.2
    prompt, asks = _asks()
    assert llm_session().ask_together(prompt, asks) == _expected()
    assert llm_server.count == 2
    assert llm_server.max_in_flight == 1


def test_an_unusable_answer_is_asked_again_on_its_own(llm_server, settings):
    redis_slots(settings)
    llm_server.script(Reply.short())  # whichever arrives first
    prompt, asks = _asks()
    assert llm_session().ask_together(prompt, asks) == _expected()
    assert llm_server.count == 3
    # The re-ask is the third request the server sees, or the second when the other ask left late: the answer of
    # the first came at once, and it was asked again before the other reached the server.
    sent = [request["messages"] for request in llm_server.requests]
    reasks = [number for number, messages in enumerate(sent) if messages[-2]["role"] == "assistant"]
    assert len(reasks) == 1
    reask = sent[reasks[0]]
    assert "could not be used" in reask[-1]["content"]
    # It continues its own ask, sent before it: that ask's messages, the unusable answer, and the reason.
    assert reask[:-2] in sent[: reasks[0]]
    assert list(LLMCall.objects.order_by("parsed_ok").values_list("parsed_ok", flat=True)) == [False, True, True]


def test_a_retried_failure_of_one_ask_leaves_the_other_alone(llm_server, settings):
    redis_slots(settings)
    llm_server.script(Reply.error(503))
    prompt, asks = _asks()
    assert llm_session().ask_together(prompt, asks) == _expected()
    assert llm_server.count == 3
    assert LLMCall.objects.exclude(error="").count() == 1


def test_when_one_ask_fails_the_others_answer_is_logged_and_cached_first(llm_server, settings):
    redis_slots(settings)
    llm_server.script(Reply.error(400))  # refused: not retried
    prompt, asks = _asks()
    session = llm_session()
    with pytest.raises(LLMUnavailable, match="refused"):
        session.ask_together(prompt, asks)
    assert llm_server.count == 2
    assert session.calls_made == 2  # both reached the endpoint: both are paid
    answered = LLMCall.objects.get(parsed_ok=True)
    assert not LLMAskInFlight.objects.exists()
    # Asked again, the answered one comes from the cache: only the refused one is sent.
    assert llm_session().ask_together(prompt, asks) == _expected()
    assert llm_server.count == 3
    assert LLMCall.objects.filter(from_cache=True, cache_key=answered.cache_key).count() == 1


def test_an_ask_answered_already_is_taken_from_the_cache_and_only_the_other_is_sent(llm_server, settings):
    redis_slots(settings)
    prompt, asks = _asks()
    messages, parse = asks[1]
    assert llm_session().ask(prompt, messages, parse) == _expected()[1]
    assert llm_server.count == 1
    assert llm_session().ask_together(prompt, asks) == _expected()
    assert llm_server.count == 2
    assert llm_server.requests[1]["messages"] == asks[0][0]
    key = cache_key(model="fake-model", prompt=prompt, temperature=0.0, messages=messages)
    assert LLMCall.objects.filter(from_cache=True, cache_key=key).count() == 1


def test_two_identical_asks_are_sent_once(llm_server, settings):
    redis_slots(settings)
    prompt, asks = _asks([BATCHES[0], BATCHES[0]])
    assert llm_session().ask_together(prompt, asks) == _expected([BATCHES[0], BATCHES[0]])
    assert llm_server.count == 1
    assert LLMCall.objects.filter(from_cache=True).count() == 1


@pytest.mark.django_db(transaction=True)
def test_an_answer_is_logged_while_the_other_ask_is_still_out(llm_server, settings):
    """An item's session holds its calls' logs back for its finish (`defer_writes`); asked together, an answer that
    comes while another ask is still out is written at once, so that a worker killed then has paid for it once. Seen
    from another connection while the slow ask is in flight."""
    redis_slots(settings)
    llm_server.script(Reply.slow(2.0))  # whichever arrives first; the other is answered at once
    topic = make_topic("t1", query="zebra facts")
    make_nugget_set(topic, texts=[f"zebra fact {i} here" for i in range(12)], name="manual")  # windows of 10 and 2
    make_answer(make_run("r1"), topic, [("Zebras: zebra fact 3 here.", [])])
    (item,) = pending_item_ids(auto_assign_job_create(nuggets="manual", name="auto-gpt").pk)
    seen: list[tuple[int, int]] = []  # (calls logged, requests in flight), each time the log was read

    def watch() -> None:
        try:
            while not seen or seen[-1][1] or not seen[-1][0]:
                seen.append((LLMCall.objects.filter(from_cache=False).count(), llm_server.in_flight))
                if len(seen) > 1000:
                    return
                time.sleep(0.005)
        finally:
            connections.close_all()

    watcher = threading.Thread(target=watch)
    watcher.start()
    assert item_process(item) == "done"
    watcher.join(10)
    assert llm_server.count == 2 and llm_server.max_in_flight == 2
    assert (1, 1) in seen, sorted(set(seen))  # one call logged while the other was still at the server
    assert LLMCall.objects.filter(from_cache=False, parsed_ok=True).count() == 2


# --- the job kinds whose items ask together ------------------------------------------------


def test_an_assign_items_windows_of_nuggets_are_asked_at_once(llm_server, settings):
    """24 nuggets: windows of 10, 10 and 4, all three in flight together, each nugget labelled by the server's rule."""
    redis_slots(settings)
    llm_server.latency = 0.3
    topic = make_topic("t1", query="zebra facts")
    nuggets = make_nugget_set(topic, texts=[f"zebra fact {i} here" for i in range(24)], name="manual")
    answer = make_answer(make_run("r1"), topic, [("Zebras: zebra fact 3 here, and zebra fact 17 here.", [])])
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    (item,) = pending_item_ids(job.pk)
    assert item_process(item) == "done"
    assert llm_server.count == 3
    assert llm_server.max_in_flight == 3
    labels = dict(AssignmentLabel.objects.filter(assigner="auto-gpt").values_list("nugget__text", "label"))
    assert labels == {nugget.text: expected_assign(nugget.text, answer.text) for nugget in Nugget.objects.filter(nugget_set=nuggets)}
    assert labels["zebra fact 3 here"] == "support" and labels["zebra fact 4 here"] == "partial_support"


def test_an_answers_first_citations_are_judged_at_once(llm_server, settings, cited_answer):
    redis_slots(settings)
    llm_server.latency = 0.3
    job_run_sync(auto_support_job_create(name="auto-support").pk)
    assert llm_server.count == 3
    assert llm_server.max_in_flight == 3
    labels = {
        label.citation.sentence.index: label.label
        for label in SupportLabel.objects.filter(method="auto-support").select_related("citation__sentence")
    }
    assert labels == {0: 2, 1: 1, 2: 0, 4: -1}


def test_while_the_processs_calls_use_up_the_limit_the_asks_go_one_after_the_other(llm_server, settings, monkeypatch):
    """With threads of the process waiting for a slot, more calls at once would only wait: the item's first ask goes
    first, as `ask` sends it."""
    redis_slots(settings)
    llm_server.latency = 0.2
    monkeypatch.setattr("assessor.jobs.llm.client.slots_wanted_here", lambda **_kwargs: True)
    prompt, asks = _asks()
    assert llm_session().ask_together(prompt, asks) == _expected()
    assert llm_server.max_in_flight == 1
    assert [request["messages"] for request in llm_server.requests] == [messages for messages, _parse in asks]


def test_an_item_among_its_jobs_last_asks_together_even_while_the_limit_is_used_up(llm_server, settings, monkeypatch):
    """No item follows it to be served after its later ask: asked one after the other, that ask would start a round
    of calls late, with the job's other calls done."""
    redis_slots(settings)
    llm_server.latency = 0.2
    monkeypatch.setattr("assessor.jobs.llm.client.slots_wanted_here", lambda **_kwargs: True)
    prompt, asks = _asks()
    session = llm_session()
    session.among_last = True
    assert session.ask_together(prompt, asks) == _expected()
    assert llm_server.max_in_flight == 2


def test_a_jobs_items_ask_together_once_fewer_are_left_after_them_than_the_endpoints_calls_in_flight(
    llm_server, settings, monkeypatch
):
    """Six answers, a limit of four calls, the limit used up throughout: the items claimed with five and four items
    pending after them ask one after the other; those with three, two, one and none, together."""
    redis_slots(settings)
    settings.LLM_CONCURRENCY = 4
    llm_server.latency = 0.3
    monkeypatch.setattr("assessor.jobs.llm.client.slots_wanted_here", lambda **_kwargs: True)
    topic = make_topic("t1", query="zebra facts")
    make_nugget_set(topic, texts=[f"zebra fact {i} here" for i in range(20)], name="manual")
    for number in range(6):
        make_answer(make_run(f"r{number}"), topic, [(f"Zebras: zebra fact {number} here.", [])])
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    assert job_items_process(job.pk, 6) == {"done": 6, "failed": 0, "skipped": 0}
    times = llm_server.request_times
    assert len(times) == 12
    # An item's two windows of ten nuggets: sent together, within a call's latency of each other.
    together = [times[2 * number + 1] - times[2 * number] < 0.15 for number in range(6)]
    assert together == [False, False, True, True, True, True]


def test_the_limit_is_used_up_once_a_thread_of_the_process_waits_for_a_slot(settings):
    redis_slots(settings)
    endpoint = f"together-{uuid.uuid4().hex}"
    assert not slots_wanted_here(endpoint=endpoint, limit=1)
    held, release, waited = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with llm_slot(endpoint=endpoint, limit=1, timeout=5):
            held.set()
            release.wait(5)

    def waiter() -> None:
        with llm_slot(endpoint=endpoint, limit=1, timeout=5):
            waited.set()

    threads = [threading.Thread(target=holder)]
    threads[0].start()
    assert held.wait(5)
    assert not slots_wanted_here(endpoint=endpoint, limit=1)  # the slot held, nobody waiting for another
    threads.append(threading.Thread(target=waiter))
    threads[1].start()
    deadline = time.monotonic() + 5
    while not slots_wanted_here(endpoint=endpoint, limit=1) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert slots_wanted_here(endpoint=endpoint, limit=1)
    release.set()
    for thread in threads:
        thread.join(5)
    assert waited.is_set()
    assert not slots_wanted_here(endpoint=endpoint, limit=1)
