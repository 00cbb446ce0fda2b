"""A benchmark whose workers do not all say they are ready stops every one it started before it says so."""

import os
import time
import uuid
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from bench.processes import REPO, workers_start


def _processes_on(queue: str) -> list[int]:
    """The processes whose command line names the queue."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            arguments = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue  # ended meanwhile
        if queue.encode() in arguments:
            found.append(int(cmdline.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the benchmark's processes are found through /proc (Linux)")
def test_workers_that_never_say_they_are_ready_are_stopped_before_the_error():
    queue = f"bench-never-ready-{uuid.uuid4().hex[:8]}"
    # A broker nothing listens on: the worker lives on, retrying its connection, and never says it is ready.
    env = {**os.environ, "CELERY_BROKER_URL": "amqp://guest:guest@127.0.0.1:1//", "PYTHONPATH": str(REPO)}
    started = time.monotonic()

    with pytest.raises(CommandError, match="did not start within 8 s"):
        workers_start(2, queue, env, 1, ready_seconds=8)

    assert time.monotonic() - started < 60
    assert _processes_on(queue) == []
