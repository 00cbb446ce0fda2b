"""The LLM concurrency limit, held across threads, processes and machines.

Each endpoint has its own slots (a pool named by a hash of the endpoint), so the limit of one never holds back
another. They are kept in a shared layer:
- when the broker is Redis, a sorted set in Redis (the members are holders, scored by the Redis server's clock,
  so machines need not agree on time); a holder that lets go pushes a token on a wake list, on which waiters
  block (BLPOP) instead of asking again every few milliseconds;
- otherwise, rows of LLMSlot in the database, taken by conditional UPDATE.
Both give each holder a lease: the slot of a worker killed in mid-request frees itself when the lease runs out
(the request timeout plus a margin), so a crash never shrinks the limit for good.

In a process, one thread at a time waits on the shared layer (the fetcher); the others wait in the process. A
thread that lets go of a slot while another of its process waits passes the slot to it directly: no round trip to
Redis or the database between one call and the next, which at tens of calls a second is the cost of a call beside
its latency. The fetcher is one of those waiters, in its turn: a slot passed to it wakes it from its wait on the
shared layer (on Redis, by a token on its process's own wake list), so that waiting there never puts an ask behind
those that came after it. A slot passes from thread to thread for up to HANDOFF_SECONDS after it was taken from the
shared layer (each slot for its own share of it, so that slots taken together do not all go back together), then
goes back there, where the waiters of other processes get their turn.

On Redis, the fetcher that takes a slot from the shared layer then takes, in one more round trip for all of them, free
slots for the threads of its process still waiting (`_redis_slots_more`), and passes them on: a job's first calls, its
threads all waiting at once, would otherwise go out one fetch after the other, each a round trip and a wait for the
interpreter lock in a busy process: the sixteenth of a 400-call job went out 51-106 ms after the first, against
19-71 ms so (bench_llm's worker traced, docs/llm.md).
"""

import hashlib
import heapq
import itertools
import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache, partial

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from assessor.jobs.llm.inflight import holder_name, process_name
from assessor.models.jobs import LLMSlot

POLL_SECONDS = (0.003, 0.015)
# How long a waiter on Redis blocks before it asks again without being woken: a slot also frees when a dead
# holder's lease runs out, which wakes nobody.
WAKE_WAIT_SECONDS = 1.0
LEASE_MARGIN_SECONDS = 30.0
# How long after it was taken from the shared layer a slot may still pass between the threads of a process. Well
# under LEASE_MARGIN_SECONDS, so that a slot's lease outlasts its last holder's request; short, so that other
# processes wait on one process's run of calls for at most about this long.
HANDOFF_SECONDS = 2.0
# Each slot passes for a share of HANDOFF_SECONDS drawn at random from this range up to the whole: slots taken
# together (a job's first calls) would otherwise all go back at once, and be taken again one at a time (one thread
# of a process waits on the shared layer), leaving the endpoint short of calls for a moment every HANDOFF_SECONDS.
HANDOFF_SPREAD = (0.5, 1.0)

logger = logging.getLogger(__name__)

_local_lock = threading.Lock()
_process_slots: dict[tuple[str, int], "_ProcessSlots"] = {}
_redis_clients: dict[str, object] = {}

# A slot for each of the holders ARGV[3], ARGV[4], ... while there are free ones (of ARGV[1], each leased for ARGV[2]
# seconds): one for a thread's own ask, one for each of its process's waiting threads (`_redis_slots_more`), in one
# round trip. Returns how many were taken (the first holders of the list).
ACQUIRE_SCRIPT = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - tonumber(ARGV[2]))
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])
local taken = 0
for i = 3, #ARGV do
  if taken >= free then break end
  redis.call('ZADD', KEYS[1], t, ARGV[i])
  taken = taken + 1
end
if taken > 0 then
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 2))
end
return taken
"""

# Let go of the slot and wake one waiter; the wake list keeps at most `limit` tokens, so tokens pushed while
# nobody waited cost a later waiter at most that many extra asks.
RELEASE_SCRIPT = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], 1)
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
redis.call('EXPIRE', KEYS[2], math.ceil(tonumber(ARGV[3]) * 2))
return 1
"""


def shared_backend() -> str:
    """"redis" when the broker is Redis, else "database"."""
    return "redis" if settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "database"


def _redis_client():
    import redis

    url = settings.CELERY_BROKER_URL
    with _local_lock:
        client = _redis_clients.get(url)
        if client is None:
            client = _redis_clients[url] = redis.Redis.from_url(url)
        return client


def shared_slots_prepare() -> None:
    """Connect to Redis and load the slot scripts now (a worker starting), when the limit is kept there: else the
    first calls of a job, all at once, would each open a connection and the first of them load the scripts."""
    if shared_backend() != "redis":
        return
    import redis

    try:
        client = _redis_client()
        client.script_load(ACQUIRE_SCRIPT)
        client.script_load(RELEASE_SCRIPT)
        # As many connections as threads may ask at once (the limit's), opened and put back in the pool.
        pool = client.connection_pool
        opened = [pool.get_connection() for _ in range(settings.LLM_CONCURRENCY)]
        for connection in opened:
            pool.release(connection)
    except redis.RedisError:
        pass  # the broker is down: the worker reports that itself, and the first call tries again


@dataclass
class _Held:
    """A slot taken from the shared layer, and how to give it back there."""

    give_back: Callable[[], None]
    passes_until: float  # time.monotonic() until which it may pass between the process's threads


def _held(give_back: Callable[[], None]) -> _Held:
    """A slot just taken from the shared layer."""
    return _Held(give_back, time.monotonic() + HANDOFF_SECONDS * random.uniform(*HANDOFF_SPREAD))


def _process_wake_key(key: str) -> str:
    """The wake list of this process's fetcher alone: pushed when a thread of the process passes it a slot."""
    return f"{key}:wake:{process_name()}"


def _redis_fetcher_wake(own_wake: str) -> None:
    """Wake a process's thread waiting on Redis (`own_wake`: its process's wake list): a slot was passed to it in
    the process. One token at most is kept (a fetcher not blocked yet finds it and asks once more); it expires soon
    after the longest wait."""
    pipe = _redis_client().pipeline(transaction=False)
    pipe.lpush(own_wake, 1).ltrim(own_wake, 0, 0).expire(own_wake, math.ceil(WAKE_WAIT_SECONDS * 2))
    pipe.execute()


def _redis_slot_hold(
    key: str, limit: int, lease: float, passed: threading.Event | None = None, own_wake: str | None = None
) -> _Held | None:
    """A slot taken from Redis, or None once `passed` is set (a slot passed to this thread in the process, which
    pushes a token on `own_wake`, its process's wake list, by default `_process_wake_key`)."""
    client = _redis_client()
    waits_on = [key + ":wake"] if passed is None else [key + ":wake", own_wake or _process_wake_key(key)]
    holder = holder_name()
    while passed is None or not passed.is_set():
        taken = _redis_taken(key, limit, lease, [holder])
        if taken:
            return taken[0]
        # A release between the failed ask and this wait left its token on the list: no wake is lost.
        client.blpop(waits_on, timeout=WAKE_WAIT_SECONDS)
    return None


def _redis_slots_more(key: str, limit: int, lease: float, wanted: int) -> list[_Held]:
    """Up to `wanted` slots taken from Redis at once, as many as are free, without waiting; none when Redis fails
    (the threads they were for wait their turn as before)."""
    import redis

    try:
        return _redis_taken(key, limit, lease, [holder_name() for _ in range(wanted)])
    except redis.RedisError as error:
        logger.warning("no more LLM slots taken at once from Redis: %s", error)
        return []


def _redis_taken(key: str, limit: int, lease: float, holders: list[str]) -> list[_Held]:
    """A slot for each of the `holders` while there are free ones (`ACQUIRE_SCRIPT`), each given back to Redis by
    its holder's release (which wakes a waiter)."""
    client = _redis_client()
    taken = int(client.register_script(ACQUIRE_SCRIPT)(keys=[key], args=[limit, lease, *holders]))
    release = client.register_script(RELEASE_SCRIPT)
    return [
        _held(partial(release, keys=[key, key + ":wake"], args=[holder, limit, lease])) for holder in holders[:taken]
    ]


def _database_slot_take(pool: str, limit: int, lease: float, holder: str) -> int | None:
    now = timezone.now()
    free = Q(holder="") | Q(lease_until__lt=now)
    numbers = list(range(limit))
    random.shuffle(numbers)
    for number in numbers:
        taken = LLMSlot.objects.filter(free, pool=pool, number=number).update(
            holder=holder, lease_until=now + timedelta(seconds=lease)
        )
        if taken:
            return number
    return None


def _database_slot_hold(pool: str, limit: int, lease: float, passed: threading.Event | None = None) -> _Held | None:
    """A slot taken from the database's rows, or None once `passed` is set (a slot passed to this thread)."""
    existing = set(LLMSlot.objects.filter(pool=pool, number__lt=limit).values_list("number", flat=True))
    missing = [LLMSlot(pool=pool, number=number) for number in range(limit) if number not in existing]
    if missing:
        LLMSlot.objects.bulk_create(missing, ignore_conflicts=True)
    holder = holder_name()
    awake = passed if passed is not None else threading.Event()
    while (number := _database_slot_take(pool, limit, lease, holder)) is None:
        if awake.wait(random.uniform(*POLL_SECONDS) * 3):
            return None

    def give_back() -> None:
        LLMSlot.objects.filter(pool=pool, number=number, holder=holder).update(holder="", lease_until=None)

    return _held(give_back)


@dataclass(order=True)
class _Waiter:
    """A thread waiting in the process for a slot; the first in order is served first."""

    # The most calls still to come after this one first, then the earliest to ask.
    order: tuple[int, int]
    woken: threading.Event = field(default_factory=threading.Event, compare=False)
    held: _Held | None = field(default=None, compare=False)  # the slot passed to it, once woken


# A wait on the shared layer for a slot: a slot taken there, or None when the event is set first (a slot was passed
# to the waiting thread in the process).
Fetch = Callable[[threading.Event], _Held | None]
# Up to this many more slots taken from the shared layer at once, without waiting (as many as are free there).
FetchMore = Callable[[int], list[_Held]]


class _ProcessSlots:
    """The slots of one pool this process holds, passed between its threads (see the module's docstring).

    A slot let go of goes to the waiter first in order, the fetcher among them: the ask with the most calls of its
    item still to come after it (`llm_slot`'s `calls_after`), then the one that asked first. So the calls of an
    item that makes several one after the other start early, and a job's last calls are mostly the last of their
    items, side by side: a run of calls left for the end would keep the job going for their length with the other
    slots idle.
    """

    def __init__(self, wake: Callable[[], None] = lambda: None) -> None:
        self.lock = threading.Lock()
        self.waiters: list[_Waiter] = []  # a heap, first in order on top; the fetcher is not in it
        self.fetcher: _Waiter | None = None  # the thread of the process waiting on the shared layer
        self._wake = wake  # wakes the fetcher from its wait on the shared layer once a slot is passed to it
        self._asks = itertools.count()

    @property
    def waiting(self) -> int:
        """Threads waiting in the process for a passed slot."""
        return len(self.waiters)

    @property
    def fetching(self) -> bool:
        return self.fetcher is not None

    def take(self, fetch: Fetch, *, calls_after: int = 0, more: FetchMore | None = None) -> _Held:
        """A slot for this thread: passed in the process, or fetched from the shared layer. `more`: with a slot
        fetched there, the slots of the threads still waiting in the process are taken too, at once, and passed on."""
        waiter = _Waiter((-calls_after, next(self._asks)))
        surplus: _Held | None = None
        wanted = 0  # more slots to take from the shared layer at once, for the process's threads still waiting
        with self.lock:
            if self.fetcher is None:
                self.fetcher = waiter
            else:
                heapq.heappush(self.waiters, waiter)
        try:
            while True:
                with self.lock:
                    fetching = self.fetcher is waiter
                fetched = fetch(waiter.woken) if fetching else None
                if not fetching:
                    waiter.woken.wait()
                with self.lock:
                    passed, waiter.held = waiter.held, None
                    waiter.woken.clear()
                    if passed is not None and fetched is not None:
                        surplus, fetched = fetched, None  # passed a slot as it took one: the one taken goes on
                    if fetched is not None and self.waiters and self.waiters[0].order < waiter.order:
                        self._pass(fetched)  # a waiter goes before this ask: this thread waits on for another
                        continue
                    held = passed if passed is not None else fetched
                    if held is not None:
                        if fetched is not None and more is not None:
                            wanted = len(self.waiters)
                        return held
                    # Woken without a slot: made the fetcher.
        finally:
            # Taken while this thread is still the fetcher, so that they go to the threads waiting in the process,
            # in their order, each woken by its event; what none of them waits for any more is given on below.
            extras = more(wanted) if wanted and more is not None else []
            with self.lock:
                while extras and self.waiters:
                    self._pass(extras.pop(0))
                if self.fetcher is waiter:
                    self._fetcher_next()
                left, waiter.held = waiter.held, None  # passed as it failed: not its to keep
            for extra in (surplus, left, *extras):
                if extra is not None:
                    self.give(extra)

    def give(self, held: _Held) -> None:
        with self.lock:
            passing = time.monotonic() < held.passes_until
            fetcher = self.fetcher if passing and self._fetcher_first() else None
            if fetcher is not None:
                fetcher.held = held
                fetcher.woken.set()
            elif passing and self.waiters:
                self._pass(held)
                return
        if fetcher is not None:
            self._wake()  # it waits on the shared layer, which the event alone does not end
        else:
            held.give_back()

    def _fetcher_first(self) -> bool:
        """Whether a slot let go of goes to the fetcher (the lock held): first in order, and none passed to it yet."""
        fetcher = self.fetcher
        return fetcher is not None and fetcher.held is None and (not self.waiters or fetcher < self.waiters[0])

    def _pass(self, held: _Held) -> None:
        """Hand the slot to the first waiter (the lock held)."""
        waiter = heapq.heappop(self.waiters)
        waiter.held = held
        waiter.woken.set()

    def _fetcher_next(self) -> None:
        """The first waiter takes over the wait on the shared layer, or nobody waits there (the lock held)."""
        self.fetcher = heapq.heappop(self.waiters) if self.waiters else None
        if self.fetcher is not None:
            self.fetcher.woken.set()


# A forked child (a prefork pool's process) starts with none of its parent's threads: their slots and waits are
# not its own.
os.register_at_fork(after_in_child=_process_slots.clear)


def _fetcher_wake(key: str) -> None:
    """Wake the process's fetcher of this pool's slots: on Redis it blocks on a wake list; on the database it polls,
    and its wait on the event set with the slot ends at once."""
    if shared_backend() == "redis":
        _redis_fetcher_wake(_process_wake_key(key))


def _process_slots_of(key: str, limit: int) -> _ProcessSlots:
    with _local_lock:
        slots = _process_slots.get((key, limit))
        if slots is None:
            slots = _process_slots[(key, limit)] = _ProcessSlots(wake=lambda: _fetcher_wake(key))
        return slots


def slots_wanted_here(*, endpoint: str, limit: int) -> bool:
    """Whether a thread of this process waits for a slot of the endpoint now: its calls use up the limit, and more
    asked at once would only wait (`LLMSession.ask_together`)."""
    with _local_lock:
        slots = _process_slots.get((_slots_key(endpoint), limit))
    return slots is not None and (slots.fetching or slots.waiting > 0)


@contextmanager
def llm_slot(*, endpoint: str, limit: int, timeout: float, calls_after: int = 0) -> Iterator[None]:
    """Hold one of `limit` slots of `endpoint` for the duration of the block. `calls_after`: how many calls the
    asking item will make after this one, one after the other (its waiting turn comes before those with fewer)."""
    pool = slot_pool(endpoint)
    key = _slots_key(endpoint)
    lease = timeout + LEASE_MARGIN_SECONDS
    fetch: Fetch
    more: FetchMore | None = None
    if shared_backend() == "redis":
        fetch = lambda passed: _redis_slot_hold(key, limit, lease, passed)  # noqa: E731
        more = partial(_redis_slots_more, key, limit, lease)
    else:
        fetch = lambda passed: _database_slot_hold(pool, limit, lease, passed)  # noqa: E731
    slots = _process_slots_of(key, limit)
    held = slots.take(fetch, calls_after=calls_after, more=more)
    try:
        yield
    finally:
        slots.give(held)


def _slots_key(endpoint: str) -> str:
    """The name of an endpoint's slots in Redis, and of its slots in this process (`_process_slots`)."""
    return "assessor:llm-slots:" + slot_pool(endpoint)


@cache
def slot_pool(endpoint: str) -> str:
    """The name of an endpoint's slots: the same in every process that configures it alike."""
    return hashlib.sha256(endpoint.encode()).hexdigest()[:16]
