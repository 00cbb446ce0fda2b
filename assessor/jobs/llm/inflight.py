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

import os
import random
import socket
import time
import uuid
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from assessor.models.jobs import LLMAskInFlight

POLL_SECONDS = (0.01, 0.25)  # the first wait, and the longest


def holder_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def ask_claim(key: str, *, holder: str, lease: float) -> bool:
    """Claim the key for this holder: True when it is free, expired, or already this holder's."""
    now = timezone.now()
    until = now + timedelta(seconds=lease)
    if LLMAskInFlight.objects.filter(cache_key=key, lease_until__lt=now).update(holder=holder, lease_until=until):
        return True
    try:
        with transaction.atomic():
            LLMAskInFlight.objects.create(cache_key=key, holder=holder, lease_until=until)
    except IntegrityError:
        return False
    return True


def ask_renew(key: str, *, holder: str, lease: float) -> None:
    """Push the lease on before a request (and after a wait for a slot or a back-off)."""
    until = timezone.now() + timedelta(seconds=lease)
    LLMAskInFlight.objects.filter(cache_key=key, holder=holder).update(lease_until=until)


def ask_release(key: str, *, holder: str) -> None:
    LLMAskInFlight.objects.filter(cache_key=key, holder=holder).delete()


def ask_in_flight(key: str) -> bool:
    """Someone holds the key with a lease still running."""
    return LLMAskInFlight.objects.filter(cache_key=key, lease_until__gte=timezone.now()).exists()


def wait_pause(waited: int) -> None:
    """Sleep a little longer after each look: answers take from milliseconds to minutes."""
    shortest, longest = POLL_SECONDS
    time.sleep(min(shortest * (1.5**waited), longest) * random.uniform(0.8, 1.0))
