"""Fixtures of the verdict tests: the small collection of tests/verdicts/collection.py, and jobs worked inline."""

import pytest

from assessor.jobs.engine import job_run_sync
from tests.verdicts.collection import make_verdict_collection


@pytest.fixture
def verdict_collection(db):
    return make_verdict_collection()


@pytest.fixture
def worker_inline(monkeypatch):
    """Queued jobs are worked at once, in the test, by the engine's own item processing."""
    dispatched = []

    def queue(job):
        dispatched.append(job.pk)
        job_run_sync(job.pk)

    monkeypatch.setattr("assessor.jobs.views.job_queue", queue)
    return dispatched
