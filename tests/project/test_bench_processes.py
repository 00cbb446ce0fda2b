"""A benchmark whose workers do not all say they are ready stops every one it started before it says so."""

import os
import secrets
import time

import pytest
from django.core.management.base import CommandError

from bench.processes import REPO, workers_start
from tests import processes

# Workers that never reach a broker: no database.
pytestmark = pytest.mark.database_independent


def test_workers_that_never_say_they_are_ready_are_stopped_before_the_error():
    # Marked below this run (tests/processes.py): found here, and stopped at the suite's end should the test fail.
    mark = f"{processes.RUN}/never-ready-{secrets.token_hex(3)}"
    # A broker nothing listens on: the worker lives on, retrying its connection, and never says it is ready.
    env = {
        **os.environ,
        processes.MARK: mark,
        "CELERY_BROKER_URL": "amqp://guest:guest@127.0.0.1:1//",
        "PYTHONPATH": str(REPO),
    }
    started = time.monotonic()

    with pytest.raises(CommandError, match="did not start within 8 s"):
        workers_start(2, f"bench-{mark.rsplit('/', 1)[1]}", env, 1, ready_seconds=8)

    assert time.monotonic() - started < 60
    assert processes.marked(mark) == []
