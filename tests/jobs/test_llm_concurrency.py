"""The concurrency limit: database-row slots (any broker) and the Redis semaphore (Redis broker)."""

import os
import socket
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from assessor.jobs.llm import concurrency
from assessor.jobs.llm.concurrency import _database_slot_take, llm_slot, shared_backend
from assessor.jobs.llm.inflight import holder_name
from assessor.models.jobs import LLMSlot
from tests.services import redis_slots


def _script_runs(monkeypatch) -> list[tuple[str, str]]:
    """Each run of a Redis slot script in this process, in order: ("acquire" or "release", the thread's name)."""
    client = concurrency._redis_client()
    runs: list[tuple[str, str]] = []
    register = client.register_script

    def counted(script: str):
        registered = register(script)
        name = "acquire" if script == concurrency.ACQUIRE_SCRIPT else "release"

        def run(**kwargs):
            runs.append((name, threading.current_thread().name))
            return registered(**kwargs)

        return run

    monkeypatch.setattr(client, "register_script", counted)
    return runs


@pytest.mark.django_db
def test_database_slots_are_taken_once_and_expire():
    LLMSlot.objects.bulk_create(LLMSlot(pool="p", number=n) for n in range(2))
    first = _database_slot_take("p", 2, 60, "a")
    second = _database_slot_take("p", 2, 60, "b")
    assert {first, second} == {0, 1}
    assert _database_slot_take("p", 2, 60, "c") is None
    # A holder that died: its lease runs out and the slot is free again.
    LLMSlot.objects.filter(number=first).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert _database_slot_take("p", 2, 60, "c") == first


@pytest.mark.django_db
def test_a_database_slot_is_released_after_the_block(settings):
    settings.CELERY_BROKER_URL = "filesystem://"
    assert shared_backend() == "database"
    with llm_slot(endpoint="e", limit=1, timeout=5):
        assert LLMSlot.objects.exclude(holder="").count() == 1
    assert LLMSlot.objects.exclude(holder="").count() == 0


def test_the_redis_semaphore_holds_the_limit_across_holders(settings):
    redis_slots(settings)
    assert shared_backend() == "redis"
    endpoint = f"test-{time.time()}"
    inside = 0
    most = 0
    lock = threading.Lock()

    def hold() -> None:
        nonlocal inside, most
        with llm_slot(endpoint=endpoint, limit=3, timeout=5):
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0.05)
            with lock:
                inside -= 1

    # Two "processes": each set of threads passes slots among its own, so only Redis keeps the limit between them.
    concurrency._process_slots.clear()
    threads = [threading.Thread(target=hold) for _ in range(6)]
    for thread in threads[:3]:
        thread.start()
    time.sleep(0.01)
    concurrency._process_slots.clear()
    for thread in threads[3:]:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 3


def test_a_waiter_on_redis_is_woken_by_the_release_instead_of_asking_again(settings, monkeypatch):
    redis_slots(settings)
    runs = _script_runs(monkeypatch)
    key = f"assessor:llm-slots:test-{time.time()}"
    events: list[str] = []
    inside = threading.Event()

    def hold() -> None:
        # Two processes' holders: each calls the Redis layer itself, past the slots passed within a process.
        held = concurrency._redis_slot_hold(key, 1, 10)
        events.append("holder in")
        inside.set()
        time.sleep(0.5)
        events.append("holder out")
        held.give_back()

    def wait() -> None:
        inside.wait()
        concurrency._redis_slot_hold(key, 1, 10).give_back()
        events.append("waiter in")

    threads = [threading.Thread(target=hold, name="holder"), threading.Thread(target=wait, name="waiter")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert events == ["holder in", "holder out", "waiter in"]
    # Asked once, refused, woken by the release, asked again: polling every few milliseconds asked dozens of times.
    asks = [thread for script, thread in runs if script == "acquire"]
    assert asks.count("waiter") == 2 and asks.count("holder") == 1


def _wait_until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the threads never got there"
        time.sleep(0.005)


def test_a_slot_let_go_passes_to_a_waiting_thread_of_the_process_without_redis(settings, monkeypatch):
    redis_slots(settings)
    runs = _script_runs(monkeypatch)
    endpoint = f"test-{time.time()}"
    key = "assessor:llm-slots:" + concurrency.slot_pool(endpoint)
    monkeypatch.setattr(concurrency, "_process_slots", {})
    order: list[str] = []
    go = threading.Event()

    def call(name: str) -> None:
        with llm_slot(endpoint=endpoint, limit=1, timeout=5):
            order.append(name)
            if name == "first":
                go.wait(5)

    first = threading.Thread(target=call, args=("first",))
    first.start()
    _wait_until(lambda: order == ["first"])
    slots = concurrency._process_slots[(key, 1)]
    # The second waits on Redis for the process, the third in the process.
    second = threading.Thread(target=call, args=("second",))
    second.start()
    _wait_until(lambda: slots.fetching)
    third = threading.Thread(target=call, args=("third",))
    third.start()
    _wait_until(lambda: slots.waiting == 1)
    go.set()
    for thread in (first, second, third):
        thread.join(5)
    # The first's slot went straight to the second, which asked before the third though it waited on Redis (woken
    # there by its process's own wake list), then to the third, which gave it back to Redis.
    assert order == ["first", "second", "third"]
    # One slot from Redis (the first's; the second asked once, refused while the first held it), given back once.
    scripts = [script for script, _thread in runs]
    assert (scripts.count("acquire"), scripts.count("release")) == (2, 1)


def test_a_slot_passed_to_the_thread_waiting_on_redis_wakes_it_there_at_once(settings, monkeypatch):
    """The thread waiting on Redis for its process is woken by a token on the process's own wake list, not when its
    wait times out (which would leave the slot idle in between)."""
    redis_slots(settings)
    monkeypatch.setattr(concurrency, "WAKE_WAIT_SECONDS", 30.0)
    endpoint = f"test-{time.time()}"
    monkeypatch.setattr(concurrency, "_process_slots", {})
    held_in = threading.Event()
    go = threading.Event()
    waited: list[float] = []

    def first() -> None:
        with llm_slot(endpoint=endpoint, limit=1, timeout=5):
            held_in.set()
            go.wait(5)

    def second() -> None:
        with llm_slot(endpoint=endpoint, limit=1, timeout=5):
            waited.append(time.monotonic() - let_go[0])

    let_go: list[float] = []
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    threads[0].start()
    held_in.wait(5)
    threads[1].start()
    key = "assessor:llm-slots:" + concurrency.slot_pool(endpoint)
    _wait_until(lambda: concurrency._process_slots[(key, 1)].fetching)
    time.sleep(0.2)  # the second is blocked on Redis by now
    let_go.append(time.monotonic())
    go.set()
    for thread in threads:
        thread.join(10)
    assert waited and waited[0] < 5.0, waited


def test_a_slot_goes_back_to_redis_after_a_while_so_other_processes_get_their_turn(settings, monkeypatch):
    redis_slots(settings)
    monkeypatch.setattr(concurrency, "HANDOFF_SECONDS", 0.2)
    key = f"assessor:llm-slots:test-{time.time()}"
    # Two processes' slots of one pool, each with its own wake list.
    own = {"busy": f"{key}:wake:busy", "other": f"{key}:wake:other"}
    busy = concurrency._ProcessSlots(wake=lambda: concurrency._redis_fetcher_wake(own["busy"]))
    other = concurrency._ProcessSlots(wake=lambda: concurrency._redis_fetcher_wake(own["other"]))
    stop = time.monotonic() + 3.0
    other_in: list[float] = []

    def busy_thread() -> None:
        # Three threads of one process, one slot between them, asking again at once: a waiter is always there.
        while time.monotonic() < stop:
            held = busy.take(lambda passed: concurrency._redis_slot_hold(key, 1, 10, passed, own["busy"]))
            time.sleep(0.05)
            busy.give(held)

    def other_thread() -> None:
        time.sleep(0.3)
        asked = time.monotonic()
        held = other.take(lambda passed: concurrency._redis_slot_hold(key, 1, 10, passed, own["other"]))
        other_in.append(time.monotonic() - asked)
        other.give(held)

    threads = [threading.Thread(target=busy_thread) for _ in range(3)] + [threading.Thread(target=other_thread)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    # Within the hand-off time and a call or two of the busy process, not when it ran out of work.
    assert other_in and other_in[0] < 1.0


def test_the_thread_that_takes_a_slot_from_redis_takes_those_of_its_waiting_threads_in_one_more_round_trip(
    settings, monkeypatch
):
    """A job's first calls: every thread of a process waits for a slot at once, and all are free. One fetch from
    Redis brings the slots of all of them (as many as are free), passed on in the process; before, each thread's
    slot came with a fetch of its own, one after the other."""
    redis_slots(settings)
    monkeypatch.setattr(concurrency, "WAKE_WAIT_SECONDS", 30.0)
    key = f"assessor:llm-slots:test-{time.time()}"
    client = concurrency._redis_client()
    # The four slots are another process's while the threads line up.
    (seconds, micros) = client.time()
    client.zadd(key, {f"other-{number}": seconds + micros / 1e6 for number in range(4)})
    own = f"{key}:wake:this"
    slots = concurrency._ProcessSlots(wake=lambda: concurrency._redis_fetcher_wake(own))
    fetched: list[str] = []
    taken_more: list[int] = []

    def fetch(passed: threading.Event) -> concurrency._Held | None:
        held = concurrency._redis_slot_hold(key, 4, 10, passed, own)
        if held is not None:
            fetched.append(threading.current_thread().name)
        return held

    def more(wanted: int) -> list[concurrency._Held]:
        extra = concurrency._redis_slots_more(key, 4, 10, wanted)
        taken_more.append(len(extra))
        return extra

    all_in = threading.Barrier(5)

    def call() -> None:
        held = slots.take(fetch, more=more)
        try:
            all_in.wait(5)  # the four hold a slot at the same time
        finally:
            slots.give(held)

    threads = [threading.Thread(target=call, name=f"thread-{number}") for number in range(4)]
    for thread in threads:
        thread.start()
    _wait_until(lambda: slots.fetching and slots.waiting == 3)
    time.sleep(0.1)  # the fetcher is blocked on Redis by now
    # The other process lets go of all four at once, and wakes one waiter.
    client.pipeline(transaction=True).zrem(key, *[f"other-{number}" for number in range(4)]).lpush(
        f"{key}:wake", 1
    ).execute()
    all_in.wait(5)
    for thread in threads:
        thread.join(5)
    assert (len(fetched), taken_more) == (1, [3])
    # Given back to Redis once the calls were done: none is left held.
    assert client.zcard(key) == 0


def test_more_slots_are_taken_from_redis_only_as_many_as_are_free_and_none_when_it_fails(settings):
    redis_slots(settings)
    key = f"assessor:llm-slots:test-{time.time()}"
    first = concurrency._redis_slots_more(key, 3, 10, 2)
    second = concurrency._redis_slots_more(key, 3, 10, 5)
    assert (len(first), len(second)) == (2, 1)
    client = concurrency._redis_client()
    assert client.zcard(key) == 3
    for held in first + second:
        held.give_back()
    assert client.zcard(key) == 0
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nobody listens there
    concurrency._redis_clients.pop(settings.CELERY_BROKER_URL, None)
    try:
        assert concurrency._redis_slots_more(key, 3, 10, 2) == []
    finally:
        concurrency._redis_clients.pop(settings.CELERY_BROKER_URL, None)


def test_a_worker_starting_prepares_the_client_the_scripts_and_the_connections(settings, monkeypatch):
    redis_url = redis_slots(settings)
    import redis

    from assessor.jobs import tasks
    from assessor.jobs.llm import client as llm_client

    settings.LLM_MODEL, settings.LLM_BASE_URL, settings.LLM_API_KEY = "m", f"http://127.0.0.1:9/{time.time()}", ""
    settings.LLM_CONCURRENCY = 5
    monkeypatch.setattr(concurrency, "_redis_clients", {})
    monkeypatch.setattr(llm_client, "_clients", {})
    redis.Redis.from_url(redis_url).script_flush()
    interval = sys.getswitchinterval()
    try:
        tasks.worker_prepared()
        assert sys.getswitchinterval() == pytest.approx(0.001)
    finally:
        sys.setswitchinterval(interval)
    # The default endpoint's client is made, under the key a call looks it up by.
    assert [key[0] for key in llm_client._clients] == [settings.LLM_BASE_URL]
    # Both scripts are in Redis, so no first call loads them, and the pool holds a connection per slot.
    shared = concurrency._redis_client()
    assert shared.script_exists(shared.register_script(concurrency.ACQUIRE_SCRIPT).sha)[0]
    assert shared.script_exists(shared.register_script(concurrency.RELEASE_SCRIPT).sha)[0]
    assert len(shared.connection_pool._available_connections) >= 5


def test_a_worker_without_a_default_endpoint_or_redis_starts_all_the_same(settings, monkeypatch):
    from assessor.jobs import tasks
    from assessor.jobs.llm import client as llm_client

    settings.CELERY_BROKER_URL = "filesystem://"
    settings.LLM_MODEL = ""
    monkeypatch.setattr(llm_client, "_clients", {})
    interval = sys.getswitchinterval()
    try:
        tasks.worker_prepared()
    finally:
        sys.setswitchinterval(interval)
    assert llm_client._clients == {}


def test_a_forked_child_starts_without_its_parents_slots():
    slots = concurrency._process_slots_of("assessor:llm-slots:fork-test", 2)
    slots.fetcher = concurrency._Waiter((0, 0))  # a thread of the parent waits on the shared layer: not the child's
    try:
        child = os.fork()
        if child == 0:
            # The child ends here whatever happens: an exception would run the rest of the test session in it.
            status = 2
            try:
                status = 0 if concurrency._process_slots_of("assessor:llm-slots:fork-test", 2).fetching is False else 1
            finally:
                os._exit(status)
        _pid, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        concurrency._process_slots.pop(("assessor:llm-slots:fork-test", 2), None)


def test_slots_taken_together_go_back_to_the_shared_layer_at_different_times(monkeypatch):
    """Each slot passes between a process's threads for its own share of HANDOFF_SECONDS: a job's first calls take
    every slot at once, and slots going back all together would be taken again one at a time, idling the endpoint."""
    monkeypatch.setattr(concurrency, "HANDOFF_SECONDS", 2.0)
    before = time.monotonic()
    until = [concurrency._held(lambda: None).passes_until - before for _ in range(64)]
    after = time.monotonic() - before
    assert all(1.0 <= seconds <= 2.0 + after for seconds in until)
    # Spread over the range: 64 draws from [1, 2] s all within half a second of each other is a 1e-17 chance.
    assert max(until) - min(until) > 0.5


class _SharedLayer:
    """A stand-in for Redis or the slot rows, for the order in the process: each fetch blocks until a slot is put,
    or a slot is passed to the fetching thread in the process (`wake`, as Redis's own wake list of a process)."""

    def __init__(self) -> None:
        self.free: list[concurrency._Held] = []
        self.ready = threading.Condition()
        self.given_back = 0

    def put(self) -> None:
        with self.ready:
            self.free.append(concurrency._held(self._give_back))
            self.ready.notify_all()

    def wake(self) -> None:
        with self.ready:
            self.ready.notify_all()

    def _give_back(self) -> None:
        self.given_back += 1

    def fetch(self, passed: threading.Event) -> concurrency._Held | None:
        with self.ready:
            assert self.ready.wait_for(lambda: self.free or passed.is_set(), timeout=5), "no slot came"
            return self.free.pop() if self.free and not passed.is_set() else None

    def slots(self) -> concurrency._ProcessSlots:
        return concurrency._ProcessSlots(wake=self.wake)


def _asker(slots, layer, order: list[str], name: str, calls_after: int, go: threading.Event | None = None):
    def ask() -> None:
        held = slots.take(layer.fetch, calls_after=calls_after)
        order.append(name)
        if go is not None:
            go.wait(5)
        slots.give(held)

    thread = threading.Thread(target=ask, name=name)
    thread.start()
    return thread


def test_a_slot_let_go_goes_first_to_the_ask_with_the_most_calls_after_it_then_to_the_earliest():
    """HLF order: the first call of an item that makes two goes before the last call of another, whatever came
    first; among equals, the one that asked first. The thread waiting on the shared layer is not passed over: it
    takes its turn among the others."""
    layer = _SharedLayer()
    slots = layer.slots()
    order: list[str] = []
    go = threading.Event()
    layer.put()
    holder = _asker(slots, layer, order, "holder", 0, go)
    _wait_until(lambda: order == ["holder"])
    # Nothing left on the shared layer: the next ask waits there for the process, the others in the process.
    fetcher = _asker(slots, layer, order, "fetcher", 0)
    _wait_until(lambda: slots.fetching)
    threads = []
    asks = [("last-call-a", 0), ("first-of-two", 1), ("last-call-b", 0), ("first-of-three", 2)]
    for waiting, (name, after) in enumerate(asks, start=1):
        threads.append(_asker(slots, layer, order, name, after))
        _wait_until(lambda waiting=waiting: slots.waiting == waiting)
    go.set()
    for thread in [holder, *threads]:
        thread.join(5)
    fetcher.join(5)
    # The holder's slot went from thread to thread in the process, in order, the fetcher's ask in its turn (it
    # asked before the two last calls), and back to the shared layer once nobody waited.
    assert order == ["holder", "first-of-three", "first-of-two", "fetcher", "last-call-a", "last-call-b"]
    assert layer.given_back == 1 and not slots.fetching and layer.free == []


def test_a_slot_passed_to_the_fetcher_as_it_takes_one_from_the_shared_layer_is_not_kept_twice():
    """A slot passed to the thread waiting on the shared layer as that wait gives it one too: it keeps one, and the
    other goes on (here back to the layer: nobody else waits), so the process never holds a slot nobody uses."""
    layer = _SharedLayer()
    slots = layer.slots()
    passed_in = concurrency._held(layer._give_back)

    def fetch(passed: threading.Event) -> concurrency._Held:
        # Another thread of the process lets go of its slot while this one's wait is ending with a slot of its own.
        slots.give(passed_in)
        assert passed.is_set()
        return concurrency._held(layer._give_back)

    held = slots.take(fetch)
    assert held is passed_in
    assert layer.given_back == 1 and not slots.fetching
    slots.give(held)
    assert layer.given_back == 2


def test_a_slot_from_the_shared_layer_goes_to_a_waiter_before_the_thread_that_waited_there():
    layer = _SharedLayer()
    slots = layer.slots()
    order: list[str] = []
    go = threading.Event()
    fetcher = _asker(slots, layer, order, "last-call", 0, go)
    _wait_until(lambda: slots.fetching)
    first = _asker(slots, layer, order, "first-of-two", 1, go)
    _wait_until(lambda: slots.waiting == 1)
    layer.put()
    # The waiter gets the slot; the thread on the shared layer goes on waiting there for another.
    _wait_until(lambda: order == ["first-of-two"])
    assert slots.fetching and slots.waiting == 0
    layer.put()
    _wait_until(lambda: order == ["first-of-two", "last-call"])
    go.set()
    for thread in (fetcher, first):
        thread.join(5)
    assert not slots.fetching and layer.given_back == 2


def test_holder_names_are_never_given_twice_and_not_by_a_forked_child():
    names = [holder_name() for _ in range(1000)]
    assert len(set(names)) == 1000
    host, pid, token, _count = names[0].split(":")
    assert (host, pid) == (socket.gethostname(), str(os.getpid()))
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its first name, to the parent
        os.write(write, holder_name().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    child_host, child_pid, child_token, _ = os.read(read, 200).decode().split(":")
    os.close(read)
    # Another process, and another token: a restarted process given the same id would not take its names either.
    assert (child_pid, child_token != token) == (str(child), True)
