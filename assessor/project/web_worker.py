"""gunicorn's gthread worker, its processes taking new connections in turn: the one holding fewest accepts.

A browser keeps its connection open, and gunicorn serves a kept-alive
connection in the process that accepted it, for as long as it stays open. With
gthread every process listens on the one socket and whichever wakes first takes
the next connection: often the process that has just answered, still awake. So
when assessors sign in one after the other, one process may hold eight of them
and another one or two, and each process gets the same share of the cores: the
crowded process's assessors wait several times longer for each save
(docs/deployment.md, "Connections taken in turn"). Here a process listens only
while it holds no more connections than any other, as a proxy's "least
connections" spreads them (nginx's `least_conn`): twenty assessors on four
processes hold five each. Nothing is refused or closed.

The counts are kept in memory the processes share, one slot per process, made
when gunicorn loads this class in its master, before it forks them. Each
process writes its count and the time at every turn of its loop (at least once
a second); a slot not written for STALE_SECONDS is left out, so that a process
that was killed, hangs or is stopping (it takes no more connections) never
holds the turn from the others.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

# How often a process out of turn looks at the counts again (seconds): a connection waits no longer in the backlog
# when the counts it was left for have changed meanwhile.
RECHECK_SECONDS = 0.05
# A slot not written for this long is not a process taking connections. gunicorn's loop turns at least once a
# second, and a stopping process writes STOPPING.
STALE_SECONDS = 3.0
STOPPING = -1.0
# More processes than this run as plain gthread (each process claims a slot as it starts).
SLOTS = 128

# Per slot: the process id holding it (0: free), the connections it holds, and when it wrote them (time.monotonic,
# the same clock in every process of the machine).
_pids = multiprocessing.RawArray("q", SLOTS)
_connections = multiprocessing.RawArray("q", SLOTS)
_written = multiprocessing.RawArray("d", SLOTS)
_claiming = multiprocessing.Lock()


def _current(slot: int, now: float) -> bool:
    return _pids[slot] != 0 and now - _written[slot] < STALE_SECONDS


def slot_claim(pid: int) -> int | None:
    """A slot for process `pid`: a free one, or one not written for STALE_SECONDS (its process gone)."""
    now = time.monotonic()
    with _claiming:
        for slot in range(SLOTS):
            if not _current(slot, now):
                _pids[slot], _connections[slot], _written[slot] = pid, 0, now
                return slot
    return None


def slot_release(slot: int, pid: int) -> None:
    with _claiming:
        if _pids[slot] == pid:
            _pids[slot], _connections[slot], _written[slot] = 0, 0, STOPPING


def fewest_connections(*, besides: int) -> int | None:
    """The fewest connections another process taking them holds; None when there is none."""
    now = time.monotonic()
    counts = [_connections[slot] for slot in range(SLOTS) if slot != besides and _current(slot, now)]
    return min(counts, default=None)


class BalancedThreadWorker(ThreadWorker):
    """gthread, listening only while this process holds no more connections than any other (its turn)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slot: int | None = None

    def init_process(self) -> None:
        self.slot = slot_claim(os.getpid())
        try:
            super().init_process()  # runs the worker's loop until it stops
        finally:
            if self.slot is not None:
                slot_release(self.slot, os.getpid())

    def in_turn(self) -> bool:
        if self.slot is None:
            return True
        fewest = fewest_connections(besides=self.slot)
        return fewest is None or self.nr_conns <= fewest

    def set_accept_enabled(self, enabled: bool) -> None:
        # gunicorn's loop asks to listen whenever it may (below its worker_connections): only in turn here.
        super().set_accept_enabled(enabled and self.in_turn())

    def accept(self, listener: Any) -> None:
        # Every listening process wakes for a new connection: the turn is looked at again as it is taken (the counts
        # may have changed since this process began to listen), and one out of turn leaves it to the others.
        if not self.in_turn():
            super().set_accept_enabled(False)
            return
        super().accept(listener)
        self._write()

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        self._write()
        if self._accepting and self.alive and not self.in_turn():
            super().set_accept_enabled(False)
        if not self._accepting and self.alive:
            timeout = min(timeout, RECHECK_SECONDS)
        super().wait_for_and_dispatch_events(timeout)

    def _write(self) -> None:
        if self.slot is not None:
            _connections[self.slot] = self.nr_conns
            # A stopping process (gunicorn's `alive` is off) takes no more connections: out of every turn.
            _written[self.slot] = time.monotonic() if self.alive else STOPPING
