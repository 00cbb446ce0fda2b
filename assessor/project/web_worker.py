"""gunicorn's gthread worker, its processes taking new connections in turn: the one holding fewest accepts.

A browser keeps its connection open, and gunicorn serves a kept-alive
connection in the process that accepted it, for as long as it stays open. With
gthread every process listens on the one socket and whichever wakes first takes
the next connection: often the process that has just answered, still awake. So
when assessors sign in one after the other, one process may hold eight of them
and another one or two, and each process gets the same share of the cores: the
crowded process's assessors wait several times longer for each save
(docs/deployment.md, "Load"). Here a process listens only while it holds no more
connections than the least-loaded one, as a proxy's "least connections" would
spread them (nginx's `least_conn`): twenty assessors on four processes hold five
each. Nothing is refused or closed; a process that is out of turn looks again
every RECHECK_SECONDS, so that a connection never waits long in the backlog if
the counts it saw have changed.

The counts are kept in memory the processes share, one slot per process,
made when gunicorn loads this class (in its master, before it forks them).
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

# How often a process out of turn looks at the counts again (seconds).
RECHECK_SECONDS = 0.05
# More processes than this run as plain gthread (each process claims a slot as it starts).
SLOTS = 128

# Per slot: the process id holding it (0: free) and how many connections that process holds.
_pids = multiprocessing.RawArray("q", SLOTS)
_connections = multiprocessing.RawArray("q", SLOTS)
_claiming = multiprocessing.Lock()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def slot_claim(pid: int) -> int | None:
    """A slot for process `pid`: a free one, or one whose process has ended (killed without giving it back)."""
    with _claiming:
        for slot in range(SLOTS):
            if _pids[slot] == 0 or not _alive(_pids[slot]):
                _pids[slot] = pid
                _connections[slot] = 0
                return slot
    return None


def slot_release(slot: int, pid: int) -> None:
    with _claiming:
        if _pids[slot] == pid:
            _pids[slot] = 0
            _connections[slot] = 0


def fewest_connections(*, besides: int) -> int | None:
    """The fewest connections any other live process holds; None when there is no other process."""
    fewest = None
    for slot in range(SLOTS):
        if slot == besides or _pids[slot] == 0:
            continue
        if fewest is None or _connections[slot] < fewest:
            fewest = _connections[slot]
    return fewest


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
        if fewest is None or self.nr_conns <= fewest:
            return True
        return not self._fewest_holders_alive(fewest)

    def _fewest_holders_alive(self, fewest: int) -> bool:
        """Whether a live process holds `fewest`; the slots of ended processes (killed) are freed on the way."""
        for slot in range(SLOTS):
            if slot != self.slot and _pids[slot] != 0 and _connections[slot] == fewest:
                if _alive(_pids[slot]):
                    return True
                slot_release(slot, _pids[slot])
        return False

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
        self._publish()

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        self._publish()
        if self._accepting and self.alive and not self.in_turn():
            super().set_accept_enabled(False)
        if not self._accepting and self.alive:
            timeout = min(timeout, RECHECK_SECONDS)
        super().wait_for_and_dispatch_events(timeout)

    def _publish(self) -> None:
        if self.slot is not None:
            _connections[self.slot] = self.nr_conns
