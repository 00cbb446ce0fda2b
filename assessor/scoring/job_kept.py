"""What a worker process keeps in memory for a job's end, read or written while the job's last items were out."""

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class JobKept(Generic[K, V]):
    """Values by job and key, for at most `jobs` jobs: the oldest is dropped first, as a job whose end another
    process finished never takes its own. Threads share it (a worker's items and its job's end)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._by_job: OrderedDict[int, dict[K, V]] = OrderedDict()  # the latest kept last
        self._lock = threading.Lock()

    def keep(self, job_id: int, key: K, value: V) -> None:
        with self._lock:
            self._by_job.setdefault(job_id, {})[key] = value
            self._by_job.move_to_end(job_id)
            while len(self._by_job) > self.jobs:
                self._by_job.popitem(last=False)

    def take(self, job_id: int, key: K) -> V | None:
        """The job's value under `key`, taken: it serves one end (a retried end does without)."""
        with self._lock:
            kept = self._by_job.get(job_id, {})
            value = kept.pop(key, None)
            if not kept:
                self._by_job.pop(job_id, None)
            return value

    def drop(self, job_id: int) -> None:
        with self._lock:
            self._by_job.pop(job_id, None)
