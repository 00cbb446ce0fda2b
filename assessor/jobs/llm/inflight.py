"""Identical asks in flight at once are sent once: the others wait for its answer.

Two items of a job (or two jobs) often ask the very same prompt at the same
moment, say a run that repeats an answer across topics. The answer cache
(assessor.jobs.llm.cache) serves such an ask only once the first has been
answered; until then each would be sent and paid. An ask therefore claims its
cache key (a row of LLMAskInFlight) before it is sent. An identical ask finding
the key claimed waits, outside any concurrency slot, until the answer is in
the cache, and takes it from there; if the holder ends without a usable answer
(or dies, and its lease runs out) the waiter claims the key and asks itself.
Rows, not a lock in the process, so that workers on other machines share it too.
"""

import itertools
import os
import random
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.db import connections, router
from django.utils import timezone

from assessor.jobs.llm.cache import cache_lookup, usable_answers_sql
from assessor.models.jobs import LLMAskInFlight
from assessor.models.rows import Write, with_writes, writes_joinable

POLL_SECONDS = (0.01, 0.25)  # the first wait, and the longest


_holders = itertools.count(1)
_process: tuple[int, str] = (0, "")  # (its id, the start of its holders' names)


def process_name() -> str:
    """A name no other process has, on any machine, at any time: the host and the process, and a token drawn once
    per process (a process id comes back after a restart)."""
    global _process
    pid = os.getpid()
    if _process[0] != pid:  # the first ask of the process, or of a forked child
        _process = (pid, f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:12]}")
    return _process[1]


def holder_name() -> str:
    """A name no other holder of a claim or a slot has, on any machine, at any time: the process's name and a count
    of its holders (drawing a token for each ask cost a system call)."""
    return f"{process_name()}:{next(_holders)}"


def _taken_over_when_expired(table: str) -> str:
    """The end of a claim's insert: a key already claimed goes to the new holder only once its lease has run out
    (its one parameter: now)."""
    return (
        "ON CONFLICT (cache_key) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until "
        f"WHERE {table}.lease_until < %s"
    )


def ask_claim(key: str, *, holder: str, lease: float) -> bool:
    """Claim the key for this holder: True when it is free or its lease has run out.

    One statement (an insert that takes over an expired row on conflict), so that a claim costs one
    round trip to the database, not a look, an update and an insert in a savepoint.
    """
    now = timezone.now()
    until = now + timedelta(seconds=lease)
    connection = connections[router.db_for_write(LLMAskInFlight)]
    table = connection.ops.quote_name(LLMAskInFlight._meta.db_table)
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (cache_key, holder, lease_until) VALUES (%s, %s, %s) "
            f"{_taken_over_when_expired(table)} RETURNING 1",
            [key, holder, adapt(until), adapt(now)],
        )
        return cursor.fetchone() is not None


@dataclass(frozen=True)
class Look:
    """What an ask found of its key: a usable answer logged under it, or whether it claimed the key."""

    answer: str | None
    claimed: bool
    # Claimed, though an identical ask held the key when the cache was looked at: it may have logged its answer
    # and let go of the key between the look and the claim, so the cache must be looked at again before sending.
    recheck: bool


def ask_look_and_claim(key: str, *, holder: str, lease: float, writes: Sequence[Write] = ()) -> Look:
    """The first usable answer logged under the key; when there is none, `ask_claim`'s claim of the key.

    On PostgreSQL one statement does both, and tells whether the key was held when it looked: an ask finding no
    answer and no holder sends with no second look (two statements a call instead of four, the log's included).
    An answer can only be logged by the key's holder, so with no holder at the look none can appear before the
    claim. Elsewhere the look and the claim are two statements, and a claim always looks again.

    `writes`: other writes to run in the same statement (PostgreSQL), such as an earlier ask's log (`with_writes`).
    """
    connection = connections[router.db_for_write(LLMAskInFlight)]
    if not writes_joinable(connection.alias):
        if writes:
            raise ValueError("writes run beside a look only on PostgreSQL")
        answer = cache_lookup(key)
        if answer is not None:
            return Look(answer=answer, claimed=False, recheck=False)
        return Look(answer=None, claimed=ask_claim(key, holder=holder, lease=lease), recheck=True)
    now = timezone.now()
    adapt = connection.ops.adapt_datetimefield_value
    claims = connection.ops.quote_name(LLMAskInFlight._meta.db_table)
    # The statement's parts share one snapshot; the claim's conflict check alone sees claims made since (and waits
    # for one being made), as ask_claim's does. The usable answers are taken by the key's index and the first
    # kept, as cache_lookup does (an ORDER BY id LIMIT 1 on the calls table may be planned as a walk of its
    # primary key).
    sql, params = with_writes(
        writes,
        f"WITH answers AS MATERIALIZED ({usable_answers_sql(connection)}), "
        f"claim AS (INSERT INTO {claims} (cache_key, holder, lease_until) "
        f"SELECT %s, %s, %s::timestamptz WHERE NOT EXISTS (SELECT 1 FROM answers) "
        f"{_taken_over_when_expired(claims)} RETURNING 1) "
        f"SELECT (SELECT raw_response FROM answers ORDER BY id LIMIT 1), EXISTS (SELECT 1 FROM claim), "
        f"EXISTS (SELECT 1 FROM {claims} WHERE cache_key = %s)",
        [key, key, holder, adapt(now + timedelta(seconds=lease)), adapt(now), key],
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return _look_read(*cursor.fetchone())


def asks_look_and_claim(
    keys: Sequence[str], *, holders: Sequence[str], lease: float, writes: Sequence[Write] = ()
) -> list[Look]:
    """`ask_look_and_claim` for several different keys at once, each claimed for its own holder, in one statement
    (PostgreSQL): an item's asks made together look and claim in one round trip instead of one each."""
    if len(set(keys)) < len(keys):
        raise ValueError("the keys looked at together must differ: one claim each")
    connection = connections[router.db_for_write(LLMAskInFlight)]
    now = timezone.now()
    adapt = connection.ops.adapt_datetimefield_value
    claims = connection.ops.quote_name(LLMAskInFlight._meta.db_table)
    # As `ask_look_and_claim`'s, for each asked key: the parts share one snapshot, and the claims' conflict check
    # alone sees claims made since.
    sql, params = with_writes(
        writes,
        "WITH asked AS (SELECT * FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS asked(cache_key, holder, n)), "
        f"answers AS MATERIALIZED ({usable_answers_sql(connection, keys='cache_key = ANY(%s::text[])')}), "
        f"claim AS (INSERT INTO {claims} (cache_key, holder, lease_until) "
        "SELECT asked.cache_key, asked.holder, %s::timestamptz FROM asked "
        "WHERE NOT EXISTS (SELECT 1 FROM answers WHERE answers.cache_key = asked.cache_key) "
        f"{_taken_over_when_expired(claims)} RETURNING cache_key) "
        "SELECT (SELECT raw_response FROM answers WHERE answers.cache_key = asked.cache_key ORDER BY id LIMIT 1), "
        "EXISTS (SELECT 1 FROM claim WHERE claim.cache_key = asked.cache_key), "
        f"EXISTS (SELECT 1 FROM {claims} held WHERE held.cache_key = asked.cache_key) FROM asked ORDER BY asked.n",
        [list(keys), list(holders), list(keys), adapt(now + timedelta(seconds=lease)), adapt(now)],
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [_look_read(*row) for row in cursor.fetchall()]


def _look_read(answer: str | None, claimed: bool, held: bool) -> Look:
    """A key's look from a look-and-claim statement's row: its first usable answer, whether this statement claimed
    it, and whether a claim was there before (one taken over: looked at again before sending)."""
    if answer is not None:
        return Look(answer=answer, claimed=False, recheck=False)
    return Look(answer=None, claimed=claimed, recheck=claimed and held)


def ask_renew(key: str, *, holder: str, lease: float) -> None:
    """Push the lease on before a request (and after a wait for a slot or a back-off)."""
    until = timezone.now() + timedelta(seconds=lease)
    LLMAskInFlight.objects.filter(cache_key=key, holder=holder).update(lease_until=until)


def ask_release(key: str, *, holder: str) -> None:
    # One plain DELETE: the rows have no relations to collect, so the ORM's transaction around it is not needed.
    connection = connections[router.db_for_write(LLMAskInFlight)]
    table = connection.ops.quote_name(LLMAskInFlight._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE cache_key = %s AND holder = %s", [key, holder])


def ask_release_statement(key: str, *, holder: str) -> Write:
    """`ask_release`'s DELETE, for a statement that runs it beside another write (the call log's row)."""
    connection = connections[router.db_for_write(LLMAskInFlight)]
    table = connection.ops.quote_name(LLMAskInFlight._meta.db_table)
    return f"DELETE FROM {table} WHERE cache_key = %s AND holder = %s", [key, holder]


def ask_in_flight(key: str) -> bool:
    """Someone holds the key with a lease still running."""
    return LLMAskInFlight.objects.filter(cache_key=key, lease_until__gte=timezone.now()).exists()


def wait_pause(waited: int) -> None:
    """Sleep a little longer after each look: answers take from milliseconds to minutes."""
    shortest, longest = POLL_SECONDS
    time.sleep(min(shortest * (1.5**waited), longest) * random.uniform(0.8, 1.0))
