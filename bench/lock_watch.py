"""How long a SQLite database's write lock is held, watched from outside.

A thread tries `BEGIN IMMEDIATE` on a connection of its own every few
milliseconds, without waiting: when that fails, another connection holds the
write lock (a save would have to wait). Used by bench_import_lock and the
SQLite busy test.
"""

import sqlite3
import threading
import time
from dataclasses import dataclass, field


@dataclass
class WriteLockWatch:
    path: str
    interval: float = 0.005
    held_seconds: float = 0.0  # the total time the lock was seen held
    longest_hold: float = 0.0  # the longest time in a row: what one save would have waited
    holds: int = 0
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> "WriteLockWatch":
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _held(self, probe: sqlite3.Connection) -> bool:
        try:
            probe.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return True
        probe.rollback()
        return False

    def _watch(self) -> None:
        probe = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
        since: float | None = None
        last = time.monotonic()
        try:
            while not self._stop.is_set():
                held = self._held(probe)
                now = time.monotonic()
                self.samples += 1
                if held:
                    self.held_seconds += now - last
                    if since is None:
                        since = last
                        self.holds += 1
                    self.longest_hold = max(self.longest_hold, now - since)
                else:
                    since = None
                last = now
                time.sleep(self.interval)
        finally:
            probe.close()
